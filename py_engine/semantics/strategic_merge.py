"""Strategic merge patch on plain dicts, driven by a small merge-key schema.

Kubernetes' strategic merge patch differs from JSON merge patch only for lists:
a list declared with a *merge key* (`containers` by `name`, `ports` by
`containerPort`, ...) is merged element by element instead of being replaced,
and a list declared `set` (`metadata.finalizers`) is merged as a set of
primitives. Everything else behaves like JSON merge patch (maps merge
recursively, `null` deletes a key, lists and scalars replace).

The API server uses it for `application/strategic-merge-patch+json`, and the
admission webhook reuses `strategic_merge` to apply a WorkloadSpread subset's
`patch` to a pod, so it is a pure public function that never mutates its
inputs.

Directives handled: `$patch: replace | delete | merge` (maps and list
elements), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
`$setElementOrder/<field>` (the order is applied to the merged list).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CONTAINER_SCHEMA",
    "NODE_SCHEMA",
    "OBJECT_META_SCHEMA",
    "POD_SCHEMA",
    "POD_SPEC_SCHEMA",
    "POD_TEMPLATE_SCHEMA",
    "WORKLOAD_SCHEMA",
    "Field",
    "Schema",
    "StrategicMergeError",
    "json_merge_patch",
    "strategic_merge",
]


class StrategicMergeError(ValueError):
    """A patch that is not a valid strategic merge patch for the schema."""


@dataclass(frozen=True)
class Field:
    """How one field merges.

    `list_strategy`: `replace` (atomic, the default for lists), `merge` (list of
    maps merged by `merge_key`) or `set` (list of primitives merged as a set).
    `children` is the schema of the map value, or of each element of a list.
    """

    list_strategy: Literal["replace", "merge", "set"] = "replace"
    merge_key: str | None = None
    children: Schema | None = None


Schema = Mapping[str, Field]

_DELETE = object()  # marker: the map asked to be deleted (`$patch: delete`)

# --------------------------------------------------------------------- schemas

OWNER_REFERENCE = Field("merge", "uid")

OBJECT_META_SCHEMA: Schema = {
    "finalizers": Field("set"),
    "ownerReferences": OWNER_REFERENCE,
}

_CONDITIONS = Field("merge", "type")

CONTAINER_SCHEMA: Schema = {
    "ports": Field("merge", "containerPort"),
    "env": Field("merge", "name"),
    "volumeMounts": Field("merge", "mountPath"),
    "volumeDevices": Field("merge", "devicePath"),
    # args, command, envFrom, resizePolicy: atomic (the default)
}

POD_SPEC_SCHEMA: Schema = {
    "containers": Field("merge", "name", CONTAINER_SCHEMA),
    "initContainers": Field("merge", "name", CONTAINER_SCHEMA),
    "ephemeralContainers": Field("merge", "name", CONTAINER_SCHEMA),
    "volumes": Field("merge", "name"),
    "imagePullSecrets": Field("merge", "name"),
    "hostAliases": Field("merge", "ip"),
    "topologySpreadConstraints": Field("merge", "topologyKey"),
    "resourceClaims": Field("merge", "name"),
    "schedulingGates": Field("merge", "name"),
    # tolerations, readinessGates and affinity's nodeSelectorTerms are atomic
}

POD_STATUS_SCHEMA: Schema = {
    "conditions": _CONDITIONS,
    "podIPs": Field("merge", "ip"),
    "hostIPs": Field("merge", "ip"),
}

POD_SCHEMA: Schema = {
    "metadata": Field(children=OBJECT_META_SCHEMA),
    "spec": Field(children=POD_SPEC_SCHEMA),
    "status": Field(children=POD_STATUS_SCHEMA),
}

POD_TEMPLATE_SCHEMA: Schema = {
    "metadata": Field(children=OBJECT_META_SCHEMA),
    "spec": Field(children=POD_SPEC_SCHEMA),
}

WORKLOAD_SCHEMA: Schema = {
    "metadata": Field(children=OBJECT_META_SCHEMA),
    "spec": Field(children={"template": Field(children=POD_TEMPLATE_SCHEMA)}),
    "status": Field(children={"conditions": _CONDITIONS}),
}
"""Deployments, ReplicaSets, StatefulSets, Jobs: a pod template plus conditions."""

NODE_SCHEMA: Schema = {
    "metadata": Field(children=OBJECT_META_SCHEMA),
    "status": Field(children={"conditions": _CONDITIONS, "addresses": Field("merge", "type")}),
}

GENERIC_SCHEMA: Schema = {
    "metadata": Field(children=OBJECT_META_SCHEMA),
    "status": Field(children={"conditions": _CONDITIONS}),
}


# ----------------------------------------------------------------------- merge


def strategic_merge(
    original: Mapping[str, Any], patch: Mapping[str, Any], schema: Schema | None = POD_SCHEMA
) -> dict[str, Any]:
    """Apply a strategic merge `patch` to `original`; both are left untouched.

    `schema` describes the top-level object (default: a whole Pod). Use
    `POD_TEMPLATE_SCHEMA`-like schemas for sub-objects, or None for plain JSON
    merge-patch behaviour.
    """
    if not isinstance(patch, Mapping):
        raise StrategicMergeError(
            f"a strategic merge patch must be a JSON object, got {type(patch).__name__}"
        )
    if not isinstance(original, Mapping):
        raise StrategicMergeError("the patched document must be a JSON object")
    target = copy.deepcopy(dict(original))
    result = _merge_map(target, patch, schema, "")
    return {} if result is _DELETE else target


def _merge_map(target: dict[str, Any], patch: Mapping[str, Any], schema: Schema | None, path: str) -> Any:
    """Merge `patch` into `target` in place; returns `_DELETE` for `$patch: delete`."""
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        target.clear()
        target.update(_clean_map(patch))
        return target
    if directive not in (None, "merge"):
        raise StrategicMergeError(f"{path or '<root>'}: unknown $patch directive {directive!r}")
    orders: dict[str, list[Any]] = {}
    deletions: dict[str, list[Any]] = {}
    retain = patch.get("$retainKeys")
    for key, pval in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = _as_list(pval, f"{path}{key}")
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            deletions[key.split("/", 1)[1]] = _as_list(pval, f"{path}{key}")
            continue
        if key.startswith("$"):
            raise StrategicMergeError(f"{path}{key}: unknown directive")
        fld = schema.get(key) if schema else None
        children = fld.children if fld else None
        sub = f"{path}{key}."
        if pval is None:
            target.pop(key, None)
        elif isinstance(pval, Mapping):
            cur = target.get(key)
            if isinstance(cur, dict):
                if _merge_map(cur, pval, children, sub) is _DELETE:
                    del target[key]
            else:
                cleaned = _clean_map(pval)
                if cleaned is _DELETE:
                    target.pop(key, None)
                else:
                    target[key] = cleaned
        elif isinstance(pval, list):
            cur_list = target.get(key)
            target[key] = _merge_list(cur_list if isinstance(cur_list, list) else [], pval, fld, sub)
        else:
            target[key] = copy.deepcopy(pval)
    for key, values in deletions.items():
        if isinstance(target.get(key), list):
            target[key] = [v for v in target[key] if v not in values]
    for key, order in orders.items():
        if isinstance(target.get(key), list):
            fld = schema.get(key) if schema else None
            target[key] = _apply_order(target[key], order, fld.merge_key if fld else None)
    if retain is not None:
        keep = set(_as_list(retain, f"{path}$retainKeys"))
        for key in list(target):
            if key not in keep:
                del target[key]
    return target


def _merge_list(cur: list[Any], patch: list[Any], fld: Field | None, path: str) -> list[Any]:
    strategy = fld.list_strategy if fld else "replace"
    if strategy == "merge" and fld is not None and fld.merge_key:
        mk = fld.merge_key
        if any(isinstance(e, Mapping) and e.get("$patch") == "replace" for e in patch):
            return [_clean_map(e) for e in patch if isinstance(e, Mapping) and e.get("$patch") != "replace"]
        result = copy.deepcopy(cur)
        for el in patch:
            if not isinstance(el, Mapping):
                raise StrategicMergeError(
                    f"{path.rstrip('.')}: list elements must be objects (merge key {mk!r})"
                )
            if mk not in el:
                raise StrategicMergeError(
                    f"{path.rstrip('.')}: element does not contain declared merge key {mk!r}"
                )
            keyval = el[mk]
            idx = next((i for i, o in enumerate(result) if isinstance(o, dict) and o.get(mk) == keyval), None)
            if el.get("$patch") == "delete":
                result = [o for o in result if not (isinstance(o, dict) and o.get(mk) == keyval)]
            elif idx is not None:
                if _merge_map(result[idx], el, fld.children, path) is _DELETE:
                    del result[idx]
            else:
                cleaned = _clean_map(el)
                if cleaned is not _DELETE:
                    result.append(cleaned)
        return result
    if strategy == "set":
        result = copy.deepcopy(cur)
        for el in patch:
            if el not in result:
                result.append(copy.deepcopy(el))
        return result
    return [_clean_value(e) for e in patch if not (isinstance(e, Mapping) and e.get("$patch") == "delete")]


def _apply_order(items: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    def ident(item: Any) -> Any:
        if merge_key and isinstance(item, Mapping):
            return item.get(merge_key)
        return item

    wanted = [ident(o) for o in order]

    def rank(pair: tuple[int, Any]) -> tuple[int, int]:
        i, item = pair
        key = ident(item)
        pos = next((j for j, w in enumerate(wanted) if w == key), len(wanted))
        return (pos, i)

    return [item for _, item in sorted(enumerate(items), key=rank)]


def _clean_map(value: Mapping[str, Any]) -> Any:
    """A patch sub-document with nothing to merge into: drop directives and nulls.

    No schema is needed: with nothing to merge into, every list is taken as given (less its
    `$patch` elements), whatever its strategy; and cleaning never fails, so it needs no path."""
    if value.get("$patch") == "delete":
        return _DELETE
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key.startswith("$"):
            continue
        if v is None:
            continue
        out[key] = _clean_value(v)
    return out


def _clean_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        cleaned = _clean_map(value)
        return {} if cleaned is _DELETE else cleaned
    if isinstance(value, list):
        return [
            _clean_value(v)
            for v in value
            if not (isinstance(v, Mapping) and v.get("$patch") in ("delete", "replace"))
        ]
    return copy.deepcopy(value)


def _as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise StrategicMergeError(f"{path}: must be a list")
    return value


def json_merge_patch(original: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (`application/merge-patch+json`); inputs untouched.

    Unlike `strategic_merge`, lists always replace and `$`-keys are plain keys.
    """
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    target: dict[str, Any] = copy.deepcopy(dict(original)) if isinstance(original, Mapping) else {}
    _merge_patch_into(target, patch)
    return target


def _merge_patch_into(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, pval in patch.items():
        if pval is None:
            target.pop(key, None)
        elif isinstance(pval, Mapping):
            cur = target.get(key)
            if not isinstance(cur, dict):
                cur = {}
                target[key] = cur
            _merge_patch_into(cur, pval)
        else:
            target[key] = copy.deepcopy(pval)
