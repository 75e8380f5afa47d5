"""Pruning unknown fields of custom resources, as kube-apiserver does.

A CustomResourceDefinition's `openAPIV3Schema` is structural: every field is
declared under `properties`, a map's values under `additionalProperties`, a
list's elements under `items`. kube-apiserver drops, on every write (create,
update, patch, status), each field of a custom object that the schema of the
version it was written at does not declare, silently: a field written in the
wrong place (a CloneSet's `partition` outside `rollingUpdate` at v1beta1) is
gone when it is read back. Below a schema with
`x-kubernetes-preserve-unknown-fields: true` unknown fields stay (the declared
ones are still pruned below); `apiVersion`, `kind` and `metadata` stay at the
root and at an `x-kubernetes-embedded-resource`. Scalars are never changed
(type errors are validation's business: `py_engine.sim.structural`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_RESOURCE_KEYS = frozenset({"apiVersion", "kind", "metadata"})
MAX_DEPTH = 200
"""Deeper values are left as they are (request bodies are bounded in size, not depth)."""


def _schema(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _preserves(schema: Mapping[str, Any] | None) -> bool:
    return schema is not None and schema.get("x-kubernetes-preserve-unknown-fields") is True


def _child_schema(schema: Mapping[str, Any], key: str) -> tuple[bool, Mapping[str, Any] | None]:
    """Whether `key` is declared, and its schema (None: declared without one)."""
    properties = _schema(schema.get("properties"))
    if properties is not None and key in properties:
        return True, _schema(properties[key])
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        return True, extra
    if extra is True:
        return True, None
    return False, None


def _prune(
    value: Any, schema: Mapping[str, Any] | None, depth: int, *, resource: bool = False, keep: bool = False
) -> None:
    """`keep`: the list holding `value` preserves unknown fields (its elements inherit that)."""
    if depth > MAX_DEPTH:
        return
    keep_unknown = keep or _preserves(schema)
    if isinstance(value, dict):
        embedded = resource or (schema is not None and schema.get("x-kubernetes-embedded-resource") is True)
        for key in list(value):
            if embedded and key in _RESOURCE_KEYS:
                continue
            declared, child = _child_schema(schema, key) if schema is not None else (False, None)
            if declared:
                if child is not None:
                    _prune(value[key], child, depth + 1)
            elif not keep_unknown:
                del value[key]
    elif isinstance(value, list):
        items = _schema(schema.get("items")) if schema is not None else None
        if items is None and keep_unknown:
            return
        for item in value:
            _prune(item, items, depth + 1, keep=keep_unknown)


def prune_custom_object(obj: dict[str, Any], schema: Mapping[str, Any] | None) -> None:
    """Drop, in place, the fields of custom object `obj` that `schema` (the version's
    `openAPIV3Schema`) does not declare. Without a schema nothing is pruned."""
    if schema is None:
        return
    _prune(obj, schema, 0, resource=True)


def prune_custom_status(obj: dict[str, Any], schema: Mapping[str, Any] | None) -> None:
    """A status write: prune only `obj["status"]` (the rest is the stored object, shared)."""
    if schema is None or "status" not in obj:
        return
    part: dict[str, Any] = {"status": obj["status"]}
    _prune(part, schema, 0, resource=True)
    if "status" in part:
        obj["status"] = part["status"]
    else:
        del obj["status"]
