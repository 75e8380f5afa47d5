"""The reproductions of tests/vectors/repros (a randomized comparison with OpenKruise's
WorkloadSpread), pinned: where Spreadgate now does what Kruise does (A: per-version
`Schedulable` conditions, B: no requeue for a deadline exactly at `now`) and where it
deliberately does not (D-stale: a status entry whose subset left the spec is never
chosen). docs/kruise-compatibility.md, "WorkloadSpread", lists the
deliberate differences.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import webhook_testkit
from webhook_testkit import SPREADS, KubeEnv, spread

from py_engine.apiclient import REPLICASETS
from py_engine.cli import main
from py_engine.semantics.clock import VirtualClock
from py_engine.semantics.timeutil import format_time, parse_time
from py_engine.workloadspread.controller.reconcile import SyncResult, reconcile, requeue_after
from py_engine.workloadspread.controller.runtime.loop import SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource
from py_engine.workloadspread.controller.snapshot import snapshot_from_objects

REPROS = Path(__file__).resolve().parents[2] / "vectors" / "repros"
NOW_TEXT = "2024-06-01T12:00:00Z"
NOW = parse_time(NOW_TEXT)

kube_env = webhook_testkit.kube_env  # the fixture, used by name


def _items(path: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(path.read_text())["items"]
    return items


def _reconcile(items: list[dict[str, Any]]) -> SyncResult:
    snapshot = snapshot_from_objects(items)
    return reconcile(snapshot.spread, snapshot.view, NOW)


def _schedulable(entries: list[dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    """subset -> (status, reason, lastTransitionTime) of its only condition."""
    out = {}
    for entry in entries:
        [condition] = entry["conditions"]
        assert condition["type"] == "Schedulable"
        out[entry["name"]] = (condition["status"], condition["reason"], condition["lastTransitionTime"])
    return out


def _admit(capsys: pytest.CaptureFixture[str], state: Path, pod: Path) -> dict[str, Any]:
    code = main(["admit", "--state", str(state), "--pod", str(pod), "--now", NOW_TEXT, "-o", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    decision: dict[str, Any] = json.loads(out)
    return decision


def _with_status(items: list[dict[str, Any]], status: dict[str, Any]) -> list[dict[str, Any]]:
    changed = copy.deepcopy(items)
    [ws] = [item for item in changed if item["kind"] == "WorkloadSpread"]
    ws["status"] = status
    return changed


# --------------------------------------------------------------------------- A


def test_a_each_version_gets_its_own_schedulable_conditions() -> None:
    """Only the old-version pod of subset-a is stuck: the aggregate and the old version's
    subset-a become False, the new version's stays True (Kruise's per-version rescheduleSubset)."""
    result = _reconcile(_items(REPROS / "A" / "state.json"))
    status = result.status
    false, true = ("False", "PodUnschedulable", NOW_TEXT), ("True", "Sufficient", NOW_TEXT)
    assert _schedulable(status["subsetStatuses"]) == {"subset-a": false, "subset-b": true}
    assert sorted(status["versionedSubsetStatuses"]) == ["newhash", "oldhash"]
    assert _schedulable(status["versionedSubsetStatuses"]["oldhash"]) == {"subset-a": false, "subset-b": true}
    assert _schedulable(status["versionedSubsetStatuses"]["newhash"]) == {"subset-a": true, "subset-b": true}
    counts = {
        v: [(e["replicas"], e["missingReplicas"]) for e in entries]
        for v, entries in status["versionedSubsetStatuses"].items()
    }
    assert counts == {"oldhash": [(1, 3), (0, -1)], "newhash": [(1, 3), (0, -1)]}
    assert [(e["replicas"], e["missingReplicas"]) for e in status["subsetStatuses"]] == [(2, 2), (0, -1)]
    # The aggregate decides the deletions, once: the stuck pod leaves.
    assert result.pods_to_delete == ["app-oldhash-0"]
    assert result.requeue_after is None and result.events == []


def test_a_a_new_version_pod_is_admitted_where_only_old_version_pods_failed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    items = _items(REPROS / "A" / "state.json")
    after = tmp_path / "state-after-sync.json"
    after.write_text(
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": _with_status(items, _reconcile(items).status)}
        )
    )
    assert _admit(capsys, after, REPROS / "A" / "new-pod.json")["subset"] == "subset-a"
    # Kruise's own status after that sync gives the same answer...
    assert (
        _admit(capsys, REPROS / "A" / "state-after-sync-kruise-status.json", REPROS / "A" / "new-pod.json")[
            "subset"
        ]
        == "subset-a"
    )
    # ...and the old status (the aggregate's False copied into every version) sends the pod
    # away: the webhook reads the pod's version list, never the aggregate.
    assert (
        _admit(
            capsys, REPROS / "A" / "state-after-sync-spreadgate-status.json", REPROS / "A" / "new-pod.json"
        )["subset"]
        == "subset-b"
    )


def test_a_each_list_keeps_and_recovers_its_own_condition() -> None:
    """The aggregate went False 4 minutes ago, the old version 6 minutes ago (recovery window
    300 s): the old version recovers now, the aggregate still waits 60 s, and the new version,
    with no previous condition and no stuck pod, is True."""
    items = _items(REPROS / "A" / "state.json")
    pods = [item for item in items if item["kind"] == "Pod"]
    for pod in pods:  # nothing is stuck any more
        pod["spec"]["nodeName"] = "zone-a-n0"
        pod["status"] = {"phase": "Running"}

    def entries(since: str | None) -> list[dict[str, Any]]:
        first: dict[str, Any] = {"name": "subset-a", "replicas": 1, "missingReplicas": 3}
        if since is not None:
            first["conditions"] = [
                {
                    "type": "Schedulable",
                    "status": "False",
                    "reason": "PodUnschedulable",
                    "lastTransitionTime": since,
                }
            ]
        return [first, {"name": "subset-b", "replicas": 0, "missingReplicas": -1}]

    four, six = format_time(NOW - timedelta(minutes=4)), format_time(NOW - timedelta(minutes=6))
    result = _reconcile(
        _with_status(
            items,
            {
                "observedGeneration": 1,
                "subsetStatuses": entries(four),
                "versionedSubsetStatuses": {"oldhash": entries(six), "newhash": entries(None)},
            },
        )
    )
    status = result.status
    assert _schedulable(status["subsetStatuses"])["subset-a"] == ("False", "PodUnschedulable", four)
    assert _schedulable(status["versionedSubsetStatuses"]["oldhash"])["subset-a"] == (
        "True",
        "Sufficient",
        NOW_TEXT,
    )
    assert _schedulable(status["versionedSubsetStatuses"]["newhash"])["subset-a"] == (
        "True",
        "Sufficient",
        NOW_TEXT,
    )
    assert [e.reason for e in result.events] == ["RecoverSchedulable"]
    assert result.requeue_after == pytest.approx(60)
    assert result.pods_to_delete == []


def test_a_a_version_without_pods_is_dropped_but_its_recovery_still_requeues() -> None:
    """A version whose pods are gone and whose entries are empty is not written, yet (as in
    Kruise, which computes it before dropping it) its False condition's window asks for a requeue."""
    items = [
        item
        for item in _items(REPROS / "A" / "state.json")
        if not (item["kind"] == "Pod" and item["metadata"]["name"] == "app-oldhash-0")
    ]
    since = format_time(NOW - timedelta(seconds=200))
    gone = [
        {
            "name": "subset-a",
            "replicas": 0,
            "missingReplicas": 4,
            "conditions": [
                {
                    "type": "Schedulable",
                    "status": "False",
                    "reason": "PodUnschedulable",
                    "lastTransitionTime": since,
                }
            ],
        },
        {"name": "subset-b", "replicas": 0, "missingReplicas": -1},
    ]
    result = _reconcile(
        _with_status(items, {"observedGeneration": 1, "versionedSubsetStatuses": {"oldhash": gone}})
    )
    assert sorted(result.status["versionedSubsetStatuses"]) == ["newhash"]
    assert _schedulable(result.status["subsetStatuses"])["subset-a"] == ("True", "Sufficient", NOW_TEXT)
    assert result.requeue_after == pytest.approx(100)


