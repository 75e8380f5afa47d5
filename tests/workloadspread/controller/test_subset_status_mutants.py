"""One subset's status entry (docs/design-workloadspread.md §2.5.2), with literal expected entries.

creatingPods entries (keyed by the pod's uid from its annotation, else its name) are dropped once
the pod is listed and expire after 30 s; deletingPods entries are kept for active pods and
expire after 15 s; expiry is strict (`time + timeout` before now). missingReplicas is
`max(0, cap - (active - kept deleting))`, minus kept creating entries, floored at 0.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from py_engine.semantics.events import Event
from py_engine.workloadspread.controller.options import ReconcileOptions
from py_engine.workloadspread.controller.subset_status import subset_status

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
OPTIONS = ReconcileOptions()
MATCHED = "spreadgate.dev/matched-workloadspread"


def pod(name: str, *, phase: str = "Running", uid: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if uid is not None:
        meta["annotations"] = {MATCHED: f'{{"name":"ws","subset":"a","uid":"{uid}"}}'}
    return {"metadata": meta, "status": {"phase": phase}}


def test_a_recent_deleting_entry_of_an_active_pod_is_kept_and_frees_its_place() -> None:
    old = {"name": "a", "deletingPods": {"p1": "2024-06-01T11:59:50Z"}}
    outcome = subset_status("a", 3, [pod("p1"), pod("p2"), pod("p3")], old, NOW, OPTIONS, "default")
    assert outcome.entry == {
        "name": "a",
        "replicas": 3,
        "missingReplicas": 1,
        "deletingPods": {"p1": "2024-06-01T11:59:50Z"},
    }
    assert outcome.requeue_seconds == [5.0]
    assert outcome.events == []


def test_a_deleting_entry_exactly_at_its_timeout_is_still_kept() -> None:
    old = {"name": "a", "deletingPods": {"p1": "2024-06-01T11:59:45Z"}}
    outcome = subset_status("a", 3, [pod("p1")], old, NOW, OPTIONS, "default")
    assert outcome.entry["deletingPods"] == {"p1": "2024-06-01T11:59:45Z"}
    assert outcome.events == []


def test_an_expired_deleting_entry_raises_one_warning_naming_the_pod() -> None:
    old = {"name": "a", "deletingPods": {"p1": "2024-06-01T11:59:44Z"}}
    outcome = subset_status("a", 3, [pod("p1")], old, NOW, OPTIONS, "default")
    assert outcome.entry == {"name": "a", "replicas": 1, "missingReplicas": 2}
    assert outcome.events == [
        Event("Warning", "DeletePodFailed", "Pod default/p1 was expected to be deleted but it wasn't")
    ]


def test_an_expired_creating_entry_raises_one_warning_naming_the_pod() -> None:
    old = {"name": "a", "creatingPods": {"p9": "2024-06-01T11:59:29Z"}}
    outcome = subset_status("a", 3, [], old, NOW, OPTIONS, "default")
    assert outcome.entry == {"name": "a", "replicas": 0, "missingReplicas": 3}
    assert outcome.events == [
        Event("Warning", "CreatePodFailed", "Pod default/p9 was expected to be created but it wasn't")
    ]


def test_a_creating_entry_keyed_by_uid_is_dropped_when_the_pod_is_listed() -> None:
    old = {"name": "a", "creatingPods": {"uid-1": "2024-06-01T11:59:55Z", "uid-2": "2024-06-01T11:59:55Z"}}
    outcome = subset_status("a", 3, [pod("p1", uid="uid-1")], old, NOW, OPTIONS, "default")
    assert outcome.entry == {
        "name": "a",
        "replicas": 1,
        "missingReplicas": 1,
        "creatingPods": {"uid-2": "2024-06-01T11:59:55Z"},
    }


def test_a_creating_entry_keyed_by_name_is_dropped_when_the_pod_is_listed() -> None:
    old = {"name": "a", "creatingPods": {"p1": "2024-06-01T11:59:55Z"}}
    outcome = subset_status("a", 3, [pod("p1")], old, NOW, OPTIONS, "default")
    assert outcome.entry == {"name": "a", "replicas": 1, "missingReplicas": 2}


def test_a_finished_pod_listed_first_does_not_hide_the_active_ones() -> None:
    pods = [pod("done", phase="Succeeded"), pod("p1"), pod("failed", phase="Failed"), pod("p2")]
    outcome = subset_status("a", 5, pods, None, NOW, OPTIONS, "default")
    assert outcome.entry == {"name": "a", "replicas": 2, "missingReplicas": 3}
