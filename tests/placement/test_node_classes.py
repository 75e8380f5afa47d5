"""Reducing the node inventory to policy node classes gives the policy the same answers."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_engine.placement.classes import constrained_label_keys, policy_node_classes
from py_engine.placement.eligibility import build_eligibility_input, decide_eligibility
from py_engine.policy import create_engine

ENGINE = create_engine()
ZONES = ["z1", "z2", "z3"]

SPREAD = {
    "spec": {
        "subsets": [
            {
                "name": "a",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]
                },
            },
            {
                "name": "b",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]
                },
                "tolerations": [{"key": "spot", "operator": "Exists"}],
            },
            {
                "name": "c",
                "patch": {
                    "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}
                },
            },
        ]
    }
}

nodes_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from([f"n{i}" for i in range(40)]),
            "labels": st.fixed_dictionaries(
                {"zone": st.sampled_from(ZONES), "host": st.text("abc", min_size=1, max_size=3)}
            ),
            "taints": st.sampled_from(
                [
                    [],
                    [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
                    [{"key": "x", "effect": "PreferNoSchedule"}],
                ]
            ),
            "unschedulable": st.booleans(),
            "free": st.fixed_dictionaries(
                {
                    "cpu": st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 4.0]),
                    "memory": st.sampled_from([0, 2**28, 2**30, 2**33]),
                    "pods": st.integers(0, 3),
                }
            ),
        }
    ),
    max_size=25,
)


def pod(cpu: str, memory: str, zone: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
    }
    if zone:
        spec["nodeSelector"] = {"zone": zone}
    return {"metadata": {"name": "p"}, "spec": spec}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes_strategy,
    st.sampled_from(["100m", "500m", "1", "3"]),
    st.sampled_from(["64Mi", "512Mi", "4Gi"]),
    st.sampled_from([None, "z1", "z3"]),
)
def test_classes_decide_like_the_full_inventory(
    nodes: list[dict[str, Any]], cpu: str, memory: str, zone: str | None
) -> None:
    p = pod(cpu, memory, zone)
    keys, by_name = constrained_label_keys(p, SPREAD["spec"]["subsets"])
    classes = policy_node_classes(nodes, keys, keep_names=by_name)
    full = decide_eligibility(ENGINE, build_eligibility_input(p, SPREAD["spec"]["subsets"], nodes=nodes))
    reduced = decide_eligibility(ENGINE, build_eligibility_input(p, SPREAD["spec"]["subsets"], nodes=classes))
    assert full.eligible == reduced.eligible
    assert len(classes) <= len(nodes)


def test_a_thousand_nodes_over_three_zones_become_a_few_classes() -> None:
    nodes = [
        {
            "name": f"n{i}",
            "labels": {"zone": ZONES[i % 3], "kubernetes.io/hostname": f"n{i}"},
            "taints": [],
            "free": {"cpu": 4.0, "memory": 2**34, "pods": 100},
        }
        for i in range(1000)
    ]
    keys, by_name = constrained_label_keys(pod("1", "1Gi", None), SPREAD["spec"]["subsets"])
    assert keys == {"zone"} and not by_name
    assert len(policy_node_classes(nodes, keys, keep_names=False)) == 3
    assert len(policy_node_classes(nodes, keys, keep_names=True)) == 1000


def test_reduction_is_reused_for_one_inventory_version() -> None:
    from py_engine.placement.classes import NodeClassCache
    from py_engine.placement.inventory import NodeInventory

    cache = NodeClassCache()
    inventory = NodeInventory(
        [
            {
                "name": f"n{i}",
                "labels": {"zone": ZONES[i % 3]},
                "taints": [],
                "free": {"cpu": 1.0, "memory": 2**30, "pods": 5},
            }
            for i in range(30)
        ]
    )
    first = cache.classes(inventory, frozenset({"zone"}), False)
    assert cache.classes(inventory, frozenset({"zone"}), False) is first
    assert cache.classes(inventory, frozenset({"zone", "x"}), False) is not first
    changed = NodeInventory([*inventory][:-1])
    assert cache.classes(changed, frozenset({"zone"}), False) is not first
    assert NodeClassCache().classes(inventory, frozenset({"zone"}), False) is not first  # owned, not global
