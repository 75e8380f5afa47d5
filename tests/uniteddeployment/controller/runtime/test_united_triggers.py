"""Which watch events enqueue which UnitedDeployments.

py_engine/uniteddeployment/controller/runtime/triggers.py decides it."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.uniteddeployment.controller.runtime.triggers import UnitedTriggers

pytestmark = pytest.mark.timeout(30)


def ud(name: str, app: str, adaptive: bool = False, namespace: str = "default") -> dict[str, Any]:
    topology: dict[str, Any] = {"subsets": []}
    if adaptive:
        topology["scheduleStrategy"] = {"type": "Adaptive"}
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": app}}, "topology": topology},
    }


class Cache:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.items if namespace is None or o["metadata"]["namespace"] == namespace]


class Source:
    def __init__(self, uds: list[dict[str, Any]]) -> None:
        self.ud_cache = Cache(uds)


def triggers(uds: list[dict[str, Any]]) -> tuple[UnitedTriggers, list[str], list[int]]:
    keys: list[str] = []
    inventory: list[int] = []
    source: Any = Source(uds)
    return UnitedTriggers(source, keys.append, lambda: inventory.append(1)), keys, inventory


def pod(
    app: str, node: str | None = None, phase: str = "Pending", namespace: str = "default"
) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": namespace, "labels": {"app": app}},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase},
    }


UDS = [ud("web", "web", adaptive=True), ud("api", "api"), ud("other", "web", namespace="prod")]


def test_a_pod_change_enqueues_the_unitedeployments_selecting_it() -> None:
    t, keys, inventory = triggers(UDS)
    t._on_pod("ADDED", pod("api"), None)
    assert keys == ["default/api"] and not inventory
    keys.clear()
    t._on_pod("MODIFIED", pod("api"), pod("api"))  # nothing a sync reads changed
    assert keys == []


def test_a_pod_bound_to_a_node_refreshes_node_fit_of_adaptive_unitedeployments() -> None:
    t, keys, inventory = triggers(UDS)
    t._on_pod("MODIFIED", pod("api", node="n-0", phase="Running"), pod("api"))
    assert inventory and set(keys) == {"default/web", "default/api"}  # web is Adaptive, api selects the pod


def _web_workload(owner_kind: str, owner: str) -> dict[str, Any]:
    """Workload `w` (label app=web) in default, controlled by `owner_kind`/`owner`."""
    controller = {"kind": owner_kind, "name": owner, "controller": True}
    return {
        "metadata": {
            "name": "w",
            "namespace": "default",
            "labels": {"app": "web"},
            "ownerReferences": [controller],
        }
    }


def test_owned_workloads_route_to_their_owner_and_orphans_to_selecting_unitedeployments() -> None:
    t, keys, _ = triggers(UDS)
    owned = _web_workload(owner_kind="UnitedDeployment", owner="web")
    t._on_owned("MODIFIED", owned, None)
    assert keys == ["default/web"]
    keys.clear()
    foreign = _web_workload(owner_kind="Deployment", owner="x")
    t._on_owned("ADDED", foreign, None)
    assert keys == []
    orphan = {"metadata": {"name": "w", "namespace": "default", "labels": {"app": "web"}}}
    t._on_owned("ADDED", orphan, None)
    assert keys == ["default/web"]


def test_node_changes_that_matter_enqueue_adaptive_unitedeployments_only() -> None:
    t, keys, inventory = triggers(UDS)
    node = {"metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {}, "status": {}}
    t._on_node("MODIFIED", node, dict(node))
    assert keys == [] and not inventory
    tainted = {**node, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    t._on_node("MODIFIED", tainted, node)
    assert keys == ["default/web"] and inventory
