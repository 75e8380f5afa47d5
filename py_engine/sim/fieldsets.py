"""Field sets in kube-apiserver's `FieldsV1` form, as plain nested dicts.

A field set names parts of an object: `f:<field>` for a map or struct field,
`k:{"name":"c"}` for an item of an associative list (its key fields as compact JSON,
sorted by name), `v:<json>` for a value of a set-typed list. Sets are kept exactly as
`metadata.managedFields[].fieldsV1` writes them, so nothing is converted per write: the
root maps path elements to nodes; a node that is itself in the set (a *member*) is `{}`
when nothing below it is, and carries `".": {}` when something is; a node without `"."`
and with children only leads to members below it (docs/server-side-apply.md).

All functions are pure and never mutate their arguments unless they say so; results share
nodes with their inputs, so a field set is never changed in place once built.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from py_engine.semantics.jsontext import compact

Fields = dict[str, Any]
"""The root of a set (path element -> node), or a node (see the module docstring)."""

Path = tuple[str, ...]

MEMBER = "."
MAX_DEPTH = 100
"""Deeper sets are not read (kube-apiserver's objects nest far less)."""


def is_member(node: Fields) -> bool:
    return not node or MEMBER in node


def as_member(children: Fields | None) -> Fields:
    """A member node with these children (a fresh dict)."""
    return {MEMBER: {}, **children} if children else {}


def valid(fields: Any) -> bool:
    """Whether `fields` (from a client) is a readable set: nested objects only, bounded depth."""
    stack = [(fields, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in node.values())
    return True


def place(fields: Fields, path: Path, node: Fields) -> None:
    """Put `node` at `path` in a set being built (in place; unions with what is there)."""
    cur = fields
    for pe in path[:-1]:
        nxt = cur.get(pe)
        if nxt is None:
            nxt = cur[pe] = {}
        elif not nxt:  # a member leaf gains a child: it stays a member
            nxt[MEMBER] = {}
        cur = nxt
    old = cur.get(path[-1])
    cur[path[-1]] = node if old is None else _union_node(old, node)


def insert(fields: Fields, path: Path) -> None:
    """Make `path` a member of a set being built (in place)."""
    place(fields, path, {})


def _node_members(node: Fields, path: Path) -> Iterator[Path]:
    if is_member(node):
        yield path
    for key in sorted(k for k in node if k != MEMBER):
        yield from _node_members(node[key], (*path, key))


def members(fields: Fields) -> Iterator[Path]:
    """Every member path, a node before the nodes below it, siblings sorted."""
    for key in sorted(fields):
        yield from _node_members(fields[key], (key,))


def node_at(fields: Fields, path: Path) -> Fields | None:
    """The node `path` reaches in `fields`, or None when it leaves the set."""
    node = fields
    for pe in path:
        child = node.get(pe)
        if child is None:
            return None
        node = child
    return node


def has_node(fields: Fields, path: Path) -> bool:
    """Whether `path` is a member of `fields` or leads to one."""
    return node_at(fields, path) is not None


def _union_node(a: Fields, b: Fields) -> Fields:
    if a is b:
        return a
    member = is_member(a) or is_member(b)
    kids = {k: v for k, v in a.items() if k != MEMBER}
    for key, other in b.items():
        if key != MEMBER:
            mine = kids.get(key)
            kids[key] = other if mine is None else _union_node(mine, other)
    return as_member(kids) if member else kids


def union(a: Fields, b: Fields) -> Fields:
    """The members of either."""
    if not b:
        return a
    if not a:
        return b
    out = dict(a)
    for key, other in b.items():
        mine = a.get(key)
        out[key] = other if mine is None else _union_node(mine, other)
    return out


def _difference_node(a: Fields, b: Fields) -> Fields | None:
    """`a` without the members of `b`: None when nothing is left, `a` itself when nothing goes."""
    drop_self = is_member(a) and is_member(b)
    kids: Fields | None = None
    for key, other in b.items():
        child = a.get(key)
        if key == MEMBER or child is None:
            continue
        rest = _difference_node(child, other)
        if rest is child:
            continue
        if kids is None:
            kids = {k: v for k, v in a.items() if k != MEMBER}
        if rest is None:
            del kids[key]
        else:
            kids[key] = rest
    if kids is None and not drop_self:
        return a
    if kids is None:
        kids = {k: v for k, v in a.items() if k != MEMBER}
    if is_member(a) and not drop_self:
        return as_member(kids)
    return kids or None


def difference(a: Fields, b: Fields) -> Fields:
    """The members of `a` that are not members of `b` (parts `b` does not reach are shared)."""
    if not b or not a:
        return a
    out: Fields | None = None
    for key, other in b.items():
        child = a.get(key)
        if child is None:
            continue
        rest = _difference_node(child, other)
        if rest is child:
            continue
        if out is None:
            out = dict(a)
        if rest is None:
            del out[key]
        else:
            out[key] = rest
    return a if out is None else out


def _intersection_node(a: Fields, b: Fields) -> Fields | None:
    kids: Fields = {}
    for key, child in a.items():
        other = b.get(key)
        if key == MEMBER or other is None:
            continue
        both = _intersection_node(child, other)
        if both is not None:
            kids[key] = both
    if is_member(a) and is_member(b):
        return as_member(kids)
    return kids or None


def intersection(a: Fields, b: Fields) -> Fields:
    """The members of both."""
    out: Fields = {}
    for key, child in a.items():
        other = b.get(key)
        if other is not None:
            both = _intersection_node(child, other)
            if both is not None:
                out[key] = both
    return out


def field_pe(name: str) -> str:
    return "f:" + name


def key_pe(key: dict[str, Any]) -> str:
    return "k:" + compact(dict(sorted(key.items())))


def value_pe(value: Any) -> str:
    return "v:" + compact(value)


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


__all__ = [
    "MAX_DEPTH",
    "MEMBER",
    "Fields",
    "Path",
    "as_member",
    "difference",
    "field_pe",
    "has_node",
    "insert",
    "intersection",
    "is_member",
    "key_pe",
    "members",
    "path_string",
    "place",
    "union",
    "valid",
    "value_pe",
]
