"""Events from the built-in controllers and the scheduler, as `kubectl describe` shows them on a cluster."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import cluster_fixtures
from cluster_fixtures import deployment

from py_engine.semantics.clock import VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.cluster import Cluster
from py_engine.sim.events import MAX_TRACKED, EventRecorder

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name

DEPLOYMENTS = "apps/v1/deployments"
START = datetime(2024, 6, 1, tzinfo=UTC)


def events_for(cluster: Cluster, kind: str) -> list[tuple[str, str, str, str]]:
    """(source component, type, reason, message) of the Events about objects of `kind`, oldest first."""
    items = cluster.api.list("v1/events", "default")["items"]
    return [
        (e["source"]["component"], e["type"], e["reason"], e["message"])
        for e in items
        if e["involvedObject"]["kind"] == kind
    ]


def test_deployment_replicaset_and_scheduler_record_what_kubectl_describe_shows(
    make_cluster: Callable[..., Cluster],
) -> None:
    cluster = make_cluster()
    cluster.api.create(DEPLOYMENTS, "default", deployment("web", 3))
    cluster.run_until_stable()
    cluster.api.patch(DEPLOYMENTS, "default", "web", {"spec": {"replicas": 1}}, "merge")
    cluster.run_until_stable()
    rs_name = cluster.api.list("apps/v1/replicasets", "default")["items"][0]["metadata"]["name"]
    assert events_for(cluster, "Deployment") == [
        (
            "deployment-controller",
            "Normal",
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_name} from 0 to 3",
        ),
        (
            "deployment-controller",
            "Normal",
            "ScalingReplicaSet",
            f"Scaled down replica set {rs_name} from 3 to 1",
        ),
    ]
    on_rs = events_for(cluster, "ReplicaSet")
    assert sorted(reason for _, _, reason, _ in on_rs) == ["SuccessfulCreate"] * 3 + ["SuccessfulDelete"] * 2
    assert all(
        source == "replicaset-controller" and message.startswith(("Created pod: ", "Deleted pod: "))
        for source, _, _, message in on_rs
    )
    scheduled = events_for(cluster, "Pod")
    assert len(scheduled) == 3
    assert all(
        source == "default-scheduler" and reason == "Scheduled" and " to zone-" in message
        for source, _, reason, message in scheduled
    )


def test_an_unplaceable_pod_gets_one_failed_scheduling_event(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    pod: dict[str, Any] = {
        "metadata": {"name": "huge"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1000"}}}]},
    }
    cluster.api.create("v1/pods", "default", pod)
    cluster.run_until_stable()
    assert isinstance(cluster.clock, VirtualClock)
    cluster.clock.advance(30)
    cluster.run_until_stable()  # retried: the same message is not recorded again
    failed = events_for(cluster, "Pod")
    assert [(source, kind, reason) for source, kind, reason, _ in failed] == [
        ("default-scheduler", "Warning", "FailedScheduling")
    ]
    assert "Insufficient cpu" in failed[0][3]


def test_a_repeated_event_is_folded_into_one_with_a_count() -> None:
    api = ApiServer()
    clock = VirtualClock(START)
    recorder = EventRecorder(api, clock, "tester")
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "uid": "u1"},
    }
    for _ in range(3):
        recorder.warning(obj, "Broken", "the same thing")
        clock.advance(5)
    recorder.normal(obj, "Fixed", "another thing")
    items = sorted(api.list("v1/events", "default")["items"], key=lambda e: e["reason"])
    assert [(e["reason"], e["count"]) for e in items] == [("Broken", 3), ("Fixed", 1)]
    assert items[0]["lastTimestamp"] > items[0]["firstTimestamp"]
    assert items[0]["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "c",
        "namespace": "default",
        "uid": "u1",
    }
    assert MAX_TRACKED >= 1000


def test_a_failed_event_write_never_reaches_the_caller() -> None:
    api = ApiServer()
    recorder = EventRecorder(api, VirtualClock(START), "tester")
    # No such namespace: the API server refuses the Event; recording still returns normally.
    recorder.normal({"kind": "Pod", "metadata": {"name": "p", "namespace": "missing"}}, "Reason", "message")
    assert api.list("v1/events", None)["items"] == []
