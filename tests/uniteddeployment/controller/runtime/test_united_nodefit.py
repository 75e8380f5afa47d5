"""Node fit before allocating: the subset policy's verdict over a node inventory, the annotation
that turns it off, and how the pure planner uses `no_node_fit`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.kube_objects import united_deployment
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.placement.inventory import build_node_inventory
from py_engine.policy import create_engine
from py_engine.uniteddeployment.controller.plan import plan
from py_engine.uniteddeployment.controller.runtime.nodefit import (
    NODE_FIT_ANNOTATION,
    NodeFit,
    node_fit_enabled,
    unfit_subsets,
)
from py_engine.uniteddeployment.controller.state import UnitedState

pytestmark = pytest.mark.timeout(60)
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
POOL = "node.spreadgate.dev/pool"


def node(
    name: str, pool: str, *, taints: list[dict[str, str]] | None = None, cpu: str = "4"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {POOL: pool}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pool_term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": POOL, "operator": "In", "values": [pool]}]}


def ud(
    schedule: str = "Adaptive",
    annotations: dict[str, str] | None = None,
    cpu: str = "1",
    patch_cpu: str | None = None,
) -> UnitedDeployment:
    second: dict[str, Any] = {"name": "b", "nodeSelectorTerm": _pool_term("b")}
    if patch_cpu:
        second["patch"] = {
            "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": patch_cpu}}}]}
        }
    first = {"name": "a", "maxReplicas": 3, "nodeSelectorTerm": _pool_term("a")}
    pod_spec = {"containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    obj = united_deployment(
        "web",
        [first, second],
        replicas=5,
        pod_spec=pod_spec,
        workload_selector=False,
        uid="u1",
        generation=1,
        annotations=annotations or {},
    )
    obj["spec"]["topology"]["scheduleStrategy"] = {"type": schedule}
    return UnitedDeployment.from_object(obj)


@pytest.fixture(scope="module")
def engine() -> Any:
    created = create_engine()
    yield created
    created.close()


def test_a_tainted_pool_has_no_fitting_node(engine: Any) -> None:
    taint = [{"key": "blocked", "value": "x", "effect": "NoSchedule"}]
    inventory = build_node_inventory([node("a-0", "a", taints=taint), node("b-0", "b")], [])
    assert unfit_subsets(engine, ud(), inventory) == frozenset({"a"})
    untainted = build_node_inventory([node("a-0", "a"), node("b-0", "b")], [])
    assert unfit_subsets(engine, ud(), untainted) == frozenset()


def test_requests_and_the_subset_patch_are_checked_against_free_resources(engine: Any) -> None:
    inventory = build_node_inventory([node("a-0", "a", cpu="2"), node("b-0", "b", cpu="2")], [])
    assert unfit_subsets(engine, ud(cpu="3"), inventory) == frozenset({"a", "b"})
    assert unfit_subsets(engine, ud(cpu="3", patch_cpu="1"), inventory) == frozenset({"a"})


def test_the_check_applies_to_adaptive_default_mode_unless_turned_off() -> None:
    assert node_fit_enabled(ud())
    assert not node_fit_enabled(ud(schedule="Fixed"))
    assert not node_fit_enabled(ud(annotations={NODE_FIT_ANNOTATION: "false"}))
    assert node_fit_enabled(ud(annotations={NODE_FIT_ANNOTATION: "true"}))
    checker = NodeFit(engine_factory=lambda: pytest.fail("no engine needed"))
    assert checker.unfit(ud(schedule="Fixed"), []) == frozenset()


def test_the_planner_gives_an_unfit_subset_only_what_it_has_placed() -> None:
    result = plan(UnitedState(ud=ud(), no_node_fit=frozenset({"a"})), NOW)
    assert {n: s.replicas for n, s in result.subsets.items()} == {"a": 0, "b": 5}
    fitting = plan(UnitedState(ud=ud()), NOW)
    assert {n: s.replicas for n, s in fitting.subsets.items()} == {"a": 3, "b": 2}
    fixed = plan(UnitedState(ud=ud(schedule="Fixed"), no_node_fit=frozenset({"a"})), NOW)
    assert {n: s.replicas for n, s in fixed.subsets.items()} == {"a": 3, "b": 2}  # Adaptive only
