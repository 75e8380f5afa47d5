"""The per-version ledger, operation by operation, with whole entries written out
(py_engine/workloadspread/admission/ledger.py; docs/design-workloadspread.md §2.1.1, §2.3, §2.4;
mutation survivors of run A2, MUTATION-admission.md).

Expected values follow the reference's rules: `missingReplicas` is the room left (-1 unlimited);
a reservation records `creatingPods[key] = now` and lowers a positive room by one; a deletion
records `deletingPods[key] = now` and raises the room by one when the pod held a slot; the slots
an entry holds are replicas + creatingPods - deletingPods.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from admission_builders import NOW, NOW_TEXT, make_ctx, owner_ref, pod, spread, subset, versioned

from py_engine.model import WorkloadSpread
from py_engine.model.maxreplicas import MaxReplicas
from py_engine.workloadspread.admission.ledger import (
    SubsetLedger,
    missing_replicas,
    occupied_slots,
    version_of,
    versioned_kinds,
)

EARLIER = "2024-06-01T11:59:00Z"


def _ledger(
    subsets: list[dict[str, Any]],
    *entries: dict[str, Any],
    version: str = "abc123",
    replicas: int | None = 0,
    generation: int = 0,
    **status: Any,
) -> SubsetLedger:
    stored = versioned(version, *entries) if entries else {}
    ws = spread(subsets, status={**stored, **status})
    ws["metadata"]["generation"] = generation
    return SubsetLedger(WorkloadSpread.from_object(ws), version, lambda: replicas)


# ------------------------------------------------------------------ versions


def test_versioned_kinds_are_lower_cased_and_a_deployment_brings_its_replicasets() -> None:
    assert versioned_kinds(frozenset({"Deployment"})) == frozenset({"deployment", "replicaset"})
    assert versioned_kinds(frozenset({"ReplicaSet"})) == frozenset({"replicaset"})
    assert versioned_kinds(frozenset({"CloneSet", "Job"})) == frozenset({"cloneset", "job"})
    assert versioned_kinds(frozenset()) == frozenset()


def test_the_version_is_the_template_hash_only_for_an_enabled_owner_kind() -> None:
    replicaset_pod = pod(labels={"pod-template-hash": "abc123", "controller-revision-hash": "web-7f9"})
    clone_pod = pod(
        owner=owner_ref("apps.kruise.io/v1alpha1", "CloneSet", "web"),
        labels={"controller-revision-hash": "web-7f9"},
    )
    assert version_of(replicaset_pod, make_ctx()) == "abc123"
    assert version_of(replicaset_pod, make_ctx(versioned_kinds=frozenset({"Deployment"}))) == "abc123"
    assert version_of(replicaset_pod, make_ctx(versioned_kinds=frozenset({"cloneset"}))) == "versionIgnored"
    assert version_of(clone_pod, make_ctx()) == "versionIgnored"
    assert version_of(clone_pod, make_ctx(versioned_kinds=frozenset({"CloneSet"}))) == "7f9"
    orphan = pod()
    orphan["metadata"]["ownerReferences"] = []
    assert version_of(orphan, make_ctx(versioned_kinds=frozenset({""}))) == "abc123"
    assert version_of(orphan, make_ctx()) == "versionIgnored"


# ------------------------------------------------------------------ counting


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (-1, -1), (0, 0), (True, 0), (2.5, 0), ("3", 0), (None, 0)],
)
def test_missing_replicas_reads_only_whole_numbers(value: Any, expected: int) -> None:
    assert missing_replicas({"missingReplicas": value}) == expected


def test_occupied_slots_are_replicas_plus_creating_minus_deleting() -> None:
    entry = {
        "replicas": 2,
        "creatingPods": {"p1": EARLIER, "p2": EARLIER},
        "deletingPods": {"p0": EARLIER},
    }
    assert occupied_slots(entry) == 3
    assert occupied_slots({"replicas": 4, "creatingPods": ["p1"], "deletingPods": "p0"}) == 4
    assert occupied_slots({"replicas": True, "creatingPods": {"p1": EARLIER}}) == 1
    assert occupied_slots({"deletingPods": {"p0": EARLIER}}) == -1


# ------------------------------------------------------------------- opening


def test_stored_entries_keep_named_objects_only_and_are_copies() -> None:
    stored = {"name": "a", "replicas": 1, "missingReplicas": 1}
    ws = spread(
        [subset("a", 2), subset("b", 2)],
        status={"versionedSubsetStatuses": {"abc123": [stored, "junk", {"name": 7}, {"replicas": 1}]}},
    )
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "abc123", lambda: 0)
    assert ledger.entries == [stored] and ledger.entries[0] is not stored
    assert not ledger.initialised
    ledger.entries[0]["missingReplicas"] = 0
    assert stored["missingReplicas"] == 1


@pytest.mark.parametrize(
    "status",
    [
        {"versionedSubsetStatuses": ["abc123"]},
        {"versionedSubsetStatuses": {"abc123": {"name": "a"}}},
        {"versionedSubsetStatuses": {"other": [{"name": "a", "missingReplicas": 0}]}},
    ],
    ids=["map not an object", "entries not a list", "other version only"],
)
def test_a_version_without_usable_entries_is_opened_from_the_spec(status: dict[str, Any]) -> None:
    ws = spread([subset("a", "50%"), subset("b")], status=status)
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "abc123", lambda: 3)
    assert ledger.initialised and not ledger.from_spec
    assert ledger.entries == [
        {"name": "a", "replicas": 0, "missingReplicas": 2},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
    ]


def test_a_version_opened_while_the_workload_is_missing_counts_zero_replicas() -> None:
    ledger = _ledger([subset("a", "50%"), subset("b", 2)], replicas=None)
    assert ledger.entries == [
        {"name": "a", "replicas": 0, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": 2},
    ]


@pytest.mark.parametrize(
    ("generation", "observed", "ahead"),
    [(3, 2, True), (2, 2, False), (2, 3, False), (1, None, True), (1, True, True), (1, "1", True)],
)
def test_the_spec_is_ahead_when_its_generation_passes_the_observed_one(
    generation: int, observed: Any, ahead: bool
) -> None:
    status = {"versionedSubsetStatuses": {"abc123": [{"name": "a", "missingReplicas": 1}]}}
    if observed is not None:
        status["observedGeneration"] = observed
    ws = spread([subset("a", 2)], status=status)
    ws["metadata"]["generation"] = generation
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "abc123", lambda: 0)
    assert ledger.from_spec is ahead and not ledger.initialised


# ------------------------------------------------------------------- reading


def test_recorded_finds_a_key_in_either_map_of_any_entry() -> None:
    ledger = _ledger(
        [subset("a", 2), subset("b", 2), subset("c", 2)],
        {"name": "a", "creatingPods": ["p1"], "deletingPods": "p1"},
        {"name": "b", "creatingPods": {"p1": EARLIER}},
        {"name": "c", "deletingPods": {"p2": EARLIER}},
    )
    assert ledger.recorded("p1") == "b"
    assert ledger.recorded("p2") == "c"
    assert ledger.recorded("p3") is None
    assert ledger.recorded("") is None


def test_recorded_ignores_the_empty_key_even_when_stored() -> None:
    ledger = _ledger([subset("a", 2)], {"name": "a", "creatingPods": {"": EARLIER}})
    assert ledger.recorded("") is None


def test_entry_and_spec_cap_find_a_subset_by_name() -> None:
    ledger = _ledger(
        [subset("a", 2), subset("b", "50%"), subset("c")],
        {"name": "a", "missingReplicas": 2},
        {"name": "b", "missingReplicas": 1},
        {"name": "gone", "missingReplicas": 1},
    )
    assert ledger.entry("b") == {"name": "b", "missingReplicas": 1}
    assert ledger.entry("c") is None
    assert ledger.spec_cap("a") == MaxReplicas(2, percent=False)
    assert ledger.spec_cap("b") == MaxReplicas(50, percent=True)
    assert ledger.spec_cap("c") is None and ledger.spec_cap("gone") is None


def test_first_with_room_takes_the_first_eligible_entry_with_room_or_unlimited() -> None:
    ledger = _ledger(
        [subset(n, 2) for n in "abcdef"],
        {"name": "a", "missingReplicas": 3},
        {"name": "b", "missingReplicas": 0},
        {"name": "c", "missingReplicas": -2},
        {"name": "d", "missingReplicas": "2"},
        {"name": "e", "missingReplicas": -1},
        {"name": "f", "missingReplicas": 1},
    )
    assert ledger.first_with_room({"a", "f"}) == {"name": "a", "missingReplicas": 3}
    assert ledger.first_with_room({"b", "c", "d", "e", "f"}) == {"name": "e", "missingReplicas": -1}
    assert ledger.first_with_room({"b", "c", "d", "f"}) == {"name": "f", "missingReplicas": 1}
    assert ledger.first_with_room({"b", "c", "d"}) is None
    assert ledger.first_with_room(set()) is None


# ----------------------------------------------------------------- following


def test_percentage_caps_follow_the_replicas_and_other_entries_stay() -> None:
    ledger = _ledger(
        [subset("a", "50%"), subset("b", "50%"), subset("c", 3), subset("d", "10%")],
        {"name": "a", "replicas": 1, "creatingPods": {"p1": EARLIER}, "missingReplicas": 0},
        {"name": "b", "replicas": 5, "missingReplicas": 0},
        {"name": "c", "replicas": 0, "missingReplicas": 1},
        {"name": "d", "replicas": 0, "missingReplicas": -1},
        {"name": "gone", "replicas": 0, "missingReplicas": 0},
    )
    ledger.follow_caps(7)  # 50 % of 7 is 4 (ceil); 10 % is 1
    assert ledger.entries == [
        {"name": "a", "replicas": 1, "creatingPods": {"p1": EARLIER}, "missingReplicas": 2},
        {"name": "b", "replicas": 5, "missingReplicas": 0},
        {"name": "c", "replicas": 0, "missingReplicas": 1},
        {"name": "d", "replicas": 0, "missingReplicas": -1},
        {"name": "gone", "replicas": 0, "missingReplicas": 0},
    ]


def test_nothing_follows_without_a_replica_count_or_without_percentages() -> None:
    entries = (
        {"name": "a", "replicas": 0, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": 0},
    )
    ledger = _ledger([subset("a", "50%"), subset("b", 2)], *entries)
    ledger.follow_caps(None)
    assert ledger.entries == list(entries)
    integers = _ledger([subset("a", 2), subset("b", 2)], *entries)
    integers.follow_caps(8)
    assert integers.entries == list(entries)


def test_while_the_spec_is_ahead_every_cap_is_counted_from_the_spec() -> None:
    ledger = _ledger(
        [subset("a", 1), subset("b", "50%"), subset("c"), subset("d", 5)],
        {"name": "a", "replicas": 2, "missingReplicas": 3},
        {"name": "b", "replicas": 1, "missingReplicas": 0},
        {"name": "c", "replicas": 1, "missingReplicas": 0},
        {"name": "d", "replicas": 1, "deletingPods": {"p0": EARLIER}, "missingReplicas": -1},
        {"name": "gone", "replicas": 1, "missingReplicas": 4},
        observedGeneration=0,
        generation=1,
    )
    assert ledger.from_spec
    ledger.follow_caps(6)
    assert [entry["missingReplicas"] for entry in ledger.entries] == [0, 2, -1, 5, 4]
    # With the workload not found, percentage caps keep their stored room; the others still follow.
    again = _ledger(
        [subset("a", 1), subset("b", "50%")],
        {"name": "a", "replicas": 0, "missingReplicas": 3},
        {"name": "b", "replicas": 1, "missingReplicas": 7},
        observedGeneration=0,
        generation=1,
    )
    again.follow_caps(None)
    assert [entry["missingReplicas"] for entry in again.entries] == [1, 7]


# ------------------------------------------------------------------- writing


def test_reserving_records_the_pod_and_takes_one_slot() -> None:
    ledger = _ledger(
        [subset("a", 3)], {"name": "a", "replicas": 1, "creatingPods": {"p0": EARLIER}, "missingReplicas": 2}
    )
    stored_map = ledger.entries[0]["creatingPods"]
    assert ledger.reserve(ledger.entries[0], "p1", NOW) is True
    assert ledger.entries[0] == {
        "name": "a",
        "replicas": 1,
        "creatingPods": {"p0": EARLIER, "p1": NOW_TEXT},
        "missingReplicas": 1,
    }
    assert stored_map == {"p0": EARLIER}, "without in_place the stored map is copied"


def test_reserving_in_place_extends_the_owned_map() -> None:
    ledger = _ledger([subset("a", 3)], {"name": "a", "creatingPods": {"p0": EARLIER}, "missingReplicas": 0})
    owned = ledger.entries[0]["creatingPods"]
    assert ledger.reserve(ledger.entries[0], "p1", NOW, in_place=True) is True
    assert ledger.entries[0]["creatingPods"] is owned
    assert owned == {"p0": EARLIER, "p1": NOW_TEXT}
    assert ledger.entries[0]["missingReplicas"] == 0, "a room of 0 stays 0"


def test_reserving_in_an_unlimited_entry_records_nothing_and_a_nameless_key_is_refused() -> None:
    ledger = _ledger(
        [subset("a"), subset("b", 2)],
        {"name": "a", "missingReplicas": -1},
        {"name": "b", "missingReplicas": 1},
    )
    assert ledger.reserve(ledger.entries[0], "p1", NOW) is False
    assert ledger.entries[0] == {"name": "a", "missingReplicas": -1}
    with pytest.raises(
        ValueError, match=r"^reserve_create: generated_uid is required for a pod without a name$"
    ):
        ledger.reserve(ledger.entries[1], "", NOW)
    assert ledger.entries[1] == {"name": "b", "missingReplicas": 1}


def test_a_deletion_below_the_cap_gives_the_slot_back() -> None:
    ledger = _ledger(
        [subset("a", 3)], {"name": "a", "replicas": 3, "deletingPods": {"p0": EARLIER}, "missingReplicas": 1}
    )
    stored_map = ledger.entries[0]["deletingPods"]
    assert ledger.release(ledger.entries[0], "p1", NOW, 3) is True
    assert ledger.entries[0] == {
        "name": "a",
        "replicas": 3,
        "deletingPods": {"p0": EARLIER, "p1": NOW_TEXT},
        "missingReplicas": 2,
    }
    assert stored_map == {"p0": EARLIER}


def test_a_deletion_at_the_cap_is_recorded_and_frees_nothing() -> None:
    # 4 held, this deletion recorded: 3 held = the cap, so the pod was beyond it.
    ledger = _ledger([subset("a", 3)], {"name": "a", "replicas": 4, "missingReplicas": 0})
    assert ledger.release(ledger.entries[0], "p1", NOW, 3) is False
    assert ledger.entries[0] == {
        "name": "a",
        "replicas": 4,
        "deletingPods": {"p1": NOW_TEXT},
        "missingReplicas": 0,
    }


def test_a_deletion_with_an_unknown_cap_frees_a_slot_and_in_place_extends_the_map() -> None:
    ledger = _ledger(
        [subset("a", 3)], {"name": "a", "replicas": 9, "deletingPods": {"p0": EARLIER}, "missingReplicas": 0}
    )
    owned = ledger.entries[0]["deletingPods"]
    assert ledger.release(ledger.entries[0], "p1", NOW, None, in_place=True) is True
    assert ledger.entries[0]["deletingPods"] is owned and owned == {"p0": EARLIER, "p1": NOW_TEXT}
    assert ledger.entries[0]["missingReplicas"] == 1


def test_a_deletion_in_an_unlimited_entry_records_nothing() -> None:
    ledger = _ledger([subset("a", 3)], {"name": "a", "replicas": 1, "missingReplicas": -1})
    assert ledger.release(ledger.entries[0], "p1", NOW, 3) is None
    assert ledger.entries[0] == {"name": "a", "replicas": 1, "missingReplicas": -1}


def test_while_the_spec_is_ahead_a_deletion_counts_the_room_from_the_cap() -> None:
    ledger = _ledger(
        [subset("a", 2), subset("b", 5)],
        {"name": "a", "replicas": 4, "missingReplicas": -1},
        {"name": "b", "replicas": 3, "missingReplicas": 0},
        observedGeneration=0,
        generation=1,
    )
    # a: 3 held after, cap 2, no room; b: 2 held after, cap 5, room for 3
    for index, name, pod_name, cap, room, replicas, missing in (
        (0, "a", "p1", 2, False, 4, 0),
        (1, "b", "p2", 5, True, 3, 3),
    ):
        assert ledger.release(ledger.entries[index], pod_name, NOW, cap) is room
        assert ledger.entries[index] == {
            "name": name,
            "replicas": replicas,
            "deletingPods": {pod_name: NOW_TEXT},
            "missingReplicas": missing,
        }
    unlimited = _ledger(
        [subset("a", 2)], {"name": "a", "replicas": 1, "missingReplicas": -1}, observedGeneration=0
    )
    assert unlimited.release(unlimited.entries[0], "p1", NOW, None) is None


def test_written_replaces_only_this_version_and_leaves_the_stored_object_alone() -> None:
    ws = spread(
        [subset("a", 2)],
        status={
            "observedGeneration": 1,
            "versionedSubsetStatuses": {
                "old111": [{"name": "a", "replicas": 1, "missingReplicas": 1}],
                "abc123": [{"name": "a", "replicas": 0, "missingReplicas": 2}],
            },
        },
    )
    before = copy.deepcopy(ws)
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "abc123", lambda: 0)
    ledger.reserve(ledger.entries[0], "p1", NOW)
    written = ledger.written()
    assert written == {
        **before,
        "status": {
            "observedGeneration": 1,
            "versionedSubsetStatuses": {
                "old111": [{"name": "a", "replicas": 1, "missingReplicas": 1}],
                "abc123": [
                    {"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"p1": NOW_TEXT}}
                ],
            },
        },
    }
    assert ws == before
    written["metadata"]["resourceVersion"] = "8"
    assert ws["metadata"]["resourceVersion"] == "7", "metadata is the written object's own"
    assert written["spec"] is ws["spec"], "the spec is shared with the stored object"


@pytest.mark.parametrize(
    "status", [None, "junk", {"versionedSubsetStatuses": "junk", "observedGeneration": 2}]
)
def test_written_builds_the_status_maps_that_are_missing(status: Any) -> None:
    ws = spread([subset("a", 2)])
    if status is not None:
        ws["status"] = status
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "v1", lambda: 0)
    kept = {"observedGeneration": 2} if isinstance(status, dict) else {}
    assert ledger.written()["status"] == {
        **kept,
        "versionedSubsetStatuses": {"v1": [{"name": "a", "replicas": 0, "missingReplicas": 2}]},
    }


def test_an_entry_of_a_subset_gone_from_the_spec_does_not_stop_the_others_following() -> None:
    ledger = _ledger(
        [subset("a", "50%")],
        {"name": "gone", "replicas": 0, "missingReplicas": 5},
        {"name": "a", "replicas": 1, "missingReplicas": 0},
    )
    ledger.follow_caps(6)  # 50 % of 6 is 3, one held
    assert ledger.entries == [
        {"name": "gone", "replicas": 0, "missingReplicas": 5},
        {"name": "a", "replicas": 1, "missingReplicas": 2},
    ]


def test_percentages_keep_their_stored_room_when_the_workload_is_not_found() -> None:
    ledger = _ledger([subset("a", "50%")], {"name": "a", "replicas": 1, "missingReplicas": 2})
    ledger.follow_caps(None)
    assert ledger.entries == [{"name": "a", "replicas": 1, "missingReplicas": 2}]


def test_percentages_of_a_workload_scaled_to_zero_leave_no_room() -> None:
    ledger = _ledger([subset("a", "50%")], {"name": "a", "replicas": 0, "missingReplicas": 3})
    ledger.follow_caps(0)
    assert ledger.entries == [{"name": "a", "replicas": 0, "missingReplicas": 0}]


def test_while_the_spec_is_ahead_percentages_of_a_workload_scaled_to_zero_leave_no_room() -> None:
    ledger = _ledger(
        [subset("a", "50%")],
        {"name": "a", "replicas": 0, "missingReplicas": 3},
        observedGeneration=0,
        generation=1,
    )
    assert ledger.from_spec
    ledger.follow_caps(0)
    assert ledger.entries == [{"name": "a", "replicas": 0, "missingReplicas": 0}]
