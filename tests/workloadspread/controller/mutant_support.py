"""Objects shared by the controller's `test_*_mutants.py` files: a spread, its targets."""

from __future__ import annotations

from typing import Any

from py_engine.model.workloadspread import WorkloadSpread

MATCHED = "spreadgate.dev/matched-workloadspread"
DEPLOYMENT_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
CLONESET_REF = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs"}
WIDGET_REF = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}
WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "uid": "w-uid"},
    "spec": {},
}


def spread_object(
    subsets: list[dict[str, Any]] | None = None,
    target: dict[str, str] = DEPLOYMENT_REF,
    *,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """WorkloadSpread "ws" in "default" (generation 4); subsets default to one named "a"."""
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "default", "generation": 4, "annotations": annotations or {}},
        "spec": {"targetRef": target, "subsets": subsets or [{"name": "a"}], **spec},
    }


def spread_view(
    subsets: list[dict[str, Any]] | None = None,
    target: dict[str, str] = DEPLOYMENT_REF,
    *,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> WorkloadSpread:
    return WorkloadSpread.from_object(spread_object(subsets, target, annotations=annotations, **spec))


def cloneset(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "uid": "cs-uid"},
        "spec": {"replicas": replicas},
    }
