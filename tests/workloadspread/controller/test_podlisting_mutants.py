"""Which pods a sync lists for a custom kind and a Job, and how selector errors read (§1.4).

A custom kind lists the pods owned by its UID; only when none are owned does it fall back to
the `/scale` selector; its `/scale` replica count 0 lists nothing. Built-in kinds never use the
scale selector. A malformed selector is a one-line error naming which selector it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from mutant_support import (
    CLONESET_REF,
    WIDGET,
    WIDGET_REF,
    cloneset,
    spread_view,
)

from py_engine.model.workloadspread import WorkloadSpread
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.podlisting import PodList, list_pods

CLONESET = cloneset(3)
JOB_REF = {"apiVersion": "batch/v1", "kind": "Job", "name": "j"}
BAD_SELECTOR = {"matchExpressions": [{"key": "app", "operator": "Sometimes", "values": ["x"]}]}
X_SELECTOR = {"matchLabels": {"app": "x"}}


def spread(target: dict[str, str], target_filter: dict[str, Any] | None = None) -> WorkloadSpread:
    if target_filter is None:
        return spread_view(None, target)
    return spread_view(None, target, targetFilter=target_filter)


def pod(name: str, app: str, owner_uid: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app": app}}
    if owner_uid is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": owner_uid}]
    return {"metadata": meta, "spec": {}}


def names(pods: list[Any]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def test_a_custom_kind_without_owned_pods_lists_by_its_scale_selector() -> None:
    candidates = [pod("p1", "x"), pod("p2", "y"), pod("p3", "x")]
    listed = list_pods(spread(WIDGET_REF), WIDGET, candidates, scale_selector=X_SELECTOR)
    assert names(listed) == ["p1", "p3"]
    assert list_pods(spread(WIDGET_REF), WIDGET, candidates) == []


def test_a_custom_kind_with_owned_pods_ignores_its_scale_selector() -> None:
    candidates = [pod("owned", "z", "w-uid"), pod("p2", "x")]
    assert names(list_pods(spread(WIDGET_REF), WIDGET, candidates, scale_selector=X_SELECTOR)) == ["owned"]
    assert names(list_pods(spread(WIDGET_REF), WIDGET, PodList(candidates), scale_selector=X_SELECTOR)) == [
        "owned"
    ]


def test_a_built_in_kind_never_lists_by_a_scale_selector() -> None:
    candidates = [pod("owned", "z", "cs-uid"), pod("p2", "x")]
    assert names(list_pods(spread(CLONESET_REF), CLONESET, candidates, scale_selector=X_SELECTOR)) == [
        "owned"
    ]
    assert list_pods(spread(CLONESET_REF), CLONESET, [pod("p2", "x")], scale_selector=X_SELECTOR) == []


def test_a_custom_kind_scaled_to_zero_lists_nothing() -> None:
    candidates = [pod("owned", "x", "w-uid")]
    assert list_pods(spread(WIDGET_REF), WIDGET, candidates, scale_replicas=0) == []
    assert (
        list_pods(spread(WIDGET_REF), WIDGET, candidates, scale_replicas=0, scale_selector=X_SELECTOR) == []
    )
    assert names(list_pods(spread(WIDGET_REF), WIDGET, candidates, scale_replicas=2)) == ["owned"]


def test_a_pod_with_malformed_metadata_is_not_owned() -> None:
    broken: dict[str, Any] = {"metadata": None, "spec": {}}
    listed = list_pods(spread(CLONESET_REF), CLONESET, [broken, pod("owned", "x", "cs-uid")])
    assert names(listed) == ["owned"]


def test_a_malformed_scale_selector_is_named() -> None:
    with pytest.raises(ReconcileError, match=r"^scale selector: "):
        list_pods(spread(WIDGET_REF), WIDGET, [pod("p1", "x")], scale_selector=BAD_SELECTOR)


def test_a_malformed_target_filter_selector_is_named() -> None:
    ws = spread(CLONESET_REF, {"selector": BAD_SELECTOR})
    with pytest.raises(ReconcileError, match=r"^spec\.targetFilter\.selector: "):
        list_pods(ws, CLONESET, [pod("p1", "x", "cs-uid")])


def test_a_malformed_job_selector_is_named() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "uid": "j-uid"},
        "spec": {"selector": BAD_SELECTOR},
    }
    with pytest.raises(ReconcileError, match=r"^Job selector: "):
        list_pods(spread(JOB_REF), job, [pod("p1", "x", "j-uid")])
