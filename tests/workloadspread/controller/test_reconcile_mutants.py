"""One sync's outputs at their edges: status fields, the target condition, custom kinds'
`/scale` answers, and which existing deletion costs the refined mode keeps.

The refined mode keeps a pod's existing slot only when its cost decodes to a band the spread can
produce: with N subsets, `-(N + 1) <= band <= N` and never 0 (module docstrings of `costs.py` and
`slots.py`). Spreads of at most 213 subsets use the refined mode.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mutant_support import (
    CLONESET_REF,
    MATCHED,
    WIDGET,
    WIDGET_REF,
    cloneset,
    spread_object,
)
from pod_kit import pod_object

from py_engine.semantics.events import Event
from py_engine.workloadspread.controller.reconcile import ClusterView, reconcile
from py_engine.workloadspread.controller.slots import Slot, encode
from py_engine.workloadspread.controller.target import TargetProblem

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
COST = "controller.kubernetes.io/pod-deletion-cost"
NODES = {"n1": {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}}}


def ws(target: dict[str, str], subsets: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return spread_object(subsets, target)


def pod(name: str, owner_uid: str, *, cost: int | None = None, app: str = "x") -> dict[str, Any]:
    annotations = {MATCHED: '{"name":"ws","subset":"a"}'}
    if cost is not None:
        annotations[COST] = str(cost)
    owner = {"apiVersion": "v1", "kind": "X", "name": "o", "uid": owner_uid, "controller": True}
    return pod_object(
        name, {"nodeName": "n1"}, labels={"app": app}, annotations=annotations, ownerReferences=[owner]
    )


def test_a_missing_target_is_a_condition_a_problem_and_the_observed_generation() -> None:
    result = reconcile(ws(CLONESET_REF), ClusterView(workload=None), NOW)
    message = "target CloneSet default/cs (apps.kruise.io/v1alpha1) does not exist"
    assert result.status == {
        "observedGeneration": 4,
        "subsetStatuses": [{"name": "a", "replicas": 0, "missingReplicas": -1}],  # no cap: -1
        "conditions": [
            {
                "type": "TargetNotFound",
                "status": "True",
                "reason": "WorkloadNotFound",
                "message": message,
                "lastTransitionTime": "2024-06-01T12:00:00Z",
            }
        ],
    }
    assert result.target_problem == TargetProblem("WorkloadNotFound", message)
    assert result.target_problem_new is True
    assert result.events == [Event("Warning", "TargetNotFound", f"WorkloadSpread default/ws: {message}")]


def test_a_found_target_has_no_problem_and_its_generation_is_observed() -> None:
    result = reconcile(ws(CLONESET_REF), ClusterView(workload=cloneset(2), pods=[pod("p1", "cs-uid")]), NOW)
    assert result.status["observedGeneration"] == 4
    assert "conditions" not in result.status
    assert result.target_problem is None
    assert result.target_problem_new is False


def test_a_custom_kind_counts_its_scale_replicas() -> None:
    result = reconcile(ws(WIDGET_REF), ClusterView(workload=WIDGET, scale_replicas=4), NOW)
    assert result.replicas == 4


def test_a_custom_kind_scaled_to_zero_lists_no_pods() -> None:
    view = ClusterView(workload=WIDGET, pods=[pod("p1", "w-uid")], scale_replicas=0)
    assert reconcile(ws(WIDGET_REF), view, NOW).pod_subset == {}
    view = ClusterView(workload=WIDGET, pods=[pod("p1", "w-uid")], scale_replicas=3)
    assert reconcile(ws(WIDGET_REF), view, NOW).pod_subset == {"p1": "a"}


def test_a_custom_kind_without_owned_pods_lists_by_its_scale_selector() -> None:
    view = ClusterView(
        workload=WIDGET,
        pods=[pod("p1", "other", app="x"), pod("p2", "other", app="y")],
        scale_selector={"matchLabels": {"app": "x"}},
    )
    assert reconcile(ws(WIDGET_REF), view, NOW).pod_subset == {"p1": "a"}


def cost_after(existing: int) -> str:
    """The refined cost of the one pod of a one-subset spread whose annotation holds `existing`."""
    view = ClusterView(workload=cloneset(1), pods=[pod("p1", "cs-uid", cost=existing)], nodes=NODES)
    result = reconcile(ws(CLONESET_REF), view, NOW)
    assert result.refined_costs is True
    return result.costs["p1"]


# band 1, level 1: 19_999_999 - domain; a kept slot keeps domain 7, a fresh one takes domain 0
KEPT, FRESH = str(encode(1, Slot(1, 7))), str(encode(1, Slot(1, 0)))


def test_an_existing_slot_in_a_band_the_spread_can_produce_is_kept() -> None:
    assert (KEPT, FRESH) == ("19999992", "19999999")
    assert cost_after(encode(1, Slot(1, 7))) == KEPT
    assert cost_after(encode(-1, Slot(1, 7))) == KEPT
    assert cost_after(encode(-2, Slot(1, 7))) == KEPT


def test_an_existing_slot_outside_the_spreads_bands_is_reassigned() -> None:
    assert cost_after(encode(0, Slot(1, 7))) == FRESH
    assert cost_after(encode(2, Slot(1, 7))) == FRESH
    assert cost_after(encode(-3, Slot(1, 7))) == FRESH
    assert cost_after(encode(50, Slot(1, 7))) == FRESH


def test_a_spread_of_213_subsets_still_uses_the_refined_costs() -> None:
    subsets = [{"name": "a"}, *({"name": f"s{i}"} for i in range(212))]
    view = ClusterView(workload=cloneset(1), pods=[pod("p1", "cs-uid")], nodes=NODES)
    result = reconcile(ws(CLONESET_REF, subsets), view, NOW)
    assert result.refined_costs is True
    # band 213 (the first of 213 subsets), level 1, domain 0
    assert result.costs == {"p1": str(213 * 10_000_000 + 9_999_999)}
    subsets.append({"name": "s212"})
    result = reconcile(ws(CLONESET_REF, subsets), view, NOW)
    assert result.refined_costs is False
    assert result.costs == {"p1": "21400"}
