"""`plan` never raises on a valid UnitedDeployment, whatever the rest of the snapshot holds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ud_testkit import ud_object

from py_engine.uniteddeployment.controller.plan import plan
from py_engine.uniteddeployment.controller.state import state_from_objects

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
ANY = st.none() | st.booleans() | st.integers(-3, 9) | st.text(max_size=3) | st.just("2026-06-01T11:59:00Z")
SUBSET = st.sampled_from(["a", "b", "gone", ""])
LABELS = st.fixed_dictionaries(
    {"app": st.sampled_from(["web", "other"])},
    optional={
        "spreadgate.dev/subset-name": SUBSET,
        "apps.kruise.io/subset-name": SUBSET,
        "spreadgate.dev/controller-revision-hash": ANY.map(str),
        "spreadgate.dev/united-deployment-reserved-pod": st.sampled_from(["true", "false", "x"]),
    },
)
META = st.fixed_dictionaries(
    {"name": st.text("abc-0123", min_size=1, max_size=8), "namespace": st.just("default"), "labels": LABELS},
    optional={
        "ownerReferences": st.lists(
            st.fixed_dictionaries(
                {
                    "controller": st.booleans(),
                    "kind": st.just("UnitedDeployment"),
                    "name": st.just("web"),
                    "uid": st.sampled_from(["ud-uid-1", "x"]),
                }
            ),
            max_size=2,
        ),
        "creationTimestamp": ANY,
        "annotations": st.dictionaries(st.text(max_size=3), ANY),
    },
)
WORKLOAD = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["apps/v1", "apps.kruise.io/v1beta1"]),
        "kind": st.sampled_from(["Deployment", "StatefulSet", "CloneSet"]),
        "metadata": META,
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "replicas": ANY,
                "updateStrategy": st.fixed_dictionaries(
                    {},
                    optional={
                        "type": ANY,
                        "partition": ANY,
                        "rollingUpdate": st.dictionaries(st.just("partition"), ANY),
                    },
                ),
            },
        ),
        "status": st.dictionaries(st.sampled_from(["replicas", "readyReplicas"]), ANY),
    }
)
POD = st.fixed_dictionaries(
    {
        "kind": st.just("Pod"),
        "metadata": META,
        "status": st.fixed_dictionaries(
            {},
            optional={
                "phase": st.sampled_from(["Pending", "Running", "Failed"]),
                "conditions": st.lists(
                    st.fixed_dictionaries(
                        {
                            "type": st.sampled_from(["Ready", "PodScheduled"]),
                            "status": st.sampled_from(["True", "False"]),
                        },
                        optional={"reason": st.just("Unschedulable"), "lastTransitionTime": ANY},
                    ),
                    max_size=2,
                ),
            },
        ),
    }
)
SCHEDULES = st.sampled_from(
    [None, {"type": "Adaptive"}, {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}]
)
SUBSETS = st.sampled_from(
    [
        [{"name": "a"}, {"name": "b"}],
        [{"name": "a", "maxReplicas": 2}, {"name": "b", "minReplicas": 1}],
        [{"name": "a", "replicas": "50%"}, {"name": "b"}],
    ]
)


HOSTILE_WORKLOAD = st.fixed_dictionaries(
    {
        "apiVersion": st.just("apps/v1"),
        "kind": st.just("Deployment"),
        "metadata": st.fixed_dictionaries(
            {
                "name": st.just("w"),
                "namespace": st.just("default"),
                "labels": st.just({"app": "web", "spreadgate.dev/subset-name": "a"}),
            },
            optional={"annotations": ANY, "ownerReferences": ANY},
        ),
        "spec": ANY | st.fixed_dictionaries({}, optional={"selector": ANY, "replicas": ANY, "strategy": ANY}),
        "status": ANY,
    }
)
HOSTILE_REVISION = st.fixed_dictionaries(
    {"kind": st.just("ControllerRevision"), "metadata": ANY, "data": ANY, "revision": ANY}
)
HOSTILE_PATCH = st.dictionaries(
    st.sampled_from(["metadata", "spec"]),
    ANY
    | st.dictionaries(st.sampled_from(["labels", "affinity", "tolerations", "containers"]), ANY, max_size=2),
    max_size=2,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    others=st.lists(HOSTILE_WORKLOAD | HOSTILE_REVISION, max_size=3),
    patch=HOSTILE_PATCH,
    affinity=ANY
    | st.just(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": 3}, "x"]
                }
            }
        }
    ),
)
def test_plan_survives_hostile_objects_and_patches(
    others: list[dict[str, Any]], patch: dict[str, Any], affinity: Any
) -> None:
    obj = ud_object(
        3,
        [
            {
                "name": "a",
                "patch": patch,
                "nodeSelectorTerm": {"matchExpressions": [{"key": "k", "operator": "Exists"}]},
            },
            {"name": "b"},
        ],
    )
    obj["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["affinity"] = affinity
    result = plan(state_from_objects([obj, *others]), NOW)
    assert result.refused or set(result.subsets) == {"a", "b"}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replicas=st.none() | st.integers(0, 8),
    subsets=SUBSETS,
    schedule=SCHEDULES,
    others=st.lists(WORKLOAD | POD, max_size=6),
    status=st.dictionaries(
        st.sampled_from(["currentRevision", "collisionCount", "subsetStatuses", "conditions"]), ANY
    ),
)
def test_plan_never_raises(
    replicas: int | None,
    subsets: list[dict[str, Any]],
    schedule: dict[str, Any] | None,
    others: list[dict[str, Any]],
    status: dict[str, Any],
) -> None:
    obj = ud_object(replicas, subsets, schedule=schedule)
    obj["status"] = status
    result = plan(state_from_objects([obj, *others]), NOW)
    if not result.refused:
        assert set(result.subsets) == {s["name"] for s in subsets}
        assert set(result.to_json()) == {
            "subsets",
            "create",
            "update",
            "delete",
            "release",
            "status",
            "errors",
        }