# --------------------------------------------------------------------------- B


def test_b_a_deadline_exactly_now_keeps_the_entry_and_asks_for_no_requeue() -> None:
    result = _reconcile(_items(REPROS / "B" / "state-boundary-only.json"))
    [a, b] = result.status["versionedSubsetStatuses"]["versionIgnored"]
    assert a["creatingPods"] == {"pod-x": "2024-06-01T11:59:30Z"} and a["missingReplicas"] == 2
    assert b["missingReplicas"] == -1
    assert [(e["replicas"], e["missingReplicas"]) for e in result.status["subsetStatuses"]] == [
        (0, 3),
        (0, -1),
    ]
    assert result.requeue_after is None


def test_b_the_next_positive_deadline_is_the_requeue(capsys: pytest.CaptureFixture[str]) -> None:
    result = _reconcile(_items(REPROS / "B" / "state-two-entries.json"))
    [a, _] = result.status["versionedSubsetStatuses"]["versionIgnored"]
    assert sorted(a["creatingPods"]) == ["pod-x", "pod-y"] and a["missingReplicas"] == 1
    assert result.requeue_after == pytest.approx(10)
    # The offline command reports the same: the smallest positive deadline, null for none.
    for name, want in (("state-two-entries.json", 10), ("state-boundary-only.json", None)):
        code = main(["reconcile", "--state", str(REPROS / "B" / name), "--now", NOW_TEXT, "-o", "json"])
        out = capsys.readouterr().out
        assert code == 0
        assert json.loads(out)["requeueAfterSeconds"] == want, name


