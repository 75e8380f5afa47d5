"""StatefulSet, Job and garbage-collector behaviour on the embedded cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cluster_fixtures
from cluster_fixtures import pod_template, pods_of

from benchmarks.kube_objects import custom_resource_definition, workload
from py_engine.sim.cluster import Cluster
from py_engine.sim.kubelet import KubeletConfig

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name


def statefulset(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    sts = workload(
        "StatefulSet", name, replicas=replicas, namespace="default", container="app", image="nginx:1"
    )
    sts["spec"].update({"serviceName": name, **spec})
    return sts


def names(cluster: Cluster, selector: str, live_only: bool = True) -> list[str]:
    return sorted(
        p["metadata"]["name"]
        for p in pods_of(cluster, selector)
        if not (live_only and p["metadata"].get("deletionTimestamp"))
    )


def test_statefulset_ordered_ready_creation_and_scale_down(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(start_delay=1, ready_delay=1))
    cluster.api.create("apps/v1/statefulsets", "default", statefulset("db", 3))
    history: list[list[str]] = []
    cluster.run_until_stable(advance_time=True, on_step=lambda c: history.append(names(c, "app=db")))
    # Each ordinal appears only after the previous one: prefixes of db-0, db-1, db-2.
    distinct = [h for i, h in enumerate(history) if i == 0 or h != history[i - 1]]
    assert distinct == [["db-0"], ["db-0", "db-1"], ["db-0", "db-1", "db-2"]]
    pods = pods_of(cluster, "app=db")
    by_name = {p["metadata"]["name"]: p for p in pods}
    labels = by_name["db-1"]["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"].startswith("db-")
    assert by_name["db-1"]["spec"]["hostname"] == "db-1" and by_name["db-1"]["spec"]["subdomain"] == "db"
    sts = cluster.api.get("apps/v1/statefulsets", "default", "db")
    assert (
        sts["status"]["readyReplicas"] == 3
        and sts["status"]["updateRevision"] == labels["controller-revision-hash"]
    )
    cluster.api.patch("apps/v1/statefulsets", "default", "db", {"spec": {"replicas": 1}}, "merge")
    history.clear()
    cluster.run_until_stable(advance_time=True, on_step=lambda c: history.append(names(c, "app=db")))
    distinct = [h for i, h in enumerate(history) if i == 0 or h != history[i - 1]]
    assert distinct == [["db-0", "db-1"], ["db-0"]]


def test_statefulset_parallel_and_rolling_update(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    cluster.api.create(
        "apps/v1/statefulsets", "default", statefulset("par", 4, podManagementPolicy="Parallel")
    )
    assert cluster.sync_once() > 0
    assert names(cluster, "app=par") == ["par-0", "par-1", "par-2", "par-3"]  # all in one pass
    cluster.run_until_stable(advance_time=True)
    old = {p["metadata"]["labels"]["controller-revision-hash"] for p in pods_of(cluster, "app=par")}
    cluster.api.patch(
        "apps/v1/statefulsets",
        "default",
        "par",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
        "strategic",
    )
    deleted_order: list[str] = []
    previous = {f"par-{i}" for i in range(4)}

    def track(c: Cluster) -> None:
        nonlocal previous
        current = {
            p["metadata"]["name"]
            for p in pods_of(c, "app=par")
            if p["metadata"]["labels"]["controller-revision-hash"] in old
            and not p["metadata"].get("deletionTimestamp")
        }
        deleted_order.extend(sorted(previous - current))
        previous = current

    cluster.run_until_stable(advance_time=True, on_step=track)
    assert deleted_order == ["par-3", "par-2", "par-1", "par-0"]  # highest ordinal first
    pods = pods_of(cluster, "app=par")
    assert len(pods) == 4 and all(p["spec"]["containers"][0]["image"] == "nginx:2" for p in pods)
    sts = cluster.api.get("apps/v1/statefulsets", "default", "par")
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"] not in old


def test_job_keeps_parallelism_until_completions(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(job_run_seconds=10))
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch", "namespace": "default"},
        "spec": {
            "parallelism": 2,
            "completions": 5,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox"}]}
            },
        },
    }
    cluster.api.create("batch/v1/jobs", "default", job)
    active_counts: list[int] = []

    def record(c: Cluster) -> None:
        pods = pods_of(c, "job-name=batch")
        active_counts.append(sum(1 for p in pods if p["status"].get("phase") in ("Pending", "Running")))

    cluster.run_until_stable(advance_time=True, on_step=record)
    assert max(active_counts) == 2
    assert active_counts[-1] == 0
    pods = pods_of(cluster, "job-name=batch")
    assert sum(1 for p in pods if p["status"]["phase"] == "Succeeded") == 5
    status = cluster.api.get("batch/v1/jobs", "default", "batch")["status"]
    assert status["succeeded"] == 5 and status["active"] == 0
    assert any(c["type"] == "Complete" and c["status"] == "True" for c in status["conditions"])
    # 5 pods of 10 virtual seconds, 2 at a time: three waves, 30 s.
    assert status["completionTime"] == "2024-06-01T12:00:30Z"


def test_job_backoff_limit_fails_the_job(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(job_run_seconds=1))
    template = {
        "metadata": {"annotations": {"sim.spreadgate.dev/exit-code": "3"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox"}]},
    }
    cluster.api.create(
        "batch/v1/jobs",
        "default",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"backoffLimit": 2, "template": template},
        },
    )
    cluster.run_until_stable(advance_time=True)
    status = cluster.api.get("batch/v1/jobs", "default", "bad")["status"]
    assert status["failed"] == 3
    assert any(c["type"] == "Failed" and c["reason"] == "BackoffLimitExceeded" for c in status["conditions"])


def _deploy(cluster: Cluster, name: str, replicas: int) -> None:
    cluster.api.create(
        "apps/v1/deployments",
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": pod_template({"app": name}),
            },
        },
    )
    cluster.run_until_stable(advance_time=True)


def test_gc_background_cascade(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    _deploy(cluster, "bg", 4)
    assert len(pods_of(cluster, "app=bg")) == 4
    cluster.api.delete("apps/v1/deployments", "default", "bg", propagation_policy="Background")
    cluster.run_until_stable(advance_time=True)
    assert cluster.api.list("apps/v1/replicasets", "default")["items"] == []
    assert pods_of(cluster, "app=bg") == []


def test_gc_foreground_waits_for_dependents(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(honor_grace_period=True))
    _deploy(cluster, "fg", 3)
    cluster.api.delete("apps/v1/deployments", "default", "fg", propagation_policy="Foreground")
    observations: list[tuple[bool, int, int]] = []

    def observe(c: Cluster) -> None:
        d = c.api.list("apps/v1/deployments", "default")["items"]
        observations.append(
            (bool(d), len(c.api.list("apps/v1/replicasets", "default")["items"]), len(pods_of(c, "app=fg")))
        )

    cluster.run_until_stable(advance_time=True, on_step=observe)
    # The owner outlived its pods (graceful 30 s) and disappeared only after them.
    assert any(present and pods > 0 for present, _, pods in observations)
    for present, rss, pods in observations:
        if not present:
            assert rss == 0 and pods == 0
    assert observations[-1] == (False, 0, 0)


def test_gc_orphan_keeps_dependents(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    _deploy(cluster, "orph", 2)
    cluster.api.delete("apps/v1/deployments", "default", "orph", propagation_policy="Orphan")
    cluster.run_until_stable(advance_time=True)
    assert cluster.api.list("apps/v1/deployments", "default")["items"] == []
    (rs,) = cluster.api.list("apps/v1/replicasets", "default")["items"]
    assert not rs["metadata"].get("ownerReferences")
    assert len(pods_of(cluster, "app=orph")) == 2


def test_pods_of_deleted_node_are_failed_and_removed(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    _deploy(cluster, "nd", 6)
    victim_node = pods_of(cluster, "app=nd")[0]["spec"]["nodeName"]
    lost = {p["metadata"]["name"] for p in pods_of(cluster, "app=nd") if p["spec"]["nodeName"] == victim_node}
    cluster.delete_node(victim_node)
    cluster.run_until_stable(advance_time=True)
    pods = pods_of(cluster, "app=nd")
    assert len(pods) == 6
    assert not lost & {p["metadata"]["name"] for p in pods}
    assert all(p["spec"]["nodeName"] != victim_node for p in pods)


def _crd(group: str, plural: str, kind: str) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd = custom_resource_definition(
        group, kind, versions=("v1alpha1", "v1beta1"), storage="v1beta1", schema=schema, subresources={}
    )
    assert crd["spec"]["names"]["plural"] == plural
    return crd


def test_gc_collects_dependents_of_every_custom_kind(make_cluster: Callable[..., Cluster]) -> None:
    # A UnitedDeployment's CloneSets stayed behind after `kubectl delete sgud`: the collector only
    # knew the kinds it was told about. Nothing is registered by hand here.
    cluster = make_cluster()
    cluster.api.create(
        "apiextensions.k8s.io/v1/customresourcedefinitions",
        None,
        _crd("owners.example.com", "fleets", "Fleet"),
    )
    cluster.api.create(
        "apiextensions.k8s.io/v1/customresourcedefinitions",
        None,
        _crd("workers.example.com", "crews", "Crew"),
    )
    cluster.run_until_stable()
    fleet = cluster.api.create("owners.example.com/v1beta1/fleets", "default", {"metadata": {"name": "f"}})
    owner = {
        "apiVersion": "owners.example.com/v1beta1",
        "kind": "Fleet",
        "name": "f",
        "uid": fleet["metadata"]["uid"],
        "controller": True,
    }
    cluster.api.create(
        "workers.example.com/v1beta1/crews",
        "default",
        {"metadata": {"name": "c", "ownerReferences": [owner]}},
    )
    cluster.run_until_stable()
    crews = cluster.api.list("workers.example.com/v1beta1/crews", "default")["items"]
    assert [c["metadata"]["name"] for c in crews] == ["c"]
    cluster.api.delete("owners.example.com/v1beta1/fleets", "default", "f")
    cluster.run_until_stable(advance_time=True)
    assert cluster.api.list("workers.example.com/v1beta1/crews", "default")["items"] == []
