"""The target workload as the controller reads it (py_engine.workloadspread.controller.workloads):
replica counts with a custom kind's `/scale` answer, errors that name where the bad count was
read, and the target found by group, kind, name and namespace among a flat list. Written for
what mutation testing found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.model.workloads import parse_whitelist
from py_engine.model.workloadspread import TargetRef, WorkloadSpread
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.workloads import find_workload, listing_replicas, workload_replicas

pytestmark = pytest.mark.timeout(30)

REPLICASET = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web"}
GAME = {"apiVersion": "game.io/v1", "kind": "Game", "name": "g"}


def spread(target: dict[str, str], **spec: Any) -> WorkloadSpread:
    return WorkloadSpread.from_object(
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "prod"},
            "spec": {"targetRef": target, "subsets": [{"name": "a"}], **spec},
        }
    )


def test_a_custom_kinds_scale_answer_is_its_replica_count() -> None:
    game = {"apiVersion": "game.io/v1", "kind": "Game", "metadata": {"name": "g"}, "spec": {}}
    listed = parse_whitelist('{"workloads":[{"Group":"game.io","Kind":"Game"}]}')
    assert workload_replicas(spread(GAME), game, listed, scale_replicas=7) == 7
    assert listing_replicas(spread(GAME), game, scale_replicas=7) == 7
    assert workload_replicas(spread(GAME), game, listed) == -1  # unknown without one
    assert listing_replicas(spread(GAME), game) == -1


def test_a_bad_replica_count_names_the_workload_it_was_read_from() -> None:
    bad = {"spec": {"replicas": "x"}}
    expected = "ReplicaSet 'web': path 'spec.replicas' holds 'x', not an integer"
    for read in (workload_replicas, listing_replicas):
        with pytest.raises(ReconcileError) as raised:
            read(spread(REPLICASET), bad)
        assert str(raised.value) == expected


def test_a_bad_replicas_path_names_the_target_filter() -> None:
    filtered = spread(REPLICASET, targetFilter={"replicasPathList": ["spec.a"]})
    with pytest.raises(ReconcileError) as raised:
        workload_replicas(filtered, {"spec": {"a": "x", "replicas": 1}})
    assert str(raised.value) == "spec.targetFilter.replicasPathList: path 'spec.a' holds 'x', not an integer"
    # The listing count is the workload's own and ignores the path list.
    assert listing_replicas(filtered, {"spec": {"a": "x", "replicas": 1}}) == 1


def obj(
    kind: str, name: str, namespace: str | None, api_version: str = "apps/v1", tag: str = ""
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"tag": tag}}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_the_target_is_found_by_group_kind_name_and_namespace() -> None:
    ref = TargetRef("apps/v1", "ReplicaSet", "web")
    wanted = obj("ReplicaSet", "web", "prod", tag="wanted")
    decoys = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": "web"},  # no metadata object
        obj("Service", "web", "prod", api_version="v1"),  # another kind
        obj("ReplicaSet", "web", "prod", api_version="other.io/v1"),  # another group
        obj("ReplicaSet", "api", "prod"),  # another name
        obj("ReplicaSet", "web", "staging"),  # another namespace
    ]
    assert find_workload([*decoys, wanted], ref, "prod") is wanted
    assert find_workload(decoys, ref, "prod") is None
    # Another version of the same group is the same target; no namespace reads as the caller's.
    other_version = obj("ReplicaSet", "web", None, api_version="apps/v1beta2", tag="unset")
    assert find_workload([decoys[4], other_version], ref, "prod") is other_version
