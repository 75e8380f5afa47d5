"""Deployment + ReplicaSet controllers on the embedded cluster, in virtual time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cluster_fixtures
import scaledown_oracle as upstream
from cluster_fixtures import ZONE, deployment, pods_of

from py_engine.semantics.clock import VirtualClock
from py_engine.sim.cluster import Cluster
from py_engine.sim.controllers.base import controller_ref
from py_engine.sim.controllers.deployment import HASH_LABEL, REVISION
from py_engine.sim.kubelet import KubeletConfig

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name

DEPLOYMENTS = "apps/v1/deployments"


def scale(cluster: Cluster, name: str, replicas: int) -> None:
    cluster.api.patch(DEPLOYMENTS, "default", name, {"spec": {"replicas": replicas}}, "merge")


def test_scale_0_30_10_deletes_victims_the_upstream_rules_allow(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    cluster.api.create(DEPLOYMENTS, "default", deployment("web", 0))
    cluster.run_until_stable()
    assert pods_of(cluster) == []
    scale(cluster, "web", 30)
    cluster.run_until_stable()
    pods = pods_of(cluster)
    assert len(pods) == 30
    assert all(p["spec"].get("nodeName") and p["status"]["phase"] == "Running" for p in pods)
    zones = {}
    nodes = {n["metadata"]["name"]: n for n in cluster.api.list("v1/nodes")["items"]}
    for p in pods:
        zone = nodes[p["spec"]["nodeName"]]["metadata"]["labels"][ZONE]
        zones[zone] = zones.get(zone, 0) + 1
    assert zones == {"zone-a": 10, "zone-b": 10, "zone-c": 10}
    # Make the victims non-trivial: costs on some pods, several pods not ready.
    ordered = sorted(pods, key=lambda p: p["metadata"]["name"])
    for i, pod in enumerate(ordered[:12]):
        cluster.api.patch(
            "v1/pods",
            "default",
            pod["metadata"]["name"],
            {"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": str(i % 4)}}},
            "merge",
        )
    for pod in ordered[20:24]:
        cluster.api.patch(
            "v1/pods",
            "default",
            pod["metadata"]["name"],
            {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
            "merge",
            subresource="status",
        )
    assert isinstance(cluster.clock, VirtualClock)
    cluster.clock.advance(3600)
    before = sorted(pods_of(cluster), key=lambda p: f"{p['metadata']['namespace']}/{p['metadata']['name']}")
    rs_uid = controller_ref(before[0])["uid"]  # type: ignore[index]
    assert all(controller_ref(p)["uid"] == rs_uid for p in before)  # type: ignore[index]
    # The oracle: the upstream rules as docs/design-scaledown.md states them (tests/scaledown_oracle.py),
    # not the model the emulated ReplicaSet runs. One ReplicaSet, so its pods are all the related pods.
    facts = [upstream.from_object(p) for p in before]
    ranks = upstream.replicaset_ranks(facts, facts)
    now = upstream.nanos(cluster.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"))
    scale(cluster, "web", 10)
    cluster.run_until_stable()
    after = {p["metadata"]["name"] for p in pods_of(cluster)}
    deleted = {p["metadata"]["name"] for p in before} - after
    assert len(after) == 10 and len(deleted) == 20
    victims = {i for i, p in enumerate(before) if p["metadata"]["name"] in deleted}
    # No survivor goes before any victim under the upstream rules (ties may fall either way).
    assert upstream.victims_are_first(facts, ranks, victims, now) == []
    # The choice is not trivial: not-ready pods went first, then the lowest costs.
    assert {p["metadata"]["name"] for p in ordered[20:24]} <= deleted


def test_deployment_creates_hashed_replicaset_with_revision(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    cluster.api.create(DEPLOYMENTS, "default", deployment("api", 3))
    cluster.run_until_stable()
    (rs,) = cluster.api.list("apps/v1/replicasets", "default")["items"]
    pod_hash = rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL]
    assert rs["metadata"]["name"] == f"api-{pod_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "api", HASH_LABEL: pod_hash}
    assert rs["metadata"]["annotations"][REVISION] == "1"
    ref = controller_ref(rs)
    assert ref is not None and ref["kind"] == "Deployment" and ref["blockOwnerDeletion"] is True
    for pod in pods_of(cluster):
        assert pod["metadata"]["name"].startswith(f"api-{pod_hash}-")
        assert pod["metadata"]["labels"][HASH_LABEL] == pod_hash
        pref = controller_ref(pod)
        assert pref is not None and pref["uid"] == rs["metadata"]["uid"] and pref["blockOwnerDeletion"]
    assert rs["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    d = cluster.api.get(DEPLOYMENTS, "default", "api")
    assert d["metadata"]["annotations"][REVISION] == "1"
    assert {
        k: d["status"][k]
        for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
    } == {
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }


def _invariants(
    name: str, replicas: int, surge: int, unavailable: int, seen: list[tuple[int, int]]
) -> Callable[[Cluster], None]:
    def check(cluster: Cluster) -> None:
        pods = [p for p in pods_of(cluster, f"app={name}") if not p["metadata"].get("deletionTimestamp")]
        ready = [
            p
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []
            )
        ]
        assert len(pods) <= replicas + surge, f"{len(pods)} pods exceed {replicas}+{surge}"
        assert len(ready) >= replicas - unavailable, f"only {len(ready)} ready"
        seen.append((len(pods), len(ready)))

    return check


def _roll(
    cluster: Cluster, name: str, replicas: int, surge: Any, unavailable: Any, bounds: tuple[int, int]
) -> list[tuple[int, int]]:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}
    cluster.api.create(DEPLOYMENTS, "default", deployment(name, replicas, strategy=strategy))
    cluster.run_until_stable(advance_time=True)
    seen: list[tuple[int, int]] = []
    cluster.api.patch(
        DEPLOYMENTS,
        "default",
        name,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
        "strategic",
    )
    cluster.run_until_stable(advance_time=True, on_step=_invariants(name, replicas, *bounds, seen))
    return seen


def test_rolling_update_respects_surge_and_unavailable(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(start_delay=2, ready_delay=3))
    seen = _roll(cluster, "roll", 10, "20%", 1, (2, 1))
    assert len(seen) > 5
    assert max(total for total, _ in seen) == 12  # the surge was used
    assert min(ready for _, ready in seen) == 9  # and the unavailability budget
    pods = pods_of(cluster, "app=roll")
    assert len(pods) == 10 and all(p["spec"]["containers"][0]["image"] == "nginx:2" for p in pods)
    rss = cluster.api.list("apps/v1/replicasets", "default")["items"]
    revisions = sorted((rs["metadata"]["annotations"][REVISION], rs["spec"]["replicas"]) for rs in rss)
    assert revisions == [("1", 0), ("2", 10)]
    d = cluster.api.get(DEPLOYMENTS, "default", "roll")
    assert d["metadata"]["annotations"][REVISION] == "2"
    assert d["status"]["updatedReplicas"] == 10 and d["status"]["availableReplicas"] == 10


def test_rolling_update_with_zero_surge_never_exceeds_replicas(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(start_delay=1, ready_delay=1))
    seen = _roll(cluster, "nosurge", 6, 0, "50%", (0, 3))
    assert max(total for total, _ in seen) == 6
    assert min(ready for _, ready in seen) == 3


def test_recreate_deletes_everything_before_creating(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(kubelet=KubeletConfig(start_delay=1, ready_delay=1))
    cluster.api.create(DEPLOYMENTS, "default", deployment("rec", 4, strategy={"type": "Recreate"}))
    cluster.run_until_stable(advance_time=True)
    images: list[set[str]] = []

    def record(c: Cluster) -> None:
        images.append({p["spec"]["containers"][0]["image"] for p in pods_of(c, "app=rec")})

    cluster.api.patch(
        DEPLOYMENTS,
        "default",
        "rec",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
        "strategic",
    )
    cluster.run_until_stable(advance_time=True, on_step=record)
    assert all(len(s) <= 1 for s in images)  # never old and new together
    assert set() in images and images[-1] == {"nginx:2"}
    assert len(pods_of(cluster, "app=rec")) == 4


def test_revision_history_limit_prunes_old_replicasets(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster()
    cluster.api.create(DEPLOYMENTS, "default", deployment("hist", 1, revisionHistoryLimit=1))
    cluster.run_until_stable(advance_time=True)
    for tag in (2, 3, 4):
        cluster.api.patch(
            DEPLOYMENTS,
            "default",
            "hist",
            {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": f"nginx:{tag}"}]}}}},
            "strategic",
        )
        cluster.run_until_stable(advance_time=True)
    rss = cluster.api.list("apps/v1/replicasets", "default")["items"]
    assert sorted(rs["metadata"]["annotations"][REVISION] for rs in rss) == ["3", "4"]
