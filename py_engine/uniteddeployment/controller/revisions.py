"""Revisions of a UnitedDeployment's template (ControllerRevisions).

Only `spec.template` is versioned: the revision's data is
`{"spec":{"template":{..., "$patch":"replace"}}}` and its name `<ud>-<hash>` (the
prefix cut at 223 characters), the hash being Kubernetes' history hash over the
Go encoding of the data and the collision count. A template equal to an older
revision rolls back to it (renumbered as the newest); history beyond
`revisionHistoryLimit` is deleted oldest first, never the current or updated
one. docs/uniteddeployment.md, "Revisions".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.model.ud_constants import REVISION_HASH_LABEL
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.objects import name as object_name
from py_engine.uniteddeployment.controller.construct import owner_reference
from py_engine.uniteddeployment.controller.gojson import EncodingError, go_json, history_hash
from py_engine.uniteddeployment.controller.jsonview import as_map
from py_engine.uniteddeployment.controller.ownership import ownership, reference, selected

JSON = dict[str, Any]
Obj = Mapping[str, Any]
NAME_PREFIX_LIMIT = 223


def revision_data(ud: UnitedDeployment) -> JSON:
    """The ControllerRevision's data: the template, replaced whole. Shares the template's
    values with `ud.raw` (read for the hash on every pass); `_new_revision` copies it."""
    template = {**as_map(as_map(ud.raw.get("spec")).get("template")), "$patch": "replace"}
    return {"spec": {"template": template}}


def revision_name(ud: UnitedDeployment, collision_count: int) -> tuple[str, str]:
    """(name, hash) of the current template's revision."""
    digest = history_hash(go_json(revision_data(ud)).encode(), collision_count)
    return f"{ud.name[:NAME_PREFIX_LIMIT]}-{digest}", digest


@dataclass(frozen=True)
class RevisionPlan:
    updated: str
    current: str
    collision_count: int
    create: tuple[JSON, ...] = ()
    update: tuple[JSON, ...] = ()
    delete: tuple[JSON, ...] = ()


def _number(revision: Obj) -> int:
    value = revision.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _encoded(obj: Obj) -> str | None:
    try:
        return go_json(obj.get("data"))
    except (EncodingError, RecursionError):
        return None


def history(ud: UnitedDeployment, objects: Sequence[Obj]) -> list[Obj]:
    """The UnitedDeployment's ControllerRevisions (owned, or orphans it selects), oldest first."""
    mine = [o for o in objects if o.get("kind") == "ControllerRevision" and selected_or_owned(o, ud)]
    return sorted(mine, key=lambda o: (_number(o), object_name(o)))


def selected_or_owned(obj: Obj, ud: UnitedDeployment) -> bool:
    verdict = ownership(obj, ud)
    return verdict == "owned" or (verdict == "orphan" and selected(obj, ud))


def _new_revision(ud: UnitedDeployment, name: str, digest: str, number: int) -> JSON:
    labels = {**ud.template.labels, REVISION_HASH_LABEL: digest}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": ud.namespace,
            "labels": labels,
            "ownerReferences": [owner_reference(ud)],
        },
        "data": json_copy(revision_data(ud)),
        "revision": number,
    }


def _stale(ud: UnitedDeployment, revisions: Sequence[Obj], live: set[str]) -> list[JSON]:
    exceed = len(revisions) - ud.revision_history_limit
    return [reference(r) for r in revisions[: max(exceed, 0)] if object_name(r) not in live]


def plan_revisions(ud: UnitedDeployment, objects: Sequence[Obj]) -> RevisionPlan:
    """The updated and current revision names, and the ControllerRevision writes."""
    revisions = history(ud, objects)
    stored = ud.status.get("collisionCount")
    collisions = stored if isinstance(stored, int) and not isinstance(stored, bool) and stored >= 0 else 0
    data = go_json(revision_data(ud))
    by_name = {object_name(r): r for r in revisions}
    top = max((_number(r) for r in revisions), default=0)
    stored_current = ud.status.get("currentRevision")
    equal = [r for r in revisions if _encoded(r) == data]
    create: list[JSON] = []
    update: list[JSON] = []
    if equal and equal[-1] is revisions[-1]:
        updated = object_name(equal[-1])
    elif equal:
        renumbered = copy.deepcopy(dict(equal[-1]))
        renumbered["revision"] = top + 1
        update.append(renumbered)
        updated = object_name(renumbered)
    else:
        while True:
            updated, digest = revision_name(ud, collisions)
            clash = by_name.get(updated)
            if clash is None:
                create.append(_new_revision(ud, updated, digest, top + 1))
                break
            collisions += 1
    if isinstance(stored_current, str) and stored_current and (stored_current in by_name or not revisions):
        current = stored_current
    else:
        current = updated
    delete = _stale(ud, revisions, {current, updated})
    return RevisionPlan(
        updated=updated,
        current=current,
        collision_count=collisions,
        create=tuple(create),
        update=tuple(update),
        delete=tuple(delete),
    )
