"""Field sets in kube-apiserver's `FieldsV1` form, as plain nested dicts.

A field set names parts of an object: `f:<field>` for a map or struct field,
`k:{"name":"c"}` for an item of an associative list (its key fields as compact JSON,
sorted by name), `v:<json>` for a value of a set-typed list. A node whose key
`"."` is present is itself in the set (a *member*); other nodes only lead to
members below them. Encoded as `metadata.managedFields[].fieldsV1`, a member
without children is written `{}` and a member with children carries `".": {}`
(docs/server-side-apply.md shows examples).

Internally every member carries `"."`, so `{}` only ever means "nothing here";
`decode` and `encode` convert at the edge. All functions are pure and never
mutate their arguments unless they say so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Fields = dict[str, Any]
"""A field set node: `"."` -> {} when the node is a member, other keys -> child nodes."""

Path = tuple[str, ...]

MEMBER = "."


def decode(fields_v1: Any) -> Fields:
    """The internal form of a `fieldsV1` document; anything malformed reads as empty."""
    if not isinstance(fields_v1, dict):
        return {}
    if not fields_v1:
        return {MEMBER: {}}
    out: Fields = {}
    for key, child in fields_v1.items():
        if key == MEMBER:
            out[MEMBER] = {}
        elif isinstance(key, str) and isinstance(child, dict):
            node = decode(child)
            if node:
                out[key] = node
    return out


def encode(fields: Fields) -> dict[str, Any]:
    """`fields` as kube-apiserver writes `fieldsV1` (children sorted, members as `{}`)."""
    out: dict[str, Any] = {}
    if MEMBER in fields and len(fields) > 1:
        out[MEMBER] = {}
    for key in sorted(k for k in fields if k != MEMBER):
        out[key] = encode(fields[key])
    return out


def insert(fields: Fields, path: Path) -> None:
    """Make `path` a member of `fields` (in place)."""
    node = fields
    for pe in path:
        node = node.setdefault(pe, {})
    node[MEMBER] = {}


def members(fields: Fields, prefix: Path = ()) -> Iterator[Path]:
    """Every member path, a node's own membership before its children, children sorted."""
    if MEMBER in fields:
        yield prefix
    for key in sorted(k for k in fields if k != MEMBER):
        yield from members(fields[key], (*prefix, key))


def has_node(fields: Fields, path: Path) -> bool:
    """Whether `path` is a member of `fields` or leads to one."""
    node = fields
    for pe in path:
        child = node.get(pe)
        if child is None:
            return False
        node = child
    return True


def union(a: Fields, b: Fields) -> Fields:
    out: Fields = {}
    for key in a.keys() | b.keys():
        if key == MEMBER:
            out[MEMBER] = {}
        elif key not in b:
            out[key] = a[key]
        elif key not in a:
            out[key] = b[key]
        else:
            out[key] = union(a[key], b[key])
    return out


def difference(a: Fields, b: Fields) -> Fields:
    """The members of `a` that are not members of `b`."""
    out: Fields = {}
    if MEMBER in a and MEMBER not in b:
        out[MEMBER] = {}
    for key, child in a.items():
        if key == MEMBER:
            continue
        other = b.get(key)
        rest = child if other is None else difference(child, other)
        if rest:
            out[key] = rest
    return out


def intersection(a: Fields, b: Fields) -> Fields:
    """The members of both."""
    out: Fields = {}
    if MEMBER in a and MEMBER in b:
        out[MEMBER] = {}
    for key, child in a.items():
        if key == MEMBER or key not in b:
            continue
        both = intersection(child, b[key])
        if both:
            out[key] = both
    return out


def field_pe(name: str) -> str:
    return "f:" + name


def key_pe(key: dict[str, Any]) -> str:
    return "k:" + json.dumps(dict(sorted(key.items())), separators=(",", ":"), ensure_ascii=False)


def value_pe(value: Any) -> str:
    return "v:" + json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _go_value(value: Any) -> str:
    """A key or set value as structured-merge-diff prints it in a path (strings quoted)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def path_string(path: Path) -> str:
    """`.spec.template.spec.containers[name="web"].image`: a path as kube-apiserver's
    conflict messages and causes write it."""
    out = []
    for pe in path:
        kind, _, text = pe.partition(":")
        if kind == "f":
            out.append("." + text)
        elif kind == "k":
            key = json.loads(text)
            out.append("[" + ",".join(f"{k}={_go_value(v)}" for k, v in sorted(key.items())) + "]")
        elif kind == "v":
            out.append(f"[={_go_value(json.loads(text))}]")
        elif kind == "i":
            out.append(f"[{text}]")
        else:
            out.append(pe)
    return "".join(out)


__all__ = ["MEMBER", "Fields", "Path", "decode", "difference", "encode", "field_pe", "has_node", "insert",
           "intersection", "key_pe", "members", "path_string", "union", "value_pe"]
