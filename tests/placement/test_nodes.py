"""Compact node facts for node-fit simulation."""

from __future__ import annotations

from typing import Any

from py_engine.placement.eligibility import build_eligibility_input, decide_eligibility
from py_engine.placement.inventory import NodeInventory, build_node_inventory, node_facts
from py_engine.policy import create_engine


def _node(
    name: str, cpu: str = "2", memory: str = "4Gi", pods: str | None = "10", **spec: Any
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory}
    if pods is not None:
        allocatable["pods"] = pods
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": name[-1]}},
        "spec": spec,
        "status": {"allocatable": allocatable, "capacity": {"cpu": "99"}},
    }


def _bound(
    node: str, cpu: str = "500m", memory: str = "1Gi", phase: str = "Running", **meta: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{node}", **meta},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        },
        "status": {"phase": phase},
    }


def test_free_resources_subtract_bound_non_terminal_pods() -> None:
    pods = [
        _bound("n-a"),
        _bound("n-a", cpu="250m", deletionTimestamp="2024-06-01T11:00:00Z"),
        _bound("n-a", phase="Succeeded"),
        _bound("n-b", cpu="1500m"),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending"}, "spec": {"containers": []}},
    ]
    inventory = build_node_inventory([_node("n-a"), _node("n-b", pods=None)], pods)
    a, b = inventory[0], inventory[1]
    assert a == {
        "name": "n-a",
        "labels": {"zone": "a"},
        "taints": [],
        "unschedulable": False,
        "free": {"cpu": 1.25, "memory": 2 * 2**30, "pods": 8},
    }
    assert b["free"] == {"cpu": 0.5, "memory": 3 * 2**30}  # no pod capacity reported: no pod limit


def test_taints_cordon_and_missing_allocatable() -> None:
    node = _node(
        "n-c",
        unschedulable=True,
        taints=[
            {"key": "spot", "value": "true", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"}
        ],
    )
    node["status"] = {}
    facts = node_facts(node)
    assert facts["unschedulable"] is True
    assert facts["taints"] == [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
    assert facts["free"] == {"cpu": 0.0, "memory": 0}


def test_inventory_is_a_sequence_with_a_content_version() -> None:
    one = build_node_inventory([_node("n-a"), _node("n-b")], [])
    same = build_node_inventory([_node("n-a"), _node("n-b")], [])
    busier = build_node_inventory([_node("n-a"), _node("n-b")], [_bound("n-a")])
    assert len(one) == 2 and [n["name"] for n in one] == ["n-a", "n-b"] and list(one[0:1]) == [one[0]]
    assert one.version == same.version != busier.version
    assert "2 nodes" in repr(one)
    assert isinstance(one, NodeInventory)


def test_facts_are_what_the_policy_reads() -> None:
    inventory = build_node_inventory(
        [_node("n-a", cpu="1"), _node("n-b", cpu="4")], [_bound("n-a", cpu="800m")]
    )
    spread = {
        "spec": {
            "subsets": [
                {
                    "name": "a",
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                    },
                },
                {
                    "name": "b",
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]
                    },
                },
            ]
        }
    }
    pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}]}}
    engine = create_engine()
    try:
        assert decide_eligibility(
            engine, build_eligibility_input(pod, spread["spec"]["subsets"], [], list(inventory))
        ).eligible == ("a", "b")
        pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "250m"
        decision = decide_eligibility(
            engine, build_eligibility_input(pod, spread["spec"]["subsets"], [], list(inventory))
        )
    finally:
        engine.close()
    assert decision.eligible == ("b",)
