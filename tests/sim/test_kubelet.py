"""Kubelet lifecycle in virtual time, and scheduling outcomes seen through the API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import cluster_fixtures
from cluster_fixtures import START, three_zone_nodes

from py_engine.semantics.timeutil import format_time
from py_engine.sim.cluster import Cluster
from py_engine.sim.kubelet import KubeletConfig

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name


def bare_pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def conditions(pod: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["lastTransitionTime"]) for c in pod["status"].get("conditions") or []}


def at(seconds: int) -> str:
    return format_time(START + timedelta(seconds=seconds))


def test_pending_running_ready_with_condition_times(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(start_delay=2, ready_delay=5))
    cluster.api.create("v1/pods", "default", bare_pod("p"))
    cluster.run_until_stable()
    pod = cluster.api.get("v1/pods", "default", "p")
    assert pod["spec"]["nodeName"] and pod["status"]["phase"] == "Pending"
    assert conditions(pod) == {"PodScheduled": ("True", at(0))}
    cluster.clock.advance(2)  # type: ignore[attr-defined]
    cluster.run_until_stable()
    pod = cluster.api.get("v1/pods", "default", "p")
    assert pod["status"]["phase"] == "Running" and pod["status"]["startTime"] == at(2)
    assert conditions(pod) == {
        "PodScheduled": ("True", at(0)),
        "Initialized": ("True", at(2)),
        "PodReadyToStartContainers": ("True", at(2)),
        "ContainersReady": ("False", at(2)),
        "Ready": ("False", at(2)),
    }
    (status,) = pod["status"]["containerStatuses"]
    assert status["ready"] is False and status["state"] == {"running": {"startedAt": at(2)}}
    assert pod["status"]["podIP"].startswith("10.244.") and pod["status"]["hostIP"].startswith("10.0.")
    cluster.run_until_stable(advance_time=True)
    pod = cluster.api.get("v1/pods", "default", "p")
    assert conditions(pod)["Ready"] == ("True", at(7)) and conditions(pod)["ContainersReady"] == (
        "True",
        at(7),
    )
    assert conditions(pod)["Initialized"] == ("True", at(2))
    assert pod["status"]["containerStatuses"][0]["ready"] is True


def test_graceful_deletion_confirmed_after_grace_period(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(honor_grace_period=True))
    cluster.api.create("v1/pods", "default", bare_pod("g", terminationGracePeriodSeconds=10))
    cluster.run_until_stable()
    cluster.api.delete("v1/pods", "default", "g")
    cluster.run_until_stable()
    assert cluster.api.get("v1/pods", "default", "g")["metadata"]["deletionTimestamp"] == at(10)
    cluster.clock.advance(9)  # type: ignore[attr-defined]
    cluster.run_until_stable()
    assert cluster.api.list("v1/pods", "default")["items"] != []
    cluster.clock.advance(1)  # type: ignore[attr-defined]
    cluster.run_until_stable()
    assert cluster.api.list("v1/pods", "default")["items"] == []


def test_immediate_deletion_by_default(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    cluster.api.create("v1/pods", "default", bare_pod("i"))
    cluster.run_until_stable()
    cluster.api.delete("v1/pods", "default", "i")
    cluster.run_until_stable()
    assert cluster.api.list("v1/pods", "default")["items"] == []


def test_run_seconds_annotation_completes_a_pod(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    pod = bare_pod("once", restartPolicy="Never")
    pod["metadata"]["annotations"] = {"sim.spreadgate.dev/run-seconds": "4"}
    cluster.api.create("v1/pods", "default", pod)
    cluster.run_until_stable(advance_time=True)
    done = cluster.api.get("v1/pods", "default", "once")
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] == at(4)
    assert conditions(done)["Ready"] == ("False", at(4))


def test_unschedulable_pod_gets_condition_and_is_retried(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(nodes=three_zone_nodes(per_zone=1, cpu="1"))
    big = bare_pod("big")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    cluster.api.create("v1/pods", "default", big)
    cluster.run_until_stable()
    pod = cluster.api.get("v1/pods", "default", "big")
    assert not pod["spec"].get("nodeName") and pod["status"]["phase"] == "Pending"
    (cond,) = pod["status"]["conditions"]
    assert cond["type"] == "PodScheduled" and cond["status"] == "False" and cond["reason"] == "Unschedulable"
    assert cond["message"] == "0/3 nodes are available: 3 Insufficient cpu."
    cluster.add_node(
        three_zone_nodes(per_zone=1, cpu="4")[0] | {"metadata": {"name": "roomy", "labels": {"size": "big"}}}
    )
    cluster.run_until_stable()
    pod = cluster.api.get("v1/pods", "default", "big")
    assert pod["spec"]["nodeName"] == "roomy" and pod["status"]["phase"] == "Running"
