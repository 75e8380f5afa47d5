"""Server-side apply and field ownership, as kube-apiserver's structured-merge-diff does them.

Pure functions over plain objects (no I/O; the API server calls them, py_engine/sim/apiserver.py):

- `field_set(obj, schema)`: the fields an object sets (py_engine/sim/fieldsets.py form):
  scalars and atomic lists/maps are leaves, items of list-maps and values of sets are members,
  granular maps are walked (an empty one sets nothing).
- `merge(live, config, schema)`: the applied configuration laid over the live object: maps
  merged key by key, list-maps item by item (by their key fields), sets by value, anything
  atomic replaced.
- `apply(...)`: one apply by one manager: merge, then remove what this manager applied last
  time and no longer applies, unless some manager still owns it; conflicts are fields another
  manager owns that the apply would change (`ApplyConflicts`, unless forced: then the applier
  takes them over).
- `update(...)`: the ownership bookkeeping of an ordinary create/update/patch: the writer
  owns what it changed, and nobody else keeps a field it changed or removed.

Managers are `Manager` records; encoding them as `metadata.managedFields` is
py_engine/sim/managed_fields.py's job. docs/server-side-apply.md lists what is modelled.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from py_engine.semantics.jsoncopy import json_copy
from py_engine.sim import apply_schema as sch
from py_engine.sim.fieldsets import (
    MEMBER,
    Fields,
    Path,
    as_member,
    difference,
    field_pe,
    intersection,
    is_member,
    key_pe,
    members,
    node_at,
    place,
    union,
    value_pe,
)
from py_engine.sim.structural import same_json

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"
UPGRADING_MANAGER = "kubectl"
"""Only kubectl's own server-side apply upgrades from (and keeps up) client-side apply's annotation."""

_UNTRACKED_META = frozenset(
    {
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "generation",
        "managedFields",
        "resourceVersion",
    }
)
_MISSING: Any = object()


class ApplyError(ValueError):
    """The applied configuration cannot be read against its schema (duplicate or keyless list items)."""


@dataclass
class Manager:
    """One `managedFields` entry: who, how (`Apply`/`Update`), at which version and subresource."""

    name: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: Fields = field(default_factory=dict)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """kube-apiserver keys entries by these; an applier is one entry whatever version it applies at."""
        version = "" if self.operation == "Apply" else self.api_version
        return self.name, self.operation, version, self.subresource


@dataclass(frozen=True)
class Conflict:
    manager: Manager
    path: Path


class ApplyConflicts(Exception):
    """An apply would change fields other managers own (and was not forced)."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


# ------------------------------------------------------------------ scope


def tracked(obj: dict[str, Any], scope: str, *, identity: bool = False) -> dict[str, Any]:
    """The part of `obj` whose ownership is recorded (a shallow view, `obj` untouched).

    `scope`: `all` (a kind without a status subresource), `main` (the main resource of one
    with it: `status` is the status writer's) or `status` (the status subresource).
    apiVersion, kind and identity metadata (name, uid, resourceVersion, ...) are never recorded;
    `identity` keeps them (an apply's configuration owns them while it prunes, as in
    structured-merge-diff, which strips them only from what it records).
    """
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if (
            (key in ("apiVersion", "kind") and not identity)
            or (scope == "status" and key != "status")
            or (scope == "main" and key == "status")
        ):
            continue
        if key == "metadata" and isinstance(value, dict) and not identity:
            meta = {k: v for k, v in value.items() if k not in _UNTRACKED_META}
            if meta:
                out[key] = meta
            continue
        out[key] = value
    return out


# -------------------------------------------------------------- field sets


def _shape(value: Any, schema: sch.Schema | None) -> str:
    kind = type(value)
    if kind is dict or (kind is not list and isinstance(value, dict)):
        return "leaf" if schema is not None and schema.get("x-kubernetes-map-type") == "atomic" else "map"
    if kind is list or isinstance(value, list):
        listed = sch.list_type(schema)
        if listed == "map":
            return "list_map" if sch.map_keys(schema) else "leaf"
        return "set" if listed == "set" else "leaf"
    return "leaf"


