"""The node-fit query over a pod template and subsets of nodes (`py_engine.placement.fit`): the
same decision the subset policy gives for the whole input, whichever product asks."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache, build_eligibility_input, decide_eligibility
from py_engine.placement.fit import SubsetTerms, fitting_subsets
from py_engine.placement.inventory import build_node_inventory
from py_engine.policy import create_engine

pytestmark = pytest.mark.timeout(60)
POOL = "node.spreadgate.dev/pool"


def node(name: str, pool: str, *, cpu: str = "4", taint: bool = False) -> dict[str, Any]:
    taints = [{"key": "spot", "value": "true", "effect": "NoSchedule"}] if taint else []
    return {
        "metadata": {"name": name, "labels": {POOL: pool}},
        "spec": {"taints": taints},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": POOL, "operator": "In", "values": [pool]}]}


POD = {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}}
SPOT_TOLERATION = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def engine() -> Any:
    created = create_engine()
    yield created
    created.close()


def test_policy_subset_is_the_policy_input_shape() -> None:
    patch = {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}}
    assert SubsetTerms("a").policy_subset() == {"name": "a"}
    assert SubsetTerms("b", term("b"), (SPOT_TOLERATION,), patch).policy_subset() == {
        "name": "b",
        "requiredNodeSelectorTerm": term("b"),
        "tolerations": [SPOT_TOLERATION],
        "patch": patch,
    }


def test_only_subsets_with_a_node_the_pod_fits_are_eligible(engine: Any) -> None:
    inventory = build_node_inventory(
        [
            node("a1", "a", cpu="1"),
            node("b1", "b"),
            node("s1", "spot", taint=True),
            node("t1", "tolerated", taint=True),
        ],
        [],
    )
    subsets = [
        SubsetTerms("small", term("a")),
        SubsetTerms("big", term("b")),
        SubsetTerms("spot", term("spot")),
        SubsetTerms("tolerated", term("tolerated"), (SPOT_TOLERATION,)),
        SubsetTerms(
            "patched",
            term("a"),
            patch={"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "500m"}}}]}},
        ),
    ]
    decision = fitting_subsets(
        engine, POD, subsets, inventory, cache=EligibilityCache(), node_classes=NodeClassCache()
    )
    assert decision.eligible == ("big", "tolerated", "patched")
    assert set(decision.rejected) == {"small", "spot"}
    # the reduction to node classes and the cache change nothing: the same as the whole input, unreduced
    whole = decide_eligibility(
        engine, build_eligibility_input(POD, [s.policy_subset() for s in subsets], (), list(inventory))
    )
    assert decision == whole
