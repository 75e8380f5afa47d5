"""Which target kinds get per-version status (py_engine.workloadspread.controller.options):
kinds compare case-insensitively and "deployment" implies "replicaset" (Kruise's
`--ws-enabled-versioned-status`), nothing else implies anything. Written for what mutation
testing found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from py_engine.workloadspread.controller.options import DEFAULT_OPTIONS, ReconcileOptions

pytestmark = pytest.mark.timeout(30)


def test_deployment_implies_replicaset_whatever_its_case() -> None:
    options = ReconcileOptions(versioned_kinds=frozenset({"Deployment"}))
    assert options.versioned("ReplicaSet") and options.versioned("replicaset")
    assert options.versioned("Deployment")
    assert not options.versioned("CloneSet")


def test_without_deployment_replicaset_is_only_versioned_when_named() -> None:
    clonesets = ReconcileOptions(versioned_kinds=frozenset({"cloneset"}))
    assert clonesets.versioned("CloneSet")
    assert not clonesets.versioned("ReplicaSet") and not clonesets.versioned("Deployment")
    assert ReconcileOptions(versioned_kinds=frozenset({"REPLICASET"})).versioned("ReplicaSet")
    assert not ReconcileOptions(versioned_kinds=frozenset()).versioned("ReplicaSet")


def test_the_default_versions_deployments_and_replicasets_only() -> None:
    assert DEFAULT_OPTIONS.versioned("Deployment") and DEFAULT_OPTIONS.versioned("ReplicaSet")
    assert not DEFAULT_OPTIONS.versioned("CloneSet") and not DEFAULT_OPTIONS.versioned("StatefulSet")