def test_b_a_pending_timeout_or_recovery_window_ending_exactly_now_asks_for_no_requeue() -> None:
    items = _items(REPROS / "A" / "state.json")
    [stuck] = [item for item in items if item["metadata"]["name"] == "app-oldhash-0"]
    stuck["metadata"]["creationTimestamp"] = "2024-06-01T11:59:30Z"  # + 30 s critical = now
    window_start = format_time(NOW - timedelta(seconds=300))  # + 300 s window = now
    false = [
        {
            "name": "subset-a",
            "replicas": 2,
            "missingReplicas": 2,
            "conditions": [
                {
                    "type": "Schedulable",
                    "status": "False",
                    "reason": "PodUnschedulable",
                    "lastTransitionTime": window_start,
                }
            ],
        },
        {"name": "subset-b", "replicas": 0, "missingReplicas": -1},
    ]
    result = _reconcile(_with_status(items, {"observedGeneration": 1, "subsetStatuses": false}))
    # Neither deadline has passed (expiry is strict): the pod stays, the subset stays False...
    assert result.pods_to_delete == []
    assert _schedulable(result.status["subsetStatuses"])["subset-a"] == (
        "False",
        "PodUnschedulable",
        window_start,
    )
    # ...and neither asks for a requeue at zero.
    assert result.requeue_after is None
    # A pod one second before its deadline asks for one second.
    stuck["metadata"]["creationTimestamp"] = "2024-06-01T11:59:31Z"
    assert _reconcile(
        _with_status(items, {"observedGeneration": 1, "subsetStatuses": false})
    ).requeue_after == pytest.approx(1)


def test_b_requeue_after_ignores_durations_that_are_not_positive() -> None:
    assert requeue_after([]) is None
    assert requeue_after([0.0, -3.0]) is None
    assert requeue_after([0.0, 12.5, 4.0, -1.0]) == 4.0
    assert requeue_after([1e-6]) == 1e-6


def test_b_the_controller_loop_does_not_requeue_for_a_deadline_exactly_now(kube_env: KubeEnv) -> None:
    """The loop requeues with the sync's own value: nothing at the boundary, the
    deadline (plus the loop's slack) one second before it."""
    created = kube_env.client.create(
        REPLICASETS,
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "default", "labels": {"pod-template-hash": "h1"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
                },
            },
        },
    )
    assert created["metadata"]["uid"]
    kube_env.client.create(
        SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 3}, {"name": "b"}], kind="ReplicaSet")
    )
    creating = {"pod-x": "2024-06-01T11:59:30Z"}
    kube_env.write_subset_statuses(
        "ws",
        [
            {"name": "a", "replicas": 0, "missingReplicas": 2, "creatingPods": creating},
            {"name": "b", "replicas": 0, "missingReplicas": -1},
        ],
    )
    for offset, want in ((0.0, None), (-1.0, 1.0)):
        clock = VirtualClock(NOW + timedelta(seconds=offset))
        source = ListedSource(kube_env.client)
        source.refresh()
        controller = SpreadController(kube_env.client, source, clock)
        [report] = controller.step()
        assert report.outcome == "synced"
        assert report.requeue_after == want
        assert controller.queue.delayed() == (0 if want is None else 1)
        stored = kube_env.client.get(SPREADS, "default", "ws")["status"]["subsetStatuses"][0]
        assert stored["creatingPods"] == {"pod-x": "2024-06-01T11:59:30Z"}


# --------------------------------------------------------------------------- D-stale


def test_d_a_status_entry_whose_subset_left_the_spec_is_never_chosen(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Deliberate difference: Kruise takes the first *status* entry with room (the stale
    `subset-old`) and admits the pod there without constraints; Spreadgate only counts
    against subsets of the spec, so the pod goes to `subset-b` with its constraints and the
    stale entry is not charged."""
    decision = _admit(capsys, REPROS / "D-stale" / "state.json", REPROS / "D-stale" / "new-pod.json")
    assert decision["allowed"] is True
    assert decision["subset"] == "subset-b"
    annotations = decision["pod"]["metadata"]["annotations"]
    assert json.loads(annotations["spreadgate.dev/matched-workloadspread"]) == {
        "name": "ws",
        "subset": "subset-b",
    }
    entries = decision["workloadSpread"]["status"]["versionedSubsetStatuses"]["versionIgnored"]
    stale = next(e for e in entries if e["name"] == "subset-old")
    assert stale["missingReplicas"] == 1 and not stale.get("creatingPods")


def test_d_the_next_sync_rewrites_the_stale_entry_away() -> None:
    """The controller lists spec subsets only; the pod-less version (its stale entry counted
    a pod that is gone) is dropped, so the webhook next initialises it from the spec."""
    result = _reconcile(_items(REPROS / "D-stale" / "state.json"))
    assert [(e["name"], e["missingReplicas"]) for e in result.status["subsetStatuses"]] == [
        ("subset-a", 2),
        ("subset-b", -1),
    ]
    assert "versionedSubsetStatuses" not in result.status
