"""Counting at admission beyond what the stored `missingReplicas` say (docs/kruise-compatibility.md,
"WorkloadSpread"):

* while the spread's generation is ahead of the status's observedGeneration (a spec
  change the controller has not synced), every subset's room is counted from the
  spec's cap and the recorded pods, integer and percentage caps alike;
* a DELETE/eviction gives a slot back only for a pod the subset counts within its cap;
* a pod admitted without a subset loses a matched annotation it arrived with.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from admission_builders import NOW, NOW_TEXT, deployment_chain, make_ctx, pod, spread, subset, versioned

from py_engine.model import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.workloadspread.admission.matched import without_matched_annotations
from py_engine.workloadspread.admission.offline import AdmissionOutcome, OfflineAdmission
from py_engine.workloadspread.admission.release import release_delete
from py_engine.workloadspread.admission.reserve import reserve_create

pytestmark = pytest.mark.timeout(30)

T = "2024-06-01T11:59:00Z"


def admit_create(
    the_pod: dict[str, Any], spreads: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> AdmissionOutcome:
    """A CREATE through the webhook's admission service, over a snapshot (nothing written)."""
    return OfflineAdmission([*objects, *spreads], NOW, generated_uid="u").create(the_pod)


def admit_delete(the_pod: dict[str, Any], spreads: list[dict[str, Any]]) -> AdmissionOutcome:
    """A DELETE through the webhook's admission service, over a snapshot (nothing written)."""
    return OfflineAdmission(spreads, NOW, generated_uid="u").delete(the_pod)


def synced(
    generation: int, observed: int, *entries: dict[str, Any], subsets: list[dict[str, Any]]
) -> dict[str, Any]:
    status = dict(versioned("abc123", *entries), observedGeneration=observed)
    ws = spread(subsets, status=status)
    ws["metadata"]["generation"] = generation
    return ws


