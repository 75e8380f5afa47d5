"""The per-version ledger and the target workload as one admission reads them
(py_engine/workloadspread/admission/ledger.py, workloads.py; docs/design-workloadspread.md §2.3.1)."""

from __future__ import annotations

import copy

from admission_builders import NOW, NOW_TEXT, Objects, deployment_chain, make_ctx, spread, subset, versioned

from py_engine.model import WorkloadSpread
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.ledger import SubsetLedger
from py_engine.workloadspread.admission.workloads import TargetWorkload


def test_a_version_without_entries_is_opened_from_the_spec_and_only_then_asks_the_replicas() -> None:
    view = WorkloadSpread.from_object(
        spread(
            [subset("a", "50%"), subset("b", 2), subset("c")],
            status=versioned("old111", {"name": "a", "missingReplicas": 0}),
        )
    )
    asked: list[int] = []

    def replicas() -> int | None:
        asked.append(1)
        return 5

    ledger = SubsetLedger(view, "new222", replicas)
    assert ledger.initialised and not ledger.from_spec and asked == [1]
    assert ledger.entries == [
        {"name": "a", "replicas": 0, "missingReplicas": 3},
        {"name": "b", "replicas": 0, "missingReplicas": 2},
        {"name": "c", "replicas": 0, "missingReplicas": -1},
    ]
    stored = SubsetLedger(view, "old111", replicas)
    assert not stored.initialised and asked == [1], "a stored version needs no replica count"


def test_the_first_entry_with_room_is_the_one_reserved_even_beside_a_namesake() -> None:
    """A malformed status may list a subset twice; the slot is taken in the entry that had room."""
    ws = spread(
        [subset("a", 3)],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 3, "missingReplicas": 0},
            {"name": "a", "replicas": 1, "missingReplicas": 2},
        ),
    )
    before = copy.deepcopy(ws)
    ledger = SubsetLedger(WorkloadSpread.from_object(ws), "abc123", lambda: 0)
    entry = ledger.first_with_room({"a"})
    assert entry is ledger.entries[1]
    assert ledger.reserve(entry, "p1", NOW)
    written = ledger.written()["status"]["versionedSubsetStatuses"]["abc123"]
    assert written == [
        {"name": "a", "replicas": 3, "missingReplicas": 0},
        {"name": "a", "replicas": 1, "missingReplicas": 1, "creatingPods": {"p1": NOW_TEXT}},
    ]
    assert ws == before, "the stored object is not changed"


def test_the_workload_is_read_once_per_admission_from_the_caches() -> None:
    objects = Objects(deployment_chain(replicas=4))
    ctx = AdmissionContext(now=NOW, lookup=objects.lookup)
    target = TargetWorkload(WorkloadSpread.from_object(spread([subset("a", "50%"), subset("b", "50%")])), ctx)
    assert (target.replicas(), target.replicas()) == (4, 4)
    assert len(objects.calls) == 1
    assert target.fresh_replicas() is None, "no fresh lookup configured: nothing fresher to ask"


def test_integer_caps_never_fetch_the_workload() -> None:
    objects = Objects(deployment_chain(replicas=4))
    ctx = make_ctx(fresh_lookup=objects.lookup)
    target = TargetWorkload(WorkloadSpread.from_object(spread([subset("a", 2), subset("b")])), ctx)
    assert (target.replicas(), target.fresh_replicas()) == (0, None)
    assert objects.calls == []
