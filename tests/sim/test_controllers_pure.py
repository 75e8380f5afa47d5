"""Pure pieces of the workload controllers: fenceposts, rollout steps, hashes,
job sizing, ReplicaSet status and node pool expansion."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.sim.controllers.deployment import (
    new_rs_replicas,
    resolve_fenceposts,
    scale_down_old_plan,
    scaled_value,
)
from py_engine.sim.controllers.job import wanted_active
from py_engine.sim.controllers.podutil import fnv32a, safe_encode, template_hash
from py_engine.sim.controllers.replicaset import replicaset_status, slow_start
from py_engine.sim.controllers.statefulset import ordinal_of
from py_engine.sim.nodepool import NodePoolError, default_pool, nodes_from_description

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def deployment(replicas: int, surge: Any = None, unavailable: Any = None) -> dict[str, Any]:
    rolling = {k: v for k, v in (("maxSurge", surge), ("maxUnavailable", unavailable)) if v is not None}
    return {
        "metadata": {"name": "d"},
        "spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}},
    }


def rs(name: str, replicas: int, available: int, created: str = "2024-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": available, "replicas": replicas},
    }


def test_scaled_value_rounding() -> None:
    assert scaled_value("25%", 10, True, "25%") == 3
    assert scaled_value("25%", 10, False, "25%") == 2
    assert scaled_value(4, 10, True, "25%") == 4
    assert scaled_value("7", 10, True, "25%") == 7
    assert scaled_value(None, 4, False, "25%") == 1


def test_fenceposts_defaults_and_zero_zero() -> None:
    assert resolve_fenceposts(deployment(10)) == (3, 2)
    assert resolve_fenceposts(deployment(10, surge=0, unavailable=0)) == (0, 1)
    assert resolve_fenceposts(deployment(3, surge="50%", unavailable="50%")) == (2, 1)


def test_new_rs_scale_up_respects_surge() -> None:
    d = deployment(10, surge=2, unavailable=0)
    old = rs("old", 10, 10)
    assert new_rs_replicas(d, [old], None) == 2
    new = rs("new", 2, 0)
    assert new_rs_replicas(d, [old, new], new) == 2  # at 12 = 10 + 2 already
    assert new_rs_replicas(d, [rs("old", 8, 8), new], new) == 4


def test_old_scale_down_keeps_min_available_and_cleans_unhealthy_first() -> None:
    d = deployment(10, surge=2, unavailable=1)
    new = rs("new", 2, 2)
    plan = scale_down_old_plan(d, new, [rs("old", 10, 10)])
    assert plan == {"old": 7}  # available 12, floor 9
    new_unready = rs("new", 2, 0)
    assert scale_down_old_plan(d, new_unready, [rs("old", 10, 10)]) == {"old": 9}
    # Unhealthy old replicas go first, oldest RS first.
    plan = scale_down_old_plan(
        d, rs("new", 2, 2), [rs("b", 5, 2, "2024-01-02T00:00:00Z"), rs("a", 5, 5, "2024-01-01T00:00:00Z")]
    )
    assert plan == {"b": 2}  # 3 unhealthy removed; 9 available is the floor
    plan = scale_down_old_plan(
        deployment(10, surge=2, unavailable=3),
        rs("new", 2, 2),
        [rs("b", 5, 2, "2024-01-02T00:00:00Z"), rs("a", 5, 5, "2024-01-01T00:00:00Z")],
    )
    assert plan == {"b": 2, "a": 3}  # then 2 available ones, oldest RS first
    assert scale_down_old_plan(d, new, [rs("old", 0, 0)]) == {}


def test_template_hash_is_stable_safe_and_sensitive() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert safe_encode("0123456789") == "456789bcdf"
    t1 = {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
    t2 = {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    assert template_hash(t1) == template_hash({"spec": {"containers": [{"image": "nginx:1", "name": "c"}]}})
    assert template_hash(t1) != template_hash(t2)
    assert template_hash(t1) != template_hash(t1, collision_count=1)
    assert set(template_hash(t1)) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_slow_start_batches_and_stops_on_error() -> None:
    calls: list[int] = []

    def ok() -> Exception | None:
        calls.append(1)
        return None

    assert slow_start(10, ok) == (10, [])
    assert len(calls) == 10
    count = {"n": 0}

    def fail_from_4th() -> Exception | None:
        count["n"] += 1
        return RuntimeError("no") if count["n"] >= 4 else None

    created, errors = slow_start(100, fail_from_4th, max_workers=1)
    # Batches 1, 2 succeed; the batch of 4 fails at its first call; nothing after.
    assert created == 3 and len(errors) == 4 and count["n"] == 7


def test_job_wanted_active() -> None:
    job: dict[str, Any] = {"spec": {"parallelism": 3, "completions": 5}}
    assert wanted_active(job, 0) == 3
    assert wanted_active(job, 3) == 2
    assert wanted_active(job, 5) == 0
    assert wanted_active({"spec": {"parallelism": 2}}, 0) == 2
    assert wanted_active({"spec": {"parallelism": 2}}, 1) == 0
    assert wanted_active({"spec": {"parallelism": 2, "completions": 4, "suspend": True}}, 0) == 0


def test_replicaset_status_counts() -> None:
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2024-06-01T11:59:55Z"}
    pods = [
        {"metadata": {"labels": {"app": "x"}}, "status": {"phase": "Running", "conditions": [ready]}},
        {"metadata": {"labels": {}}, "status": {"phase": "Running", "conditions": [ready]}},
        {"metadata": {"labels": {"app": "x"}}, "status": {"phase": "Pending"}},
        {"metadata": {"labels": {"app": "x"}, "deletionTimestamp": "x"}, "status": {"phase": "Running"}},
        {"metadata": {"labels": {"app": "x"}}, "status": {"phase": "Failed"}},
    ]
    owner = {
        "metadata": {"generation": 4},
        "spec": {"minReadySeconds": 10, "template": {"metadata": {"labels": {"app": "x"}}}},
    }
    status = replicaset_status(owner, pods, NOW)
    assert status == {
        "replicas": 3,
        "fullyLabeledReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 0,
        "observedGeneration": 4,
    }
    owner["spec"]["minReadySeconds"] = 5
    assert replicaset_status(owner, pods, NOW)["availableReplicas"] == 2


def test_statefulset_ordinals() -> None:
    assert ordinal_of("web", "web-12") == 12
    assert ordinal_of("web", "web-x") is None
    assert ordinal_of("web", "webby-1") is None


def test_node_pool_expansion() -> None:
    nodes = nodes_from_description(
        {
            "pools": [
                {
                    "name": "zone-a",
                    "count": 2,
                    "labels": {"zone": "a"},
                    "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                    "capacity": {"cpu": "4", "memory": "8Gi", "pods": 10},
                    "allocatable": {"cpu": "3500m"},
                }
            ],
            "nodes": [{"name": "gpu-0", "unschedulable": True}],
        }
    )
    assert [n["metadata"]["name"] for n in nodes] == ["zone-a-0", "zone-a-1", "gpu-0"]
    first = nodes[0]
    assert first["metadata"]["labels"]["zone"] == "a"
    assert first["metadata"]["labels"]["kubernetes.io/hostname"] == "zone-a-0"
    assert first["spec"]["taints"] == [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    assert first["status"]["allocatable"] == {"cpu": "3500m", "memory": "8Gi", "pods": "10"}
    assert nodes[2]["spec"] == {"unschedulable": True}
    assert len(default_pool()) == 3
    full = {"kind": "Node", "metadata": {"name": "raw"}}
    assert nodes_from_description([full])[0]["metadata"]["name"] == "raw"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"pools": [{"name": "a", "count": -1}]}, "count"),
        ({"pools": [{"name": "a", "colour": "red"}]}, "unknown field"),
        ({"pools": [{"name": "a", "capacity": {"cpu": "lots"}}]}, "capacity.cpu"),
        ({"pools": [{"name": "a", "taints": [{"key": "k", "effect": "Sometimes"}]}]}, "effect"),
        ({"nodes": [{"name": "x"}, {"name": "x"}]}, "duplicate"),
        ({"nodes": [{"name": "Bad_Name"}]}, "not a valid node name"),
        ("nodes", "expected a list"),
    ],
)
def test_node_pool_errors(data: Any, message: str) -> None:
    with pytest.raises(NodePoolError, match=message):
        nodes_from_description(data)