def _index(items: list[Any], schema: sch.Schema | None, *, strict: bool) -> list[tuple[str, Any]]:
    """(path element, item) for each item of a list-map (or set), in order.

    `strict` (an applied configuration): a missing key field without a default or a
    duplicate item is an `ApplyError`; otherwise (stored objects) the first item wins.
    """
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()

    def add(pe: str, item: Any, duplicate: str) -> None:
        if pe not in seen:
            seen.add(pe)
            out.append((pe, item))
        elif strict:
            raise ApplyError(f"duplicate entries for key {duplicate}")

    if sch.list_type(schema) == "set":
        for value in items:
            add(value_pe(value), value, f"[={json.dumps(value)}]")
        return out
    keys = sch.map_keys(schema)
    item_schema = sch.items(schema)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            if strict:
                raise ApplyError(f"element {i}: expected an object in a list keyed by {', '.join(keys)}")
            continue
        key: dict[str, Any] = {}
        for name in keys:
            if name in item:
                key[name] = item[name]
                continue
            default = sch.key_default(item_schema, name)
            if default is None:
                if strict:
                    raise ApplyError(
                        f"element {i}: associative list with keys has an element that omits key "
                        f'field "{name}" (and doesn\'t have default value)'
                    )
                continue
            key[name] = default
        pe = key_pe(key)
        add(pe, item, pe[2:])
    return out


def _fields_of(value: Any, schema: sch.Schema | None, strict: bool) -> Fields | None:
    """The node for `value` (`{}`: a leaf, which is a member), or None when it sets nothing."""
    shape = _shape(value, schema)
    if shape == "map":
        node: Fields = {}
        for key, child in value.items():
            sub = _fields_of(child, sch.child(schema, key), strict)
            if sub is not None:
                node[field_pe(key)] = sub
        return node or None
    if shape == "list_map":
        item_schema = sch.items(schema)
        node = {}
        for pe, item in _index(value, schema, strict=strict):
            inner = _fields_of(item, item_schema, strict) if _shape(item, item_schema) == "map" else None
            node[pe] = as_member(inner)
        return node or None
    if shape == "set":
        return {pe: {} for pe, _ in _index(value, schema, strict=strict)} or None
    return {}


def field_set(obj: dict[str, Any], schema: sch.Schema | None, *, strict: bool = False) -> Fields:
    """The fields `obj` sets (the root itself is never a member)."""
    return _fields_of(obj, schema, strict) or {}


# ------------------------------------------------------------- comparison


@dataclass
class Comparison:
    added: Fields = field(default_factory=dict)
    modified: Fields = field(default_factory=dict)
    removed: Fields = field(default_factory=dict)

    @property
    def changed(self) -> Fields:
        return union(self.added, self.modified)

    def empty(self) -> bool:
        return not (self.added or self.modified or self.removed)


def _graft(into: Fields, path: Path, value: Any, schema: sch.Schema | None) -> None:
    """Insert `path` and every field `value` sets below it (into a set being built)."""
    node = _fields_of(value, schema, False)
    place(into, path, {} if _shape(value, schema) == "leaf" else as_member(node))


def _compare(lhs: Any, rhs: Any, schema: sch.Schema | None, path: Path, out: Comparison) -> None:
    if lhs is _MISSING:
        _graft(out.added, path, rhs, schema)
        return
    if rhs is _MISSING:
        _graft(out.removed, path, lhs, schema)
        return
    if lhs == rhs and same_json(lhs, rhs):
        return
    shape = _shape(rhs, schema)
    if shape != _shape(lhs, schema) or shape == "leaf":
        place(out.modified, path, {})
        return
    if shape == "map":
        for key in [*lhs, *(k for k in rhs if k not in lhs)]:
            _compare(
                lhs.get(key, _MISSING),
                rhs.get(key, _MISSING),
                sch.child(schema, key),
                (*path, field_pe(key)),
                out,
            )
        return
    left = dict(_index(lhs, schema, strict=False))
    right = dict(_index(rhs, schema, strict=False))
    item_schema = sch.items(schema)
    for pe in [*left, *(p for p in right if p not in left)]:
        _compare(left.get(pe, _MISSING), right.get(pe, _MISSING), item_schema, (*path, pe), out)


