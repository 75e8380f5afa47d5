"""What a UnitedDeployment may take over, delete or release (issues 24 and 25).

Issue 24, finding 2: an orphaned Deployment of another team that carries a subset-name label and
matches an attacker-chosen selector was adopted and its template overwritten, or deleted when its
subset name was not in the UnitedDeployment. Now only orphans that name the UnitedDeployment are
adopted, and an orphan is never deleted. Issue 25: owned workloads the selector no longer matches
are released, and pods belong to the workload that controls them.
"""

from __future__ import annotations

import copy
from typing import Any

from test_ud_plan import pod, run, workload
from ud_testkit import ud_object

from py_engine.model.ud_constants import CREATED_BY_ANNOTATION
from py_engine.model.ud_constants import RESERVED_POD_LABEL as RESERVED


def names(objects: tuple[dict[str, Any], ...], kind: str | None = None) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objects if kind is None or o["kind"] == kind)


def test_an_orphan_of_another_team_is_neither_adopted_nor_deleted() -> None:
    foreign = workload("team-b-api", "a", 5, owned=False)  # matches app=web, subset a
    stray = workload("team-b-batch", "zz", 3, owned=False)  # a subset name the UD does not have
    result = run([ud_object(2, [{"name": "a"}]), foreign, stray])
    assert names(result.update) == [] and names(result.delete) == []
    assert [o["metadata"]["generateName"] for o in result.create if o["kind"] == "Deployment"] == ["web-a-"]


def test_an_orphan_naming_the_ud_is_adopted_by_annotation_or_revision_label() -> None:
    annotated = workload("web-a-1", "a", 2, owned=False)
    annotated["metadata"]["annotations"] = {CREATED_BY_ANNOTATION: "web"}
    kruise = workload("web-b-1", "b", 1, owned=False)
    kruise["metadata"]["labels"] = {
        "app": "web",
        "apps.kruise.io/subset-name": "b",
        "apps.kruise.io/controller-revision-hash": "web-7f9c5d6b4",
    }
    other = workload("web-c-1", "c", 1, owned=False, revision="webx-7f9c5d6b4")  # another UD's revision
    result = run([ud_object(4, [{"name": "a"}, {"name": "b"}, {"name": "c"}]), annotated, kruise, other])
    assert names(result.update, "Deployment") == ["web-a-1", "web-b-1"]
    assert all(o["metadata"]["ownerReferences"][-1]["uid"] == "ud-uid-1" for o in result.update)
    assert "web-c-1" not in names(result.delete)


def test_orphans_are_never_deleted_even_when_they_name_the_ud() -> None:
    owned = workload("web-a-1", "a", 2)
    duplicate = workload("web-a-2", "a", 2, owned=False, revision="web-7f9c5d6b4")
    gone = workload("web-old-1", "old", 2, owned=False, revision="web-7f9c5d6b4")
    result = run([ud_object(2, [{"name": "a"}]), owned, duplicate, gone])
    assert names(result.delete) == []
    assert "web-a-2" not in names(result.update)


def test_created_workloads_name_their_unitedeployment() -> None:
    result = run([ud_object(2, [{"name": "a"}])])
    created = [o for o in result.create if o["kind"] == "Deployment"]
    assert created[0]["metadata"]["annotations"][CREATED_BY_ANNOTATION] == "web"


def test_an_owned_workload_the_selector_no_longer_matches_is_released() -> None:
    kept = workload("web-a-1", "a", 2)
    moved = workload("web-b-1", "b", 2)
    moved["metadata"]["labels"]["app"] = "moved-away"
    other_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}
    moved["metadata"]["ownerReferences"].append(other_ref)
    result = run([ud_object(4, [{"name": "a"}, {"name": "b"}]), kept, moved])
    assert [o["metadata"]["name"] for o in result.release] == ["web-b-1"]
    assert result.release[0]["metadata"]["ownerReferences"] == [other_ref]
    assert "web-b-1" not in names(result.update) + names(result.delete)
    assert [o["metadata"]["generateName"] for o in result.create if o["kind"] == "Deployment"] == ["web-b-"]


def test_a_refused_allocation_still_releases() -> None:
    moved = workload("web-a-1", "a", 2)
    moved["metadata"]["labels"]["app"] = "moved-away"
    result = run([ud_object(2, [{"name": "a", "replicas": 3}]), moved])
    assert result.refused and names(result.release) == ["web-a-1"]


def _owned_by(p: dict[str, Any], kind: str, name: str, api_version: str = "apps/v1") -> dict[str, Any]:
    p = copy.deepcopy(p)
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": name, "controller": True}
    ]
    return p


def test_pods_belong_to_the_workload_that_controls_them() -> None:
    deploy = workload("web-a-1", "a", 3, ready=1)
    mine_rs = _owned_by(
        pod("web-a-1-5c7d9-x", "a", labels={"pod-template-hash": "5c7d9"}), "ReplicaSet", "web-a-1-5c7d9"
    )
    mine_direct = _owned_by(pod("web-a-1-y", "a"), "Deployment", "web-a-1")
    foreign = _owned_by(pod("team-b-z", "a"), "ReplicaSet", "team-b-7f8g9")
    orphan = pod("loose", "a")  # no controller: the workload's selector adopts it, as its controller would
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}
    obj = ud_object(3, [{"name": "a"}], schedule=schedule)
    result = run([obj, deploy, mine_rs, mine_direct, foreign, orphan])
    relabelled = names(result.update, "Pod")
    assert "team-b-z" not in relabelled
    assert relabelled == ["loose", "web-a-1-5c7d9-x", "web-a-1-y"]


def test_a_refused_allocation_still_relabels_reserved_pods() -> None:
    """Kruise judges reserved pods before allocating: a refusal (min > max) still writes their label."""
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}
    obj = ud_object(3, [{"name": "a", "minReplicas": 3, "maxReplicas": 2}, {"name": "b"}], schedule=schedule)
    revision = run([ud_object(3, [{"name": "a"}], schedule=schedule)]).status[
        "updatedRevision"
    ]  # template only
    deploy = workload("web-a-1", "a", 2, ready=1, revision=revision)
    stuck = _owned_by(pod("web-a-1-p", "a", revision=revision, pending_for=120), "Deployment", "web-a-1")
    result = run([obj, deploy, stuck])
    assert result.refused and result.refusal == "allocation"
    assert [(o["metadata"]["name"], o["metadata"]["labels"][RESERVED]) for o in result.update] == [
        ("web-a-1-p", "true")
    ]
    assert result.create == () and not result.status_changed
