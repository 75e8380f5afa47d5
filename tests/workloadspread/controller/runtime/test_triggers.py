"""Which spreads a pod or workload event enqueues (py_engine/workloadspread/controller/runtime/triggers.py):
the owner chain is walked through the kinds the workload registry puts on one
(`OWNER_CHAIN_KINDS`, py_engine/model/workloads.py), and through no other kind."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.model.workloads import OWNER_CHAIN_KINDS
from py_engine.workloadspread.controller.runtime.triggers import Triggers

pytestmark = pytest.mark.timeout(30)
JSON = dict[str, Any]


def owned_by(name: str, api_version: str, kind: str, owner: str | None) -> JSON:
    metadata: JSON = {"name": name, "namespace": "default"}
    if owner is not None:
        metadata["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": owner, "controller": True}
        ]
    return {"metadata": metadata}


def spread(name: str, api_version: str, kind: str, target: str) -> JSON:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"targetRef": {"apiVersion": api_version, "kind": kind, "name": target}},
    }


class Source:
    """The spreads, and the workloads a trigger may look up by (group version, kind, name)."""

    def __init__(self, spreads: list[JSON], workloads: dict[tuple[str, str, str], JSON]) -> None:
        self._spreads = spreads
        self._workloads = workloads
        self.looked_up: list[tuple[str, str]] = []

    def spreads(self) -> list[JSON]:
        return self._spreads

    def workload(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        self.looked_up.append((kind, name))
        return self._workloads.get((api_version, kind, name))


SPREADS = [
    spread("by-deployment", "apps/v1", "Deployment", "web"),
    spread("by-replicaset", "apps/v1", "ReplicaSet", "web-h1"),
    spread("by-statefulset", "apps/v1", "StatefulSet", "db"),
    spread("by-custom", "games.example/v1", "ReplicaSet", "gs"),
]
WORKLOADS = {
    ("apps/v1", "ReplicaSet", "web-h1"): owned_by("web-h1", "apps/v1", "Deployment", "web"),
    ("apps/v1", "StatefulSet", "db"): owned_by("db", "apps/v1", "Deployment", "not-followed"),
    ("games.example/v1", "ReplicaSet", "gs"): owned_by("gs", "apps/v1", "Deployment", "web"),
}


def triggers() -> tuple[Triggers, Source, list[str]]:
    keys: list[str] = []
    source = Source(SPREADS, WORKLOADS)
    fake: Any = source
    return Triggers(fake, keys.append), source, keys


def test_the_registry_puts_the_replicaset_on_the_deployments_owner_chain() -> None:
    assert ("apps", "ReplicaSet") in OWNER_CHAIN_KINDS
    assert ("apps", "Deployment") not in OWNER_CHAIN_KINDS


def test_a_pod_of_a_replicaset_reaches_the_spreads_of_the_replicaset_and_of_its_deployment() -> None:
    t, _, keys = triggers()
    t._on_pod("ADDED", owned_by("p", "apps/v1", "ReplicaSet", "web-h1"), None)
    assert keys == ["default/by-replicaset", "default/by-deployment"]


def test_a_pod_of_a_kind_off_the_chain_reaches_only_its_owners_spreads() -> None:
    t, source, keys = triggers()
    t._on_pod("ADDED", owned_by("db-0", "apps/v1", "StatefulSet", "db"), None)
    assert keys == ["default/by-statefulset"]
    assert source.looked_up == []  # its owner is not looked up


def test_a_kind_named_like_a_chain_kind_in_another_group_is_not_walked() -> None:
    t, source, keys = triggers()
    t._on_pod("ADDED", owned_by("gs-0", "games.example/v1", "ReplicaSet", "gs"), None)
    assert keys == ["default/by-custom"] and source.looked_up == []
    keys.clear()
    t._on_workload(
        "games.example/v1", "ReplicaSet", "ADDED", WORKLOADS[("games.example/v1", "ReplicaSet", "gs")], None
    )
    assert keys == ["default/by-custom"]


def test_a_replicaset_event_reaches_its_deployments_spreads() -> None:
    t, _, keys = triggers()
    t._on_workload("apps/v1", "ReplicaSet", "ADDED", WORKLOADS[("apps/v1", "ReplicaSet", "web-h1")], None)
    assert keys == ["default/by-replicaset", "default/by-deployment"]


def test_a_pod_whose_replicaset_is_not_cached_reaches_the_replicasets_spreads_only() -> None:
    t, _, keys = triggers()
    t._on_pod("ADDED", owned_by("p", "apps/v1", "ReplicaSet", "gone"), None)
    assert keys == []
    t._on_pod("ADDED", owned_by("q", "apps/v1", "ReplicaSet", "web-h1"), None)
    assert keys == ["default/by-replicaset", "default/by-deployment"]


def test_an_orphan_pod_enqueues_nothing() -> None:
    t, _, keys = triggers()
    t._on_pod("ADDED", owned_by("p", "", "", None), None)
    assert keys == []
