"""Building UnitedDeployment objects and observations.

For the tests of py_engine.uniteddeployment.controller."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.revisions import revision_data, revision_name

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
"""The clock of the status and schedulable tests; `NOW_TEXT` is how a condition stores it."""
NOW_TEXT = "2026-01-01T00:10:00Z"
REVISION = "spreadgate.dev/controller-revision-hash"
"""The label naming a pod's (or a workload's) revision."""

SELECTOR = {"matchLabels": {"app": "web"}}
OWNER = {
    "apiVersion": "spreadgate.dev/v1beta1",
    "kind": "UnitedDeployment",
    "name": "web",
    "uid": "ud-uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
"""The controller owner reference of `ud_object()`'s UnitedDeployment on what it creates."""


def statefulset_template() -> dict[str, Any]:
    """A UD `spec.template` of a StatefulSet selecting app=web (a fresh copy per call)."""
    return {
        "statefulSetTemplate": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}},
            },
        }
    }


def workload_template(key: str) -> dict[str, Any]:
    """A UD `spec.template` of the kind `key` names (e.g. `cloneSetTemplate`) selecting app=web."""
    return {
        key: {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "selector": copy.deepcopy(SELECTOR),
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
                },
            },
        }
    }


def ud_object(
    replicas: int | None,
    subsets: list[dict[str, Any]],
    *,
    schedule: dict[str, Any] | None = None,
    update: dict[str, Any] | None = None,
    template: dict[str, Any] | None = None,
    api_version: str = "spreadgate.dev/v1beta1",
    name: str = "web",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": copy.deepcopy(SELECTOR),
        "template": template if template is not None else workload_template("deploymentTemplate"),
        "topology": {"subsets": copy.deepcopy(subsets)},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    if schedule is not None:
        spec["topology"]["scheduleStrategy"] = copy.deepcopy(schedule)
    if update is not None:
        spec["updateStrategy"] = copy.deepcopy(update)
    return {
        "apiVersion": api_version,
        "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": "default", "uid": "ud-uid-1", "generation": 2},
        "spec": spec,
    }


def ud_from_vector(data: dict[str, Any]) -> UnitedDeployment:
    return UnitedDeployment.from_object(
        ud_object(
            data.get("replicas"),
            data["subsets"],
            schedule=data.get("scheduleStrategy"),
            update=data.get("updateStrategy"),
        )
    )


def observations(existing: dict[str, Any] | None) -> dict[str, SubsetObservation]:
    return {
        name: SubsetObservation(
            spec_replicas=int(item.get("specReplicas", 0)),
            ready_replicas=int(item.get("readyReplicas", 0)),
            reserved_pods=int(item.get("reservedPods", 0)),
            unschedulable=bool(item.get("unschedulable", False)),
            marked_unschedulable=bool(item.get("markedAsUnschedulable", False)),
        )
        for name, item in (existing or {}).items()
    }


def condition(kind: str, status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    """A condition of type `kind` as the API stores it."""
    return {"type": kind, "status": status, "lastTransitionTime": when, "reason": reason, "message": message}


def stored_revision(
    ud: UnitedDeployment, number: Any, collision: int = 0, name: str | None = None
) -> dict[str, Any]:
    """`ud`'s ControllerRevision as stored, numbered `number` (whatever JSON value the store holds),
    named `name` or by `revision_name(ud, collision)`."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name or revision_name(ud, collision)[0],
            "namespace": "default",
            "labels": {"app": "web"},
            "ownerReferences": [
                {"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1", "controller": True}
            ],
        },
        "data": revision_data(ud),
        "revision": number,
    }
