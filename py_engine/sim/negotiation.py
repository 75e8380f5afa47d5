"""Metadata-only answers: `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`.

A client that needs only an object's metadata back (its new resourceVersion after a write, say)
asks for it in the Accept header, listing plain `application/json` after it so that a server
without the form still answers. The API server honours the form on every answer that carries
one object (get, create, update, patch and delete, subresources included): the answer is a
`meta.k8s.io` `PartialObjectMetadata` holding the object's `metadata` and nothing else, with
that media type as its Content-Type.

The first entry of the Accept list that the emulator can produce wins; quality values are not
weighed (clients list the forms in the order they prefer them). Lists are answered whole
(`PartialObjectMetadataList` is not emulated) and watches as before.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
_VERSIONS = ("v1", "v1beta1")


def _parameters(media_type: str) -> tuple[str, dict[str, str]]:
    kind, *rest = media_type.split(";")
    params = {}
    for item in rest:
        key, sep, value = item.partition("=")
        if sep:
            params[key.strip().lower()] = value.strip()
    return kind.strip().lower(), params


def partial_metadata_version(accept: str | None) -> str | None:
    """The `meta.k8s.io` version of the PartialObjectMetadata the Accept header prefers, or None when
    it prefers the object itself (plain JSON, any type, or no header)."""
    for entry in (accept or "").split(","):
        kind, params = _parameters(entry)
        if kind not in ("application/json", "application/*", "*/*"):
            continue
        form = params.get("as")
        if form is None:
            return None
        if (
            form == "PartialObjectMetadata"
            and params.get("g") == "meta.k8s.io"
            and params.get("v") in _VERSIONS
        ):
            return params["v"]
    return None


def content_type(version: str) -> str:
    return f"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v={version}"


def partial_metadata(obj: JSON, version: str) -> JSON:
    """`obj` as a PartialObjectMetadata (its metadata alone)."""
    metadata = obj.get("metadata")
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": metadata if isinstance(metadata, dict) else {},
    }