def compare(lhs: dict[str, Any], rhs: dict[str, Any], schema: sch.Schema | None) -> Comparison:
    """What changed from `lhs` to `rhs`: added, modified (leaves) and removed paths."""
    out = Comparison()
    _compare(lhs, rhs, schema, (), out)
    for fields in (out.added, out.modified, out.removed):
        meta = fields.get("f:metadata")
        if meta is not None:  # kube-apiserver never records metadata itself, only fields in it
            meta.pop(MEMBER, None)
            if not meta:
                del fields["f:metadata"]
    return out


# ------------------------------------------------------------------ merge


def _merge_items(lhs: list[Any], rhs: list[Any], schema: sch.Schema | None) -> list[Any]:
    """Items of both lists: shared ones merged, the applied order kept for the applied items,
    live-only items where they stood (structured-merge-diff's interleaving)."""
    left = _index(lhs, schema, strict=False)
    right = _index(rhs, schema, strict=True)
    lmap, rmap = dict(left), dict(right)
    shared = [pe for pe, _ in right if pe in lmap]
    item_schema = sch.items(schema)
    out: list[Any] = []
    done: set[str] = set()
    li = ri = 0
    while li < len(left) or ri < len(right):
        if li < len(left) and ri < len(right) and left[li][0] == right[ri][0]:
            pe = left[li][0]
            out.append(merge(lmap[pe], rmap[pe], item_schema))
            done.add(pe)
            shared = [p for p in shared if p != pe]
            li += 1
            ri += 1
            continue
        if li < len(left):
            pe = left[li][0]
            if pe not in rmap:
                out.append(left[li][1])
                li += 1
                continue
            if pe in done or (ri < len(right) and shared and shared[0] != pe):
                li += 1  # emitted (or to be emitted) where the applied list places it
                continue
        if ri < len(right):
            pe = right[ri][0]
            out.append(merge(lmap.get(pe, _MISSING), rmap[pe], item_schema))
            done.add(pe)
            if shared and shared[0] == pe:
                shared = shared[1:]
            ri += 1
        else:
            li += 1
    return out


def merge(live: Any, config: Any, schema: sch.Schema | None) -> Any:
    """`config` laid over `live` (neither is modified; unchanged parts of `live` are shared)."""
    if live is _MISSING or live is None:
        return json_copy(config)
    shape = _shape(config, schema)
    if shape == "leaf" or shape != _shape(live, schema):
        return json_copy(config)
    if shape == "map":
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key, _MISSING), value, sch.child(schema, key))
        return out
    return _merge_items(live, config, schema)


# ------------------------------------------------------------------ prune


def _prune(value: Any, schema: sch.Schema | None, last: Fields, owned: Fields) -> None:
    """Remove (in place) what `last` reaches and nobody in `owned` still owns, whole subtrees."""
    shape = _shape(value, schema)
    if shape == "map":
        for key in list(value):
            pe = field_pe(key)
            was = last.get(pe)
            if was is None:
                continue
            still = owned.get(pe)
            if still is None:
                del value[key]
            else:
                _prune(value[key], sch.child(schema, key), was, still)
    elif shape in ("list_map", "set"):
        item_schema = sch.items(schema)
        kept = []
        for pe, item in _index(value, schema, strict=False):
            was = last.get(pe)
            if was is not None:
                still = owned.get(pe)
                if still is None:
                    continue
                _prune(item, item_schema, was, still)
            kept.append(item)
        value[:] = kept


# ------------------------------------------------------------------ apply


def _others(managers: Iterable[Manager], identity: tuple[str, str, str, str]) -> list[Manager]:
    return [m for m in managers if m.identity != identity]


def _conflicts(others: list[Manager], changed: Fields) -> list[Conflict]:
    found: list[Conflict] = []
    for m in sorted(others, key=lambda m: (m.name, m.operation, m.api_version, m.subresource)):
        found.extend(Conflict(m, p) for p in members(intersection(m.fields, changed)))
    return found


def _last_applied_fields(live: dict[str, Any], schema: sch.Schema | None, scope: str) -> Fields:
    """The fields of kubectl client-side apply's annotation (what `kubectl apply` last sent)."""
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        last = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    if not isinstance(last, dict):
        return {}
    try:
        return field_set(tracked(last, scope), schema)
    except ApplyError:
        return {}


