"""Tracing pods to their WorkloadSpread (docs/design-workloadspread.md §1.4)."""

from __future__ import annotations

from typing import Any

import admission_builders as build
import pytest

from py_engine.model.workloads import whitelist_from_entries
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError, OwnerNotFound
from py_engine.workloadspread.admission.tracing import find_spread

SUBSETS = [build.subset("a", 2), build.subset("b")]


def _ctx(objects: list[dict[str, Any]], **kwargs: Any) -> tuple[AdmissionContext, build.Objects]:
    cache = build.Objects(objects)
    return AdmissionContext(now=build.NOW, lookup=cache.lookup, **kwargs), cache


def test_replicaset_pod_resolves_to_its_deployment() -> None:
    ws = build.spread(SUBSETS)
    ctx, cache = _ctx(build.deployment_chain())
    assert find_spread(build.pod(), [ws], ctx) is ws
    assert [c[1] for c in cache.calls] == ["ReplicaSet"]


def test_direct_owner_match_needs_no_lookup() -> None:
    ws = build.spread(SUBSETS, target=("apps/v1", "ReplicaSet", "web-abc123"))
    ctx, cache = _ctx([])
    assert find_spread(build.pod(), [ws], ctx) is ws
    assert cache.calls == []


def test_group_and_kind_must_match_but_version_is_ignored() -> None:
    owner = build.owner_ref("apps.kruise.io/v1alpha1", "CloneSet", "game")
    objects = [build.workload("apps.kruise.io/v1alpha1", "CloneSet", "game")]
    ctx, _ = _ctx(objects)
    assert find_spread(
        build.pod(owner=owner),
        [build.spread(SUBSETS, target=("apps.kruise.io/v1beta1", "CloneSet", "game"))],
        ctx,
    )
    assert (
        find_spread(
            build.pod(owner=owner), [build.spread(SUBSETS, target=("apps/v1", "CloneSet", "game"))], ctx
        )
        is None
    )


def test_chain_ending_elsewhere_is_no_match() -> None:
    ctx, _ = _ctx(build.deployment_chain())
    assert (
        find_spread(build.pod(), [build.spread(SUBSETS, target=("apps/v1", "Deployment", "other"))], ctx)
        is None
    )


def test_missing_owner_raises_not_found() -> None:
    ctx, _ = _ctx(build.deployment_chain()[1:])  # the ReplicaSet exists, its Deployment does not
    with pytest.raises(OwnerNotFound) as info:
        find_spread(build.pod(), [build.spread(SUBSETS, target=("apps/v1", "Deployment", "other"))], ctx)
    assert (info.value.kind, info.value.name, info.value.namespace) == ("Deployment", "web", "default")
    assert isinstance(info.value, AdmissionError) and info.value.code == 404
    ctx, _ = _ctx([])
    with pytest.raises(OwnerNotFound):
        find_spread(build.pod(), [build.spread(SUBSETS)], ctx)


def test_pods_without_accepted_controller_are_ignored() -> None:
    ctx, cache = _ctx(build.deployment_chain())
    orphan = build.pod()
    orphan["metadata"]["ownerReferences"][0]["controller"] = False
    assert find_spread(orphan, [build.spread(SUBSETS)], ctx) is None
    daemon = build.pod(owner=build.owner_ref("apps/v1", "DaemonSet", "web"))
    assert find_spread(daemon, [build.spread(SUBSETS, target=("apps/v1", "DaemonSet", "web"))], ctx) is None
    assert cache.calls == []


def test_job_and_statefulset_pods() -> None:
    ctx, _ = _ctx([])
    job_pod = build.pod("job-x", owner=build.owner_ref("batch/v1", "Job", "batch"))
    assert find_spread(job_pod, [build.spread(SUBSETS, target=("batch/v1", "Job", "batch"))], ctx) is not None
    sts_pod = build.pod("db-0", owner=build.owner_ref("apps.kruise.io/v1beta1", "StatefulSet", "db"))
    ws = build.spread(SUBSETS, target=("apps.kruise.io/v1alpha1", "StatefulSet", "db"))
    assert find_spread(sts_pod, [ws], ctx) is ws


