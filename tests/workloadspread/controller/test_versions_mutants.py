"""The workload's latest version (py_engine.workloadspread.controller.versions,
docs/design-workloadspread.md §2.3) on its own: which targets are versioned, the
ReplicaSet's hash label, the Deployment's matching ReplicaSet (its template compared
without the hash label) and a versioned CloneSet's update revision. Written for what
mutation testing found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.model.workloadspread import WorkloadSpread
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.options import ReconcileOptions
from py_engine.workloadspread.controller.versions import is_versioned, latest_version

pytestmark = pytest.mark.timeout(30)

IGNORED = "versionIgnored"
DEFAULT = ReconcileOptions()
CLONESETS = ReconcileOptions(versioned_kinds=frozenset({"CloneSet"}))


def spread(api_version: str, kind: str, name: str = "app") -> WorkloadSpread:
    return WorkloadSpread.from_object(
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": api_version, "kind": kind, "name": name},
                "subsets": [{"name": "a"}],
            },
        }
    )


def deployment(labels: dict[str, str] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {} if labels is None else {"labels": labels}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app", "uid": "d-uid"},
        "spec": {"template": {"metadata": metadata, "spec": {"containers": [{"name": "c", "image": "v2"}]}}},
    }


def replicaset(name: str, template_labels: dict[str, str], hash_label: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "labels": {"pod-template-hash": hash_label},
            "ownerReferences": [{"kind": "Deployment", "name": "app", "uid": "d-uid", "controller": True}],
        },
        "spec": {
            "template": {
                "metadata": {"labels": template_labels},
                "spec": {"containers": [{"name": "c", "image": "v2"}]},
            }
        },
    }


def cloneset(metadata: dict[str, Any] | None, status: dict[str, Any] | None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"}
    if metadata is not None:
        obj["metadata"] = metadata
    if status is not None:
        obj["status"] = status
    return obj


CS = spread("apps.kruise.io/v1alpha1", "CloneSet", "cs")
RS = spread("apps/v1", "ReplicaSet")
DEPLOY = spread("apps/v1", "Deployment")


def test_only_replicaset_deployment_and_an_enabled_cloneset_are_versioned() -> None:
    statefulset = spread("apps/v1", "StatefulSet")
    custom = spread("game.io/v1", "Game")
    assert is_versioned(RS, DEFAULT) and is_versioned(DEPLOY, DEFAULT)
    assert not is_versioned(CS, DEFAULT) and is_versioned(CS, CLONESETS)
    everything = ReconcileOptions(versioned_kinds=frozenset({"statefulset", "game", "cloneset"}))
    assert not is_versioned(statefulset, everything)
    assert not is_versioned(custom, everything)
    # A StatefulSet with an update revision still has no version.
    workload = {
        "metadata": {"generation": 1},
        "status": {"observedGeneration": 1, "updateRevision": "app-5f6c"},
    }
    assert latest_version(statefulset, workload, [], everything) == IGNORED


def test_a_missing_workload_has_no_version() -> None:
    assert latest_version(RS, None, [], DEFAULT) == IGNORED
    assert latest_version(DEPLOY, None, [], DEFAULT) == IGNORED
    assert latest_version(CS, None, [], CLONESETS) == IGNORED


def test_a_replicaset_is_at_its_hash_label_and_without_one_at_none() -> None:
    def rs(labels: dict[str, Any]) -> dict[str, Any]:
        return {"metadata": {"name": "app", "labels": labels}}

    assert latest_version(RS, rs({"pod-template-hash": "5f6c"}), [], DEFAULT) == "5f6c"
    assert latest_version(RS, rs({}), [], DEFAULT) == IGNORED
    assert latest_version(RS, rs({"pod-template-hash": ""}), [], DEFAULT) == IGNORED
    assert latest_version(RS, rs({"pod-template-hash": 7}), [], DEFAULT) == IGNORED


def test_a_deployment_is_at_the_replicaset_whose_template_without_the_hash_label_is_its_own() -> None:
    new = replicaset("app-new", {"app": "x", "pod-template-hash": "h2"}, "h2")
    old = replicaset("app-old", {"app": "old", "pod-template-hash": "h1"}, "h1")
    before = copy.deepcopy([old, new])
    assert latest_version(DEPLOY, deployment({"app": "x"}), [old, new], DEFAULT) == "h2"
    assert [old, new] == before  # the ReplicaSets' templates keep their hash label
    assert latest_version(DEPLOY, deployment({"app": "x"}), [old, new], DEFAULT) == "h2"


def test_other_labels_still_tell_replicasets_apart() -> None:
    old = replicaset("app-old", {"app": "old", "pod-template-hash": "h1"}, "h1")
    with pytest.raises(ReconcileError) as raised:
        latest_version(DEPLOY, deployment({"app": "x"}), [old], DEFAULT)
    assert str(raised.value) == "the latest ReplicaSet of Deployment 'app' is not found (not created yet?)"


def test_a_template_whose_only_label_is_the_hash_matches_one_without_labels() -> None:
    only_hash = replicaset("app-new", {"pod-template-hash": "h3"}, "h3")
    assert latest_version(DEPLOY, deployment(None), [only_hash], DEFAULT) == "h3"


def test_a_matching_replicaset_without_a_usable_hash_label_is_not_the_latest() -> None:
    unlabelled = replicaset("app-new", {"app": "x"}, "")
    with pytest.raises(ReconcileError, match="not found"):
        latest_version(DEPLOY, deployment({"app": "x"}), [unlabelled], DEFAULT)


@pytest.mark.parametrize(
    ("revision", "version"),
    [
        ("cs-7d9f", "7d9f"),
        ("my-app-7d9f", "7d9f"),
        ("7d9f", "7d9f"),
        ("", IGNORED),
        (None, IGNORED),
        (5, IGNORED),
    ],
)
def test_a_versioned_cloneset_is_at_its_update_revisions_last_part(revision: Any, version: str) -> None:
    status: dict[str, Any] = {"observedGeneration": 2}
    if revision is not None:
        status["updateRevision"] = revision
    assert latest_version(CS, cloneset({"generation": 2}, status), [], CLONESETS) == version


def test_a_cloneset_that_has_not_observed_its_generation_has_no_version_yet() -> None:
    for metadata, status in (
        ({"generation": 3}, {"observedGeneration": 2, "updateRevision": "cs-7d9f"}),
        ({"generation": 1}, {"updateRevision": "cs-7d9f"}),
        ({"generation": 1}, None),
    ):
        with pytest.raises(ReconcileError) as raised:
            latest_version(CS, cloneset(metadata, status), [], CLONESETS)
        assert str(raised.value) == "CloneSet 'cs' has not observed its latest generation yet"


def test_a_cloneset_without_generations_reads_both_as_zero() -> None:
    assert latest_version(CS, cloneset(None, {"updateRevision": "cs-7d9f"}), [], CLONESETS) == "7d9f"
    assert latest_version(CS, cloneset({"name": "cs"}, None), [], CLONESETS) == IGNORED
