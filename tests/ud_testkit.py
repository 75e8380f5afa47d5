"""Building UnitedDeployment objects and observations.

For the tests of py_engine.uniteddeployment.controller."""

from __future__ import annotations

import copy
from typing import Any

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.observed import SubsetObservation

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