@dataclass
class Applied:
    """The result of one apply: the new object and its managers (`changed`: whether the object changed)."""

    obj: dict[str, Any]
    managers: list[Manager]
    changed: bool


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    schema: sch.Schema | None,
    managers: list[Manager],
    manager: str,
    api_version: str,
    *,
    subresource: str = "",
    scope: str = "all",
    force: bool = False,
    now: str | None = None,
) -> Applied:
    """Apply `config` as `manager` onto `live` (None: the object does not exist yet).

    Raises `ApplyConflicts` (not forced) or `ApplyError` (a configuration the schema cannot read).
    """
    base: dict[str, Any] = json_copy(live) if live is not None else {}
    managers = [replace(m) for m in managers]
    if live is not None and not managers:  # fields set before anyone applied: owned, not orphaned
        managers = update(
            {},
            base,
            schema,
            [],
            BEFORE_FIRST_APPLY,
            api_version,
            subresource=subresource,
            scope=scope,
            now=now,
        )
    applied = field_set(tracked(config, scope), schema, strict=True)
    me = Manager(manager, "Apply", api_version, subresource, now, applied)
    previous = next((m for m in managers if m.identity == me.identity), None)
    others = _others(managers, me.identity)
    merged = merge(json_copy(base), config, schema)  # pruned in place below: share nothing with base
    if previous is not None and previous.fields:
        owned = field_set(tracked(config, scope, identity=True), schema)
        for m in others:
            owned = union(owned, m.fields)
        _prune(merged, schema, previous.fields, owned)
    diff = compare(tracked(base, scope), tracked(merged, scope), schema)
    changed = diff.changed
    conflicts = _conflicts(others, changed)
    if conflicts and not force and manager == UPGRADING_MANAGER and live is not None:
        allowed = _last_applied_fields(live, schema, scope)
        conflicts = [c for c in conflicts if not _member(allowed, c.path)]
        force = not conflicts
    if conflicts and not force:
        raise ApplyConflicts(conflicts)
    kept = []
    for m in others:
        m.fields = difference(difference(m.fields, changed), diff.removed)
        if m.fields:
            kept.append(m)
    if previous is not None and diff.empty():
        me.time = previous.time
    if manager == UPGRADING_MANAGER and live is not None and _has_last_applied(merged):
        _set_last_applied(merged, config)
    return Applied(merged, [me, *kept], not diff.empty())


def _member(fields: Fields, path: Path) -> bool:
    node = node_at(fields, path)
    return node is not None and is_member(node)


def _has_last_applied(obj: dict[str, Any]) -> bool:
    return LAST_APPLIED in ((obj.get("metadata") or {}).get("annotations") or {})


def _set_last_applied(obj: dict[str, Any], config: dict[str, Any]) -> None:
    """Keep client-side apply's annotation in step with what kubectl applied server-side."""
    last = json_copy(config)
    annotations = (last.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
        if not annotations:
            del last["metadata"]["annotations"]
    meta = dict(obj.get("metadata") or {})
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        LAST_APPLIED: json.dumps(last, separators=(",", ":"), sort_keys=True) + "\n",
    }
    obj["metadata"] = meta


def update(
    live: dict[str, Any],
    new: dict[str, Any],
    schema: sch.Schema | None,
    managers: list[Manager],
    manager: str,
    api_version: str,
    *,
    subresource: str = "",
    scope: str = "all",
    now: str | None = None,
) -> list[Manager]:
    """Managers after `manager` wrote `new` over `live` with an ordinary create/update/patch."""
    diff = compare(tracked(live, scope), tracked(new, scope), schema)
    if diff.empty():
        return managers
    changed = diff.changed
    me = Manager(manager, "Update", api_version, subresource, now, {})
    out: list[Manager] = []
    previous: Manager | None = None
    for m in managers:
        fields = difference(difference(m.fields, changed), diff.removed)
        if m.identity == me.identity:
            previous = replace(m, fields=fields)
        elif fields:
            out.append(replace(m, fields=fields))
    if changed:
        me.fields = union(previous.fields, changed) if previous is not None else changed
        out.append(me)
    elif previous is not None and previous.fields:
        out.append(previous)
    return out


__all__ = [
    "BEFORE_FIRST_APPLY",
    "LAST_APPLIED",
    "Applied",
    "ApplyConflicts",
    "ApplyError",
    "Comparison",
    "Conflict",
    "Manager",
    "apply",
    "compare",
    "field_set",
    "merge",
    "tracked",
    "update",
]
