"""One sync against an API server: only differences are written, a stale status is requeued."""

from __future__ import annotations

from datetime import UTC, datetime

import webhook_testkit
from webhook_testkit import SPREADS, KubeEnv, spread
from workload_objects import pod, replicaset

from benchmarks.kube_objects import workload_spread
from py_engine.apiclient import PODS, REPLICASETS
from py_engine.semantics.clock import Clock, RealClock, VirtualClock
from py_engine.workloadspread.controller.runtime.loop import SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource

kube_env = webhook_testkit.kube_env  # the fixture, used by name


def setup(env: KubeEnv, clock: Clock | None = None) -> tuple[SpreadController, ListedSource]:
    created = env.client.create(REPLICASETS, "default", replicaset())
    for name in ("web-1", "web-2"):
        env.client.create(PODS, "default", pod(name, created["metadata"]["uid"]))
    env.client.create(
        SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 1}, {"name": "b"}], kind="ReplicaSet")
    )
    source = ListedSource(env.client)
    return SpreadController(env.client, source, clock or RealClock()), source


def test_first_sync_writes_status_and_costs_then_a_second_sync_writes_nothing(kube_env: KubeEnv) -> None:
    controller, source = setup(kube_env)
    source.refresh()
    [report] = controller.step()
    assert report.outcome == "synced"
    assert report.writes.status == 1 and report.writes.deletion_cost == 2
    status = kube_env.client.get(SPREADS, "default", "ws")["status"]
    assert [s["name"] for s in status["subsetStatuses"]] == ["a", "b"]
    source.refresh()
    [again] = controller.step()
    assert again.outcome == "synced" and again.writes.total == 0
    assert controller.metrics.writes.value(kind="status") == 1
    assert controller.metrics.writes.value(kind="deletion_cost") == 2


def test_a_status_written_by_someone_else_meanwhile_is_a_conflict_retried_by_requeue(
    kube_env: KubeEnv,
) -> None:
    # A virtual clock: the conflict's back-off (50 ms) must not elapse during a pass, or on a loaded
    # machine the retry runs within the same step and the next step reports two syncs.
    controller, source = setup(kube_env, VirtualClock(datetime(2026, 1, 1, tzinfo=UTC)))
    source.refresh()  # the controller's copy of the spread is now the one before the webhook's write
    creating = {"web-3": "2024-01-01T00:00:00Z"}
    kube_env.write_subset_statuses(
        "ws", [{"name": "a", "replicas": 0, "missingReplicas": 0, "creatingPods": creating}]
    )
    [report] = controller.step()
    assert report.outcome == "conflict"
    assert controller.metrics.conflicts.value() == 1
    assert controller.queue.failures("default/ws") == 1 and controller.queue.delayed() == 1
    # The webhook's write survived: nothing overwrote it.
    assert "creatingPods" in kube_env.client.get(SPREADS, "default", "ws")["status"]["subsetStatuses"][0]
    source.refresh()
    [retry] = controller.step()
    assert retry.outcome == "synced" and retry.writes.status == 1
    assert controller.queue.failures("default/ws") == 0


def test_a_deleted_spread_is_forgotten_and_a_malformed_one_is_retried(kube_env: KubeEnv) -> None:
    # A virtual clock: the retry's back-off must not elapse during the pass (it would on a
    # slow enough machine, and the key would be retried within the same step).
    controller, source = setup(kube_env, VirtualClock(datetime(2026, 1, 1, tzinfo=UTC)))
    # The schema admits it (maxReplicas is int-or-string); the webhook, absent here, would not.
    kube_env.client.create(SPREADS, "default", workload_spread("bad", [{"name": "a", "maxReplicas": "half"}]))
    source.refresh()
    reports = {r.key: r for r in controller.step()}
    assert reports["default/bad"].outcome == "error" and "WorkloadSpread" in reports["default/bad"].error
    assert controller.queue.failures("default/bad") == 1
    assert controller.sync("default/missing").outcome == "gone"