def test_custom_whitelist_with_sub_resources() -> None:
    game_server = build.workload(
        "mock.kruise.io/v1",
        "GameServer",
        "gs-1",
        owner=build.owner_ref("mock.kruise.io/v1", "GameServerSet", "gss"),
    )
    objects = [game_server, build.workload("mock.kruise.io/v1", "GameServerSet", "gss")]
    the_pod = build.pod("gs-1", owner=build.owner_ref("mock.kruise.io/v1", "GameServer", "gs-1"))
    ws = build.spread(SUBSETS, target=("mock.kruise.io/v1", "GameServerSet", "gss"))
    ctx, _ = _ctx(objects)
    assert find_spread(the_pod, [ws], ctx) is None  # not whitelisted
    kruise_style = [
        {
            "Group": "mock.kruise.io",
            "Version": "v1",
            "Kind": "GameServerSet",
            "replicasPath": "spec.replicas",
            "subResources": [{"Group": "mock.kruise.io", "Version": "v1", "Kind": "GameServer"}],
        }
    ]
    ctx, _ = _ctx(objects, whitelist=whitelist_from_entries(kruise_style))
    assert find_spread(the_pod, [ws], ctx) is ws
    ours = [
        {
            "group": "mock.kruise.io",
            "kind": "GameServerSet",
            "subResources": [{"group": "mock.kruise.io", "kind": "GameServer"}],
        }
    ]
    ctx, _ = _ctx(objects, whitelist=whitelist_from_entries(ours))
    assert find_spread(the_pod, [ws], ctx) is ws


@pytest.mark.parametrize(
    ("target_filter", "labels", "selected"),
    [
        (None, {"role": "ps"}, True),
        ({}, {"role": "worker"}, False),  # present filter without selector: nothing (Kruise's quirk)
        ({"selector": None}, {"role": "worker"}, False),
        ({"selector": {}}, {"role": "ps"}, True),
        ({"selector": {"matchLabels": {"role": "worker"}}}, {"role": "worker"}, True),
        ({"selector": {"matchLabels": {"role": "worker"}}}, {"role": "ps"}, False),
        ({"selector": {"matchExpressions": [{"key": "role", "operator": "Bad"}]}}, {"role": "ps"}, False),
    ],
)
def test_target_filter(target_filter: dict[str, Any] | None, labels: dict[str, str], selected: bool) -> None:
    extra = {} if target_filter is None else {"targetFilter": target_filter}
    ws = build.spread(SUBSETS, target=("batch/v1", "Job", "tf"), **extra)
    ctx, _ = _ctx([])
    found = find_spread(
        build.pod("tf-1", owner=build.owner_ref("batch/v1", "Job", "tf"), labels=labels), [ws], ctx
    )
    assert (found is ws) is selected


def test_list_order_deleting_namespace_and_shape() -> None:
    ctx, _ = _ctx(build.deployment_chain())
    deleting = build.spread(SUBSETS, name="deleting")
    deleting["metadata"]["deletionTimestamp"] = "2024-06-01T11:00:00Z"
    elsewhere = build.spread(SUBSETS, name="elsewhere", namespace="other")
    no_target = build.spread(SUBSETS, name="no-target")
    del no_target["spec"]["targetRef"]
    not_a_spread = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
    }
    first = build.spread(SUBSETS, name="first")
    second = build.spread(SUBSETS, name="second")
    found = find_spread(build.pod(), [not_a_spread, deleting, elsewhere, no_target, first, second], ctx)
    assert found is first
    kruise = build.spread(SUBSETS, name="kruise")
    kruise["apiVersion"] = "apps.kruise.io/v1alpha1"
    assert find_spread(build.pod(), [kruise], build.make_ctx(build.deployment_chain())) is kruise


def test_owner_objects_fetched_once_per_admission() -> None:
    ctx, cache = _ctx(build.deployment_chain())
    spreads = [
        build.spread(SUBSETS, name=f"s{i}", target=("apps/v1", "Deployment", f"other-{i}")) for i in range(3)
    ]
    assert find_spread(build.pod(), spreads, ctx) is None
    assert sorted(c[1] for c in cache.calls) == ["Deployment", "ReplicaSet"]


def test_owner_cycle_is_bounded() -> None:
    a = build.workload("apps/v1", "ReplicaSet", "a", owner=build.owner_ref("apps/v1", "ReplicaSet", "b"))
    b = build.workload("apps/v1", "ReplicaSet", "b", owner=build.owner_ref("apps/v1", "ReplicaSet", "a"))
    ctx, _ = _ctx([a, b])
    the_pod = build.pod(owner=build.owner_ref("apps/v1", "ReplicaSet", "a"))
    assert find_spread(the_pod, [build.spread(SUBSETS, target=("apps/v1", "Deployment", "web"))], ctx) is None
