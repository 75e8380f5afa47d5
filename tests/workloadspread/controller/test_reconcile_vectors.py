"""The reference vectors of the controller side, through the pure reconcile core.

Every RECONCILE vector of kinds missing_replicas, reschedule and choose_subset,
every pure deletion_cost vector and the match-subset-score vectors. Run in
reference mode (`spreadgate.dev/in-subset-spread: "false"`), and again in the
refined mode, where only the in-subset refinement may differ: each cost must
stay in the reference's band, so the between-subset order is unchanged.
Vectors of the webhook (CREATE/DELETE/EVICTION/INIT_STATUSES) are the
admission core's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from reconcile_support import assert_entry, now_of, to_spreadgate, vector_run
from vectors import workloadspread_cases

from py_engine.model.constants import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.model.maxreplicas import parse_max_replicas
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.workloadspread.controller.adoption import subset_score
from py_engine.workloadspread.controller.costs import subset_bands
from py_engine.workloadspread.controller.slots import (
    BAND_WIDTH,
    assign_slots,
    domain_orders,
    encode,
    existing_cost,
)

RECONCILE = [
    case
    for kind in ("missing_replicas", "reschedule", "choose_subset")
    for case in workloadspread_cases(kind)
    if case["input"].get("operation") == "RECONCILE"
]
PURE_COSTS = [c for c in workloadspread_cases("deletion_cost") if "operation" not in c["input"]]
SCORES = [c for c in workloadspread_cases("choose_subset") if c["id"].startswith("match-subset-score")]


def test_the_vector_file_has_the_cases_this_suite_covers() -> None:
    assert len(RECONCILE) == 13
    assert len(PURE_COSTS) == 8
    assert len(SCORES) == 4


def _check(case: dict[str, Any], result: Any, *, costs: bool) -> None:
    expected = case["expected"]
    derived = expected.get("derived", {})
    statuses = expected.get("subsetStatuses") or derived.get("subsetStatuses")
    if statuses is not None:
        actual = result.status["subsetStatuses"]
        assert [e["name"] for e in actual] == [e["name"] for e in statuses]
        for got, want in zip(actual, statuses, strict=True):
            assert_entry(got, want)
    if "subsetReplicas" in expected:
        replicas = {e["name"]: e["replicas"] for e in result.status["subsetStatuses"]}
        assert replicas == expected["subsetReplicas"]
    if "requeueAfterSeconds" in expected:
        assert result.requeue_after == pytest.approx(expected["requeueAfterSeconds"])
    if "conditions" in expected:
        by_name = {e["name"]: e for e in result.status["subsetStatuses"]}
        for subset, want in expected["conditions"].items():
            got = by_name[subset].get("conditions")
            if want is None:
                assert not got, subset
            else:
                assert got and len(got) == 1
                for key, value in want.items():
                    assert got[0][key] == value, (subset, key)
    if "deletedPods" in expected:
        assert result.pods_to_delete == expected["deletedPods"]
    if "fakeBucketPods" in derived:
        fake = [name for name, subset in result.pod_subset.items() if subset is None]
        assert fake == derived["fakeBucketPods"]
    if "adoptedPodAnnotationsAdded" in derived:
        adopted = {a.pod: a.patch["metadata"]["annotations"] for a in result.adoptions}
        want = {
            pod: {
                MATCHED_ANNOTATION if k == KRUISE_MATCHED_ANNOTATION else k: v for k, v in annotations.items()
            }
            for pod, annotations in derived["adoptedPodAnnotationsAdded"].items()
        }
        assert adopted == want
    if costs:
        wanted = expected.get("podDeletionCost") or derived.get("podDeletionCost") or {}
        for pod, value in wanted.items():
            assert result.costs.get(pod) == value, pod
        if "costBuckets" in expected:
            n = len(case["input"]["workloadSpread"]["spec"]["subsets"])
            values = [int(v) for v in result.costs.values()]
            assert expected["costBuckets"] == {
                "positive(cost>0)": sum(v > 0 for v in values),
                "overflow(-100*N<=cost<=0)": sum(-100 * n <= v <= 0 for v in values),
                "fake(cost<-100*N)": sum(v < -100 * n for v in values),
            }


@pytest.mark.parametrize("flavour", ["kruise", "spreadgate"])
@pytest.mark.parametrize("case", RECONCILE, ids=lambda c: c["id"])
def test_reconcile_vector_in_reference_mode(case: dict[str, Any], flavour: str) -> None:
    result = vector_run(case, refined=False, flavour=flavour)
    assert not result.refined_costs
    _check(case, result, costs=True)


@pytest.mark.parametrize("case", RECONCILE, ids=lambda c: c["id"])
def test_reconcile_vector_in_refined_mode_keeps_bands_and_status(case: dict[str, Any]) -> None:
    reference = vector_run(case, refined=False)
    refined = vector_run(case, refined=True)
    _check(case, refined, costs=False)
    assert refined.status == reference.status
    assert refined.pods_to_delete == reference.pods_to_delete
    assert refined.costs.keys() == reference.costs.keys()
    if reference.costs:
        assert refined.refined_costs
    for pod, value in reference.costs.items():
        assert int(refined.costs[pod]) // BAND_WIDTH == int(value) // 100, pod
    pods = list(reference.costs)
    for a in pods:
        for b in pods:
            if int(reference.costs[a]) < int(reference.costs[b]):
                assert int(refined.costs[a]) < int(refined.costs[b]), (a, b)
    assert len(set(refined.costs.values())) == len(refined.costs), (
        "refined costs are distinct per spread here"
    )


def _pure_bands(case: dict[str, Any]) -> dict[str, int]:
    data = case["input"]
    count, index = data["subsetCount"], data["subsetIndex"]
    if data["reverseOrder"]:
        index = count - 1 - index
    limit = parse_max_replicas(data["subset"].get("maxReplicas"))
    cap = None if limit is None else limit.resolve(data["workloadReplicas"])
    return subset_bands(data["pods"], count, index, cap)


@pytest.mark.parametrize("case", PURE_COSTS, ids=lambda c: c["id"])
def test_pure_deletion_cost_vector(case: dict[str, Any]) -> None:
    bands = _pure_bands(case)
    for pod, value in case["expected"]["podDeletionCost"].items():
        got = bands.get(pod)
        assert (None if got is None else str(100 * got)) == value, pod


@pytest.mark.parametrize("case", PURE_COSTS, ids=lambda c: c["id"])
def test_pure_deletion_cost_vector_refined_stays_in_band(case: dict[str, Any]) -> None:
    bands = _pure_bands(case)
    pods = [p for p in case["input"]["pods"] if p["metadata"]["name"] in bands]
    count = case["input"]["subsetCount"]
    slots = assign_slots(
        domain_orders(pods, "kubernetes.io/hostname", {}),
        {p["metadata"]["name"]: existing_cost(p) for p in pods},
        lambda band: band != 0 and -(count + 1) <= band <= count,
    )
    refined = {name: encode(bands[name], slot) for name, slot in slots.items()}
    assert refined.keys() == bands.keys()
    assert len(set(refined.values())) == len(refined)
    for name, band in bands.items():
        assert refined[name] // BAND_WIDTH == band


def _subset(raw: dict[str, Any]) -> Any:
    spread = WorkloadSpread.from_object(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "subsets": [raw],
            },
        }
    )
    return spread.subsets[0]


@pytest.mark.parametrize("case", SCORES, ids=lambda c: c["id"])
def test_match_subset_score_vector(case: dict[str, Any]) -> None:
    data = case["input"]
    score = subset_score(data["pod"], data["node"], _subset(data["subset"]), data["subsetMissingReplicas"])
    assert score == case["expected"]["score"]
    assert (score >= 0) == case["expected"]["matched"]


def test_spreadgate_flavour_really_rewrites_group_and_key() -> None:
    case = copy.deepcopy(RECONCILE[0])
    mapped = to_spreadgate(case["input"])
    assert mapped["workloadSpread"]["apiVersion"] == "spreadgate.dev/v1alpha1"
    assert MATCHED_ANNOTATION in mapped["pods"][0]["metadata"]["annotations"]
    assert now_of(case).year == 2024
