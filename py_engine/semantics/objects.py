"""Reading the common fields of a Kubernetes object held as a JSON dict, whatever it holds.

Objects reach Spreadgate from the API server, from files and from fuzzers, so a
field may be missing, null or of the wrong type. These accessors give the
value Kubernetes would act on, or an empty one, and never raise: one place for
what every module used to re-write as `_meta`, `_namespace` or `_group`. The one writer,
`dict_at`, is for code building an object it owns (a pod or template being mutated).
"""

from collections.abc import Mapping
from typing import Any, Final

Obj = Mapping[str, Any]
EMPTY: Mapping[str, Any] = {}
JSON_OBJECT: Final = (dict, Mapping)
"""For `isinstance`: is a JSON object. Decoded JSON objects are dicts, which a C type check
recognises first; anything else goes on to the `Mapping` ABC's check, about ten times slower
(an admission makes some sixty such checks on its hot path)."""


def meta(obj: Obj) -> Mapping[str, Any]:
    """`metadata`, or an empty mapping when it is missing or not an object."""
    value = obj.get("metadata") if isinstance(obj, JSON_OBJECT) else None
    return value if isinstance(value, JSON_OBJECT) else EMPTY


def name(obj: Obj) -> str:
    """`metadata.name`, or "" (a pod created from `generateName` has none at admission)."""
    value = meta(obj).get("name")
    return value if isinstance(value, str) else ""


def namespace(obj: Obj, default: str = "default") -> str:
    """`metadata.namespace`, or `default` when unset (files and kubectl omit it for the default)."""
    value = meta(obj).get("namespace")
    return value if isinstance(value, str) and value else default


def uid(obj: Obj) -> str:
    value = meta(obj).get("uid")
    return value if isinstance(value, str) else ""


def string_map(value: Any) -> Mapping[str, str]:
    """A labels/annotations-like map with only its string-to-string entries."""
    if not isinstance(value, JSON_OBJECT):
        return EMPTY
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def labels(obj: Obj) -> Mapping[str, str]:
    return string_map(meta(obj).get("labels"))


def annotations(obj: Obj) -> Mapping[str, str]:
    return string_map(meta(obj).get("annotations"))


def api_group(api_version: Any) -> str:
    """The group of an `apiVersion` ("apps/v1" -> "apps"; the core "v1" -> "")."""
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.rsplit("/", 1)[0]


def group_of(obj: Obj) -> str:
    """The API group of an object, from its `apiVersion`."""
    return api_group(obj.get("apiVersion") if isinstance(obj, JSON_OBJECT) else None)


def dict_at(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]`, set to a new `{}` first when it is missing, null or not an object (so a
    mutation can write below it)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value
