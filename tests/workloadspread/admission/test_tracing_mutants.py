"""Owner references as the tracer reads them, field by field (py_engine/workloadspread/admission/tracing.py;
mutation survivors of run A2, MUTATION-admission.md)."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import NOW, Objects, owner_ref, pod, spread, subset, workload

from py_engine.model.workloads import whitelist_from_entries
from py_engine.workloadspread.admission.context import AdmissionContext, OwnerNotFound
from py_engine.workloadspread.admission.tracing import find_spread

SUBSETS = [subset("a", 2), subset("b")]


def _ctx(objects: list[dict[str, Any]], entries: list[dict[str, Any]] | None = None) -> AdmissionContext:
    return AdmissionContext(
        now=NOW, lookup=Objects(objects).lookup, whitelist=whitelist_from_entries(entries)
    )


def _not_found(the_pod: dict[str, Any], ctx: AdmissionContext) -> OwnerNotFound:
    with pytest.raises(OwnerNotFound) as info:
        find_spread(the_pod, [spread(SUBSETS, target=("apps/v1", "Deployment", "top"))], ctx)
    return info.value


def test_a_missing_owner_is_reported_with_its_api_version() -> None:
    error = _not_found(pod(), _ctx([]))
    assert (error.api_version, error.kind, error.namespace, error.name) == (
        "apps/v1",
        "ReplicaSet",
        "default",
        "web-abc123",
    )


def test_an_owner_reference_without_a_name_is_looked_up_as_the_empty_name() -> None:
    nameless = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "uid": "u", "controller": True}
    error = _not_found(pod(owner=nameless), _ctx([]))
    assert error.message == 'ReplicaSet "" not found in namespace "default" (owner of the pod being admitted)'
    assert (error.api_version, error.kind, error.name) == ("apps/v1", "ReplicaSet", "")


def test_a_core_group_owner_without_api_version_is_looked_up_without_one() -> None:
    """A custom workload of the core group (a ReplicationController) may be referenced without
    `apiVersion`: it is the core group's, and is looked up so."""
    entries = [{"group": "", "kind": "ReplicationController", "replicasPath": "spec.replicas"}]
    ref = {"kind": "ReplicationController", "name": "rc", "uid": "u", "controller": True}
    error = _not_found(pod(owner=ref), _ctx([], entries))
    assert (error.api_version, error.kind, error.name) == ("", "ReplicationController", "rc")


def test_owners_of_one_kind_and_name_in_two_groups_are_fetched_apart() -> None:
    """Pod -> apps ReplicaSet `web` -> example.com ReplicaSet `web` (a custom workload) ->
    Deployment `top`: the two `web`s are different objects."""
    entries = [{"group": "example.com", "kind": "ReplicaSet", "replicasPath": "spec.replicas"}]
    custom_ref = owner_ref("example.com/v1", "ReplicaSet", "web")
    objects = [
        workload("apps/v1", "ReplicaSet", "web", owner=custom_ref),
        workload("example.com/v1", "ReplicaSet", "web", owner=owner_ref("apps/v1", "Deployment", "top")),
        workload("apps/v1", "Deployment", "top", replicas=3),
    ]
    ws = spread(SUBSETS, target=("apps/v1", "Deployment", "top"))
    the_pod = pod("web-x", owner=owner_ref("apps/v1", "ReplicaSet", "web"))
    assert find_spread(the_pod, [ws], _ctx(objects, entries)) is ws


def test_a_target_filter_whose_selector_is_invalid_selects_nothing() -> None:
    objects = [workload("apps/v1", "ReplicaSet", "web-abc123")]
    ws = spread(SUBSETS, target=("apps/v1", "ReplicaSet", "web-abc123"))
    ws["spec"]["targetFilter"] = {"selector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}}
    assert find_spread(pod(), [ws], _ctx(objects)) is None


def test_a_target_filter_that_is_not_an_object_selects_nothing() -> None:
    objects = [workload("apps/v1", "ReplicaSet", "web-abc123")]
    ws = spread(SUBSETS, target=("apps/v1", "ReplicaSet", "web-abc123"))
    ws["spec"]["targetFilter"] = "app=web"
    assert find_spread(pod(), [ws], _ctx(objects)) is None


def test_a_spread_whose_spec_is_not_an_object_is_passed_over() -> None:
    broken = spread(SUBSETS, name="a-broken")
    broken["spec"] = "not an object"
    ws = spread(SUBSETS, target=("apps/v1", "ReplicaSet", "web-abc123"))
    assert find_spread(pod(), [broken, ws], _ctx([workload("apps/v1", "ReplicaSet", "web-abc123")])) is ws


def test_a_chain_through_an_owner_of_a_kind_not_accepted_reaches_nothing_above_it() -> None:
    """ReplicaSet -> a Rollout (not a workload kind here) -> Deployment `web`: the walk stops at
    the Rollout, so a spread of the Deployment does not govern the pod."""
    objects = [
        workload("apps/v1", "ReplicaSet", "web-abc123", owner=owner_ref("example.com/v1", "Rollout", "r")),
        workload("example.com/v1", "Rollout", "r", owner=owner_ref("apps/v1", "Deployment", "web")),
        workload("apps/v1", "Deployment", "web", replicas=3),
    ]
    assert find_spread(pod(), [spread(SUBSETS)], _ctx(objects)) is None
