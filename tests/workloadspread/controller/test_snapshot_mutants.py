"""One sync's inputs read from a flat list of objects (py_engine.workloadspread.controller.snapshot):
which spread is chosen, the errors that say why none can be, and what of the list the sync
sees (its namespace's objects, every Node, the caller's whitelist before the ConfigMap's).
Written for what mutation testing found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kube_objects import workload_spread
from py_engine.model.workloads import parse_whitelist
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.snapshot import snapshot_from_objects

pytestmark = pytest.mark.timeout(30)

WHITELIST_KEY = "WorkloadSpread_Watch_Custom_Workload_WhiteList"


def ws(name: str, namespace: str = "prod") -> dict[str, Any]:
    return workload_spread(name, [{"name": "a"}], namespace=namespace, kind="ReplicaSet")


def thing(kind: str, name: str, namespace: str | None, api_version: str = "v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def config_map(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kruise-configuration", "namespace": "kruise-system"},
        "data": {WHITELIST_KEY: value},
    }


def test_the_named_spread_is_chosen_among_several() -> None:
    objects = [ws("b"), ws("a")]
    assert snapshot_from_objects(objects, "a").spread is objects[1]
    assert snapshot_from_objects(objects, "b").spread is objects[0]
    assert snapshot_from_objects([ws("a")]).spread["metadata"]["name"] == "a"
    with pytest.raises(ReconcileError) as raised:
        snapshot_from_objects(objects, "c")
    assert str(raised.value) == "no WorkloadSpread named 'c' in the state"


def test_several_spreads_without_a_name_are_listed_sorted() -> None:
    with pytest.raises(ReconcileError) as raised:
        snapshot_from_objects([ws("b"), thing("Pod", "p", "prod"), ws("a")])
    assert str(raised.value) == "the state holds several WorkloadSpreads (a, b); choose one with --name"


def test_a_state_without_a_spread_says_which_groups_count() -> None:
    with pytest.raises(ReconcileError) as raised:
        snapshot_from_objects([thing("Pod", "p", "prod")])
    assert str(raised.value) == (
        "the state holds no WorkloadSpread (apiVersion spreadgate.dev/v1alpha1 or apps.kruise.io/v1alpha1)"
    )


def test_a_malformed_spread_or_configmap_is_a_one_line_error() -> None:
    broken = ws("a")
    del broken["spec"]["targetRef"]
    with pytest.raises(ReconcileError) as raised:
        snapshot_from_objects([broken])
    assert str(raised.value) == "WorkloadSpread: spec.targetRef: is required"
    with pytest.raises(ReconcileError) as raised:
        snapshot_from_objects([ws("a"), config_map('{"workloads": 3}')])
    assert str(raised.value) == (
        f"ConfigMap kruise-configuration: {WHITELIST_KEY}: expected an object with a 'workloads' list"
    )


def test_the_sync_sees_its_namespace_every_node_and_both_whitelists() -> None:
    workload = thing("ReplicaSet", "web", "prod", api_version="apps/v1")
    local_pod, far_pod = thing("Pod", "p1", "prod"), thing("Pod", "p2", "staging")
    local_rs, far_rs = (
        thing("ReplicaSet", "web-1", "prod", "apps/v1"),
        thing("ReplicaSet", "x", "staging", "apps/v1"),
    )
    node = thing("Node", "n1", None)
    custom = parse_whitelist('{"workloads":[{"Group":"game.io","Kind":"Game"}]}')
    listed = config_map('{"workloads":[{"Group":"mock.io","Kind":"Mock"}]}')
    objects = [
        ws("a"),
        thing("ReplicaSet", "web", "staging", api_version="apps/v1"),
        workload,
        far_pod,
        local_pod,
        far_rs,
        local_rs,
        node,
        listed,
    ]
    view = snapshot_from_objects(objects, custom=custom).view
    assert view.workload is workload
    assert view.pods == [local_pod]
    assert view.replica_sets == [workload, local_rs]
    assert view.nodes == {"n1": node}
    assert [(w.group, w.kind) for w in view.whitelist.workloads] == [("game.io", "Game"), ("mock.io", "Mock")]
