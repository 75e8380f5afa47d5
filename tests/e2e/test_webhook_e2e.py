"""End to end: the webhook over HTTPS, registered with the embedded cluster (real time).

A Deployment with a WorkloadSpread a:3, b:2, c:unlimited is scaled 0 -> 20; the
status-recounting controller is not part of this test, so freed slots come
only from the webhook's deletingPods accounting.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webhook_on_cluster import live_pods, register, subset_of, webhook_for
from webhook_testkit import (
    CRD,
    SPREADS_PATH,
    ZONE,
    spread,
    wait_until,
    without_subset_bound,
)

from benchmarks.kube_objects import workload
from py_engine.model import MATCHED_ANNOTATION
from py_engine.semantics.clock import RealClock
from py_engine.sim.cluster import Cluster
from py_engine.sim.interface import ApiError
from py_engine.sim.nodepool import nodes_from_description
from webhook.runtime import Webhook

pytestmark = pytest.mark.e2e


def zone_nodes() -> list[dict[str, Any]]:
    cap = {"cpu": "64", "memory": "256Gi", "pods": 110}
    return nodes_from_description(
        {
            "pools": [
                {
                    "name": f"zone-{z}",
                    "count": 2,
                    "labels": {ZONE: f"zone-{z}"},
                    "capacity": cap,
                    **(
                        {"taints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}]}
                        if z == "c"
                        else {}
                    ),
                }
                for z in "abc"
            ]
        }
    )


def zone_term(zone: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [f"zone-{zone}"]}]}


SUBSETS = [
    {
        "name": "a",
        "maxReplicas": 3,
        "requiredNodeSelectorTerm": zone_term("a"),
        "patch": {"metadata": {"labels": {"subset": "a"}}},
    },
    {
        "name": "b",
        "maxReplicas": 2,
        "requiredNodeSelectorTerm": zone_term("b"),
        "patch": {"metadata": {"labels": {"subset": "b"}}},
    },
    {
        "name": "c",
        "requiredNodeSelectorTerm": zone_term("c"),
        "tolerations": [{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
        "patch": {"metadata": {"labels": {"subset": "c"}}},
    },
]


def deployment(name: str, replicas: int, image: str = "nginx:1") -> dict[str, Any]:
    return workload("Deployment", name, replicas=replicas, namespace="default", container="app", image=image)


class Env:
    def __init__(self, cluster: Cluster, hook: Webhook) -> None:
        self.cluster, self.hook, self.api = cluster, hook, cluster.api

    def pods(self, app: str = "web") -> list[dict[str, Any]]:
        return live_pods(self.api, app)

    def by_subset(self, app: str = "web") -> Counter[str]:
        out: Counter[str] = Counter()
        for p in self.pods(app):
            out[subset_of(p)] += 1
        return out

    def scale(self, name: str, replicas: int) -> None:
        self.api.patch("apps/v1/deployments", "default", name, {"spec": {"replicas": replicas}}, "merge")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    cluster = Cluster(clock=RealClock(), nodes=zone_nodes())
    hook = webhook_for(cluster, tmp_path, threads=16)
    try:
        register(cluster, hook)
        cluster.start()
        yield Env(cluster, hook)
    finally:
        hook.stop()
        cluster.close()


def check_injection(pod: dict[str, Any]) -> None:
    subset = json.loads(pod["metadata"]["annotations"][MATCHED_ANNOTATION])["subset"]
    assert pod["metadata"]["labels"]["subset"] == subset
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [zone_term(subset)]
    tolerations = pod["spec"].get("tolerations") or []
    assert any(t.get("key") == "spot" for t in tolerations) == (subset == "c")


def wait_replaced(env: Env, victim: dict[str, Any], what: str) -> None:
    """Until `victim` is gone and its ReplicaSet has 20 pods again."""
    name = victim["metadata"]["name"]
    wait_until(
        lambda: len(env.pods()) == 20 and name not in {p["metadata"]["name"] for p in env.pods()}, 20, what
    )


def test_scale_0_to_20_splits_3_2_15_and_deletes_free_slots(env: Env) -> None:
    env.api.create("apps/v1/deployments", "default", deployment("web", 0))
    env.api.create(SPREADS_PATH, "default", spread("ws", SUBSETS))
    wait_until(lambda: env.hook.view.spreads.get("default", "ws") is not None, 5, "spread cached")
    env.scale("web", 20)
    wait_until(lambda: len(env.pods()) == 20, 30, "20 pods")
    assert env.by_subset() == Counter({"a": 3, "b": 2, "c": 15})
    for pod in env.pods():
        check_injection(pod)
    wait_until(lambda: all(p["spec"].get("nodeName") for p in env.pods()), 20, "all pods scheduled")
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in env.api.list("v1/nodes")["items"]}
    for pod in env.pods():
        subset = json.loads(pod["metadata"]["annotations"][MATCHED_ANNOTATION])["subset"]
        assert nodes[pod["spec"]["nodeName"]] == f"zone-{subset}"

    # Deleting a pod of subset a frees its slot: the ReplicaSet's replacement lands in a.
    victim = next(p for p in env.pods() if p["metadata"]["labels"]["subset"] == "a")
    env.api.delete("v1/pods", "default", victim["metadata"]["name"], grace_period_seconds=0)
    wait_replaced(env, victim, "replacement pod")
    assert env.by_subset() == Counter({"a": 3, "b": 2, "c": 15})

    # Evicting a pod of subset b frees its slot too.
    victim = next(p for p in env.pods() if p["metadata"]["labels"]["subset"] == "b")
    env.api.create(
        "v1/pods",
        "default",
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": victim["metadata"]["name"], "namespace": "default"},
        },
        subresource="eviction",
        name=victim["metadata"]["name"],
    )
    wait_replaced(env, victim, "replacement after eviction")
    assert env.by_subset() == Counter({"a": 3, "b": 2, "c": 15})
    status = env.api.get(SPREADS_PATH, "default", "ws")["status"]
    deleting = [
        k
        for v in status["versionedSubsetStatuses"].values()
        for s in v
        for k in (s.get("deletingPods") or {})
    ]
    assert len(deleting) == 2


def test_rolling_update_keeps_the_split(env: Env) -> None:
    env.api.create("apps/v1/deployments", "default", deployment("web", 10))
    env.api.create(SPREADS_PATH, "default", spread("ws", SUBSETS))
    # The spread arrived after the pods: they were admitted without a subset.
    wait_until(lambda: len(env.pods()) == 10, 20, "10 pods")
    # The rollout's pods must meet a webhook that has the spread (its watch cache may lag the
    # create); otherwise the first replacements are admitted without a subset, as on a cluster.
    wait_until(lambda: env.hook.view.spreads.get("default", "ws") is not None, 5, "spread cached")
    env.api.patch(
        "apps/v1/deployments",
        "default",
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
        "strategic",
    )

    def rolled() -> bool:
        pods = env.pods()
        return len(pods) == 10 and all(p["spec"]["containers"][0]["image"] == "nginx:2" for p in pods)

    wait_until(rolled, 60, "rollout to nginx:2")
    assert env.by_subset() == Counter({"a": 3, "b": 2, "c": 5})
    for pod in env.pods():
        check_injection(pod)


def test_invalid_spread_is_rejected_by_the_validating_webhook(env: Env) -> None:
    env.api.create(SPREADS_PATH, "default", spread("one", [{"name": "a", "maxReplicas": 1}, {"name": "b"}]))
    wait_until(lambda: env.hook.view.spreads.get("default", "one") is not None, 5, "spread cached")
    with pytest.raises(ApiError) as dup:
        env.api.create(SPREADS_PATH, "default", spread("two", [{"name": "a"}]))
    assert "targetRef" in str(dup.value)
    with pytest.raises(ApiError) as bad:
        env.api.create(
            SPREADS_PATH, "default", spread("three", [{"name": "x", "maxReplicas": "5"}], target="other")
        )
    assert bad.value.code in (400, 422) and "maxReplicas" in str(bad.value)


def test_a_spread_beyond_the_subset_bound_is_refused_by_its_count(env: Env) -> None:
    # The API server refuses it by the CRD's maxItems before calling the webhook, as kube-apiserver does.
    subsets = [{"name": f"s{i}"} for i in range(5_000)]
    with pytest.raises(ApiError) as schema:
        env.api.create(SPREADS_PATH, "default", spread("many", subsets))
    assert "spec.subsets: Too many: 5000: must have at most 100 items" in str(schema.value)
    # Under a CRD from before the bound, the review reaches the webhook, which evaluates it in a
    # policy worker process (issue 23) and refuses it by the count alone.
    crds = "apiextensions.k8s.io/v1/customresourcedefinitions"
    older = without_subset_bound(env.api.get(crds, None, CRD["metadata"]["name"]))
    env.api.update(crds, None, CRD["metadata"]["name"], older)
    assert env.hook.isolated is not None and env.hook.validation.engine is env.hook.review_engine
    with pytest.raises(ApiError) as many:
        env.api.create(SPREADS_PATH, "default", spread("many", subsets))
    assert "spec.subsets: Too many: 5000: must have at most 100 subsets" in str(many.value)