def entries_of(ws: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = ws["status"]["versionedSubsetStatuses"]["abc123"]
    return result


def annotated(name: str, subset_name: str = "a", key: str = MATCHED_ANNOTATION) -> dict[str, Any]:
    return pod(name, annotations={key: json.dumps({"name": "ws", "subset": subset_name})})


# ------------------------------------------------------------ caps from the spec


def lowered_13_to_9(generation: int) -> dict[str, Any]:
    """Synced at cap 13 with 13 pods; since then two deletes handed slots back."""
    deleting = {"web-abc123-d1": T, "web-abc123-d2": T}
    return synced(
        generation,
        1,
        {"name": "a", "replicas": 13, "missingReplicas": 2, "deletingPods": deleting},
        {"name": "b", "replicas": 4, "missingReplicas": -1},
        subsets=[subset("a", 9), subset("b")],
    )


def test_a_lowered_integer_cap_is_counted_from_the_spec_until_the_controller_syncs() -> None:
    reservation = reserve_create(lowered_13_to_9(generation=2), pod("p1"), make_ctx(), generated_uid="u")
    assert reservation.subset == "b"  # a holds 13 - 2 = 11 of its 9 slots
    assert reservation.spread is None  # unlimited b: nothing to write


def test_a_synced_status_is_trusted_as_in_kruise() -> None:
    reservation = reserve_create(lowered_13_to_9(generation=1), pod("p1"), make_ctx(), generated_uid="u")
    assert reservation.subset == "a"  # generation == observedGeneration: the stored 2 free slots stand


def test_room_below_a_lowered_cap_is_still_given() -> None:
    ws = synced(
        2,
        1,
        {"name": "a", "replicas": 6, "missingReplicas": 7, "creatingPods": {"web-abc123-c1": T}},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a", 9), subset("b")],
    )
    reservation = reserve_create(ws, pod("p1"), make_ctx(), generated_uid="u")
    assert reservation.subset == "a" and reservation.spread is not None
    assert entries_of(reservation.spread)[0]["missingReplicas"] == 1  # 9 - (6 + 1) - this pod


def test_a_lowered_percentage_cap_is_counted_from_the_spec_too() -> None:
    ws = synced(
        2,
        1,
        {"name": "a", "replicas": 6, "missingReplicas": 1, "deletingPods": {"web-abc123-d1": T}},
        {"name": "b", "replicas": 4, "missingReplicas": -1},
        subsets=[subset("a", "40%"), subset("b")],
    )
    ctx = make_ctx(deployment_chain(replicas=10))
    assert reserve_create(ws, pod("p1"), ctx, generated_uid="u").subset == "b"  # 40% of 10 = 4 < 5 held
    ws["metadata"]["generation"] = 1
    assert reserve_create(ws, pod("p1"), ctx, generated_uid="u").subset == "b"  # percentages always follow


def test_the_spec_decides_between_capped_and_unlimited() -> None:
    # Status says "unlimited" (-1) but the spec now caps a at 3: a holds 5, full.
    newly_capped = synced(
        2,
        1,
        {"name": "a", "replicas": 5, "missingReplicas": -1},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a", 3), subset("b")],
    )
    assert reserve_create(newly_capped, pod("p1"), make_ctx(), generated_uid="u").subset == "b"
    # Status says full but the spec no longer caps a: a takes the pod, with nothing to write.
    uncapped = synced(
        2,
        1,
        {"name": "a", "replicas": 5, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a"), subset("b", 2)],
    )
    reservation = reserve_create(uncapped, pod("p1"), make_ctx(), generated_uid="u")
    assert (reservation.subset, reservation.spread) == ("a", None)


def test_deletes_beyond_a_lowered_cap_are_recorded_but_free_nothing() -> None:
    """Cap 13 -> 9 with 13 pods: deletes 1..4 bring a to 9 and free nothing; the 5th frees one."""
    ws = synced(
        2,
        1,
        {"name": "a", "replicas": 13, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a", 9), subset("b")],
    )
    freed = []
    for i in range(5):
        release = release_delete(ws, annotated(f"web-abc123-{i}"), make_ctx())
        assert release.spread is not None and release.subset == "a"
        freed.append(release.freed)
        ws = release.spread
    assert freed == [False, False, False, False, True]
    entry = entries_of(ws)[0]
    assert entry["missingReplicas"] == 1 and len(entry["deletingPods"]) == 5


def test_after_the_fresh_lookup_every_percentage_entry_is_counted_from_the_spec() -> None:
    """Spec ahead, workload not in the cache, 50% caps that read full: the API's count (4) makes
    the room of *every* percentage entry 2 minus what it holds, also of a's stale `-1` (a is
    unschedulable, so b takes the pod), in the status written."""
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    ws = synced(
        2,
        1,
        {"name": "a", "replicas": 0, "missingReplicas": -1, "conditions": unschedulable},
        {"name": "b", "replicas": 1, "missingReplicas": 0},
        subsets=[subset("a", "50%"), subset("b", "50%")],
    )
    ctx = make_ctx(fresh_lookup=make_ctx(deployment_chain(replicas=4)).lookup)  # the cache has no workload
    reservation = reserve_create(ws, pod("p1"), ctx, generated_uid="u")
    assert reservation.subset == "b" and reservation.spread is not None
    assert [e["missingReplicas"] for e in entries_of(reservation.spread)] == [2, 0]  # b: 2 - 1 - this pod


# ----------------------------------------------------- which deletes free a slot


def test_a_delete_frees_a_slot_only_for_a_pod_counted_within_the_cap() -> None:
    """Synced status: the controller counted 3 pods in a subset capped at 2 (one of them
    arrived with a forged annotation). The first delete leaves 2 = cap: nothing freed."""
    ws = synced(
        1,
        1,
        {"name": "a", "replicas": 3, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a", 2), subset("b")],
    )
    first = release_delete(ws, annotated("web-abc123-f"), make_ctx())
    assert first.spread is not None and not first.freed
    assert entries_of(first.spread)[0] == {
        "name": "a",
        "replicas": 3,
        "missingReplicas": 0,
        "deletingPods": {"web-abc123-f": NOW_TEXT},
    }
    second = release_delete(first.spread, annotated("web-abc123-g"), make_ctx())
    assert second.spread is not None and second.freed
    assert entries_of(second.spread)[0]["missingReplicas"] == 1
    outcome = admit_delete(annotated("web-abc123-f"), [ws])
    assert outcome.status_written and outcome.subset == "a" and "no slot" in outcome.message


def test_an_unlimited_subset_in_an_unsynced_spec_records_nothing() -> None:
    ws = synced(
        2,
        1,
        {"name": "a", "replicas": 5, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
        subsets=[subset("a"), subset("b", 2)],
    )
    assert release_delete(ws, annotated("web-abc123-x"), make_ctx()).spread is None


# ------------------------------------------------- the annotation is ours alone


def forged(name: str | None) -> dict[str, Any]:
    value = json.dumps({"name": "ws", "subset": "a"})
    return pod(name, annotations={MATCHED_ANNOTATION: value, KRUISE_MATCHED_ANNOTATION: value, "team": "x"})


def full() -> dict[str, Any]:
    return synced(1, 1, {"name": "a", "replicas": 2, "missingReplicas": 0}, subsets=[subset("a", 2)])


@pytest.mark.parametrize("name", ["web-abc123-forged", None])
def test_admission_without_a_subset_removes_both_matched_keys(name: str | None) -> None:
    ws = full()
    the_pod = forged(name)
    original = copy.deepcopy(the_pod)
    outcome = admit_create(the_pod, [ws], deployment_chain())
    assert the_pod == original, "the input is not mutated"
    assert outcome.allowed and outcome.subset is None and not outcome.status_written
    assert outcome.pod["metadata"]["annotations"] == {"team": "x"}
    assert sorted(outcome.patch, key=lambda op: op["path"]) == [
        {"op": "remove", "path": "/metadata/annotations/apps.kruise.io~1matched-workloadspread"},
        {"op": "remove", "path": "/metadata/annotations/spreadgate.dev~1matched-workloadspread"},
    ]
    # Deleted later, the pod names no spread: nothing is given back.
    deleted = admit_delete(outcome.pod, [ws])
    assert not deleted.status_written and deleted.spread is None


def test_a_pod_without_the_annotation_is_admitted_without_a_patch() -> None:
    outcome = admit_create(pod("web-abc123-plain"), [full()], deployment_chain())
    assert outcome.subset is None and outcome.patch == []
    assert without_matched_annotations(pod("p")) is None


def test_a_placed_pod_gets_spreadgates_key() -> None:
    ws = synced(1, 1, {"name": "a", "replicas": 1, "missingReplicas": 1}, subsets=[subset("a", 2)])
    outcome = admit_create(forged("web-abc123-ok"), [ws], deployment_chain())
    assert outcome.subset == "a" and outcome.status_written
    assert json.loads(outcome.pod["metadata"]["annotations"][MATCHED_ANNOTATION]) == {
        "name": "ws",
        "subset": "a",
    }


def test_a_pod_no_spread_governs_loses_spreadgates_key_only() -> None:
    other = spread([subset("a", 2)], target=("apps/v1", "Deployment", "other"))
    outcome = admit_create(forged("web-abc123-stray"), [other], deployment_chain())
    assert outcome.allowed and outcome.subset is None and outcome.spread is None
    assert outcome.patch == [
        {"op": "remove", "path": "/metadata/annotations/spreadgate.dev~1matched-workloadspread"}
    ]
    assert set(outcome.pod["metadata"]["annotations"]) == {KRUISE_MATCHED_ANNOTATION, "team"}


def _one_free_slot(target: str) -> dict[str, Any]:
    status = dict(
        versioned("abc123", {"name": "a", "replicas": 1, "missingReplicas": 1}), observedGeneration=1
    )
    return spread([subset("a", 2)], status=status, target=("apps/v1", "Deployment", target))


@pytest.mark.parametrize(("target", "released"), [("web", True), ("other", False)])
def test_a_delete_gives_a_slot_back_only_to_the_spread_governing_the_pods_workload(
    target: str, released: bool
) -> None:
    """An annotation added to a pod of another workload after admission (an UPDATE the webhook
    does not see) releases nothing: the pod's owner chain must lead to the named spread."""
    ws = _one_free_slot(target)
    outcome = OfflineAdmission([*deployment_chain(), ws], NOW, generated_uid="u").delete(
        annotated("web-abc123-x")
    )
    assert outcome.allowed
    assert outcome.status_written is released
    if not released:
        assert "does not govern the pod's workload" in outcome.message
