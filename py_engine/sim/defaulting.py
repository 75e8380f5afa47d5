"""Defaulting custom objects from a structural schema's `default` values, as kube-apiserver does.

kube-apiserver fills defaults of custom objects when it decodes a request
(create, update, patch, status) and when it reads an object from storage, after
pruning and before validation:

- a `null` in a field that is not `nullable` and has no `default` is dropped
  (as if it had not been sent); one that has a `default` takes it;
- a property missing from an object that is present gets its `default`
  (a copy), and the default is defaulted in turn below;
- nothing is created inside an absent parent: a default under `spec.strategy`
  applies only when `spec.strategy` is there (or is itself defaulted);
- a `nullable` field sent as `null` stays `null`.

Map values (`additionalProperties`) and list items that are `null` take their
schema's default when not nullable. The walk stops `MAX_DEPTH` levels down
(validation refuses deeper values).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from py_engine.sim.pruning import MAX_DEPTH

Schema = Mapping[str, Any]


def _sub(value: Any) -> Schema | None:
    return value if isinstance(value, Mapping) else None


def _non_nullable_null(value: Any, schema: Schema | None) -> bool:
    return value is None and schema is not None and schema.get("nullable") is not True


def _drop_nulls(value: Any, schema: Schema | None, depth: int) -> None:
    """Remove nulls of non-nullable fields that have no default."""
    if schema is None or depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        properties = _sub(schema.get("properties")) or {}
        extra = _sub(schema.get("additionalProperties"))
        for key in list(value):
            child = _sub(properties.get(key)) if key in properties else extra
            if child is None:
                continue
            if _non_nullable_null(value[key], child) and "default" not in child:
                del value[key]
            else:
                _drop_nulls(value[key], child, depth + 1)
    elif isinstance(value, list):
        items = _sub(schema.get("items"))
        for item in value:
            _drop_nulls(item, items, depth + 1)


def _fill(value: Any, schema: Schema | None, depth: int) -> None:
    if schema is None or depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        properties = _sub(schema.get("properties")) or {}
        for key, child in properties.items():
            if (
                isinstance(child, Mapping)
                and "default" in child
                and (key not in value or _non_nullable_null(value[key], child))
            ):
                value[key] = copy.deepcopy(child["default"])
        extra = _sub(schema.get("additionalProperties"))
        for key in list(value):
            child = _sub(properties.get(key)) if key in properties else extra
            if child is None:
                continue
            if key not in properties and _non_nullable_null(value[key], child) and "default" in child:
                value[key] = copy.deepcopy(child["default"])
            _fill(value[key], child, depth + 1)
    elif isinstance(value, list):
        items = _sub(schema.get("items"))
        for i, item in enumerate(value):
            if items is not None and _non_nullable_null(item, items) and "default" in items:
                value[i] = copy.deepcopy(items["default"])
            _fill(value[i], items, depth + 1)


def default_custom_object(obj: dict[str, Any], schema: Schema | None) -> None:
    """Drop non-nullable nulls and fill defaults in `obj`, in place."""
    if schema is None:
        return
    _drop_nulls(obj, schema, 0)
    _fill(obj, schema, 0)


def default_custom_status(obj: dict[str, Any], schema: Schema | None) -> None:
    """A status write: default only `obj["status"]` (the rest is the stored object, shared)."""
    if schema is None or not isinstance(obj.get("status"), dict):
        return
    status_schema = _sub((_sub(schema.get("properties")) or {}).get("status"))
    _drop_nulls(obj["status"], status_schema, 1)
    _fill(obj["status"], status_schema, 1)


_DECLARES: dict[int, tuple[Schema, bool]] = {}
_DECLARES_MAX = 256


def declares_defaults(schema: Schema | None) -> bool:
    """`has_defaults`, remembered per schema object (schemas are replaced, never mutated)."""
    if schema is None:
        return False
    hit = _DECLARES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_DECLARES) >= _DECLARES_MAX:
        _DECLARES.clear()
    answer = has_defaults(schema)
    _DECLARES[id(schema)] = (schema, answer)
    return answer


def has_defaults(schema: Schema | None, depth: int = 0) -> bool:
    """Whether any `default` is declared in `schema` (read-path defaulting is skipped otherwise)."""
    if schema is None or depth > MAX_DEPTH:
        return False
    if "default" in schema:
        return True
    properties = _sub(schema.get("properties")) or {}
    children = [*properties.values(), schema.get("additionalProperties"), schema.get("items")]
    return any(has_defaults(_sub(c), depth + 1) for c in children)


def needs_defaults(value: Any, schema: Schema | None, depth: int = 0) -> bool:
    """Whether `default_custom_object` would change `value` (read path: copy only then)."""
    if schema is None or depth > MAX_DEPTH:
        return False
    if isinstance(value, dict):
        properties = _sub(schema.get("properties")) or {}
        extra = _sub(schema.get("additionalProperties"))
        for key, child in properties.items():
            if isinstance(child, Mapping) and "default" in child and key not in value:
                return True
        for key, item in value.items():
            child = _sub(properties.get(key)) if key in properties else extra
            if child is None:
                continue
            if _non_nullable_null(item, child) or needs_defaults(item, child, depth + 1):
                return True
    elif isinstance(value, list):
        items = _sub(schema.get("items"))
        for item in value:
            if (
                items is not None and _non_nullable_null(item, items) and "default" in items
            ) or needs_defaults(item, items, depth + 1):
                return True
    return False
