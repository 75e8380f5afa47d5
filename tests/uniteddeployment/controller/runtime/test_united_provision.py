"""The UnitedDeployment controller on the embedded cluster (virtual time): provisioning of
every template kind, ControllerRevisions, status, and a sync over its own result writing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from united_kit import (
    DEPLOYMENTS,
    REVISIONS,
    STATEFULSETS,
    UDS,
    opt_out_of_validation,
    pods_per_subset,
    pools,
    replicas_of,
    term,
    ud,
    ud_events,
    ud_warnings,
    united,
    workloads,
)

from py_engine.assembled_stack import Stack
from py_engine.model.ud_constants import REVISION_HASH_LABEL, REVISION_LABEL, SUBSET_NAME_LABEL

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

AB: list[dict[str, Any]] = [
    {"name": "a", "maxReplicas": 3, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def test_deployment_template_provisions_one_deployment_per_subset_on_its_nodes() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 5, AB))
        stack.settle()
        assert replicas_of(stack) == {"a": 3, "b": 2}
        assert pods_per_subset(stack, "web", placed_only=True) == {"a": 3, "b": 2}
        nodes = {
            n["metadata"]["name"]: n["metadata"]["labels"]["node.spreadgate.dev/pool"]
            for n in stack.api.list("v1/nodes", None)["items"]
        }
        for pod in stack.api.list("v1/pods", "default", label_selector="app=web")["items"]:
            assert nodes[pod["spec"]["nodeName"]] == pod["metadata"]["labels"][SUBSET_NAME_LABEL]
        status = ud(stack, "web")["status"]
        assert (
            status["replicas"] == 5 and status["readyReplicas"] == 5 and status["updatedReadyReplicas"] == 5
        )
        assert [(s["name"], s["replicas"]) for s in status["subsetStatuses"]] == [("a", 3), ("b", 2)]
        assert status["labelSelector"] == "app=web"
        assert status["observedGeneration"] == ud(stack, "web")["metadata"]["generation"]
        revisions = stack.api.list(REVISIONS, "default")["items"]
        assert [r["metadata"]["name"] for r in revisions] == [status["updatedRevision"]]
        assert revisions[0]["metadata"]["labels"][REVISION_HASH_LABEL] in status["updatedRevision"]
        assert revisions[0]["metadata"]["ownerReferences"][0]["kind"] == "UnitedDeployment"
        for workload in workloads(stack).values():
            assert workload["metadata"]["labels"][REVISION_LABEL] == status["updatedRevision"]
        events = [e["reason"] for e in ud_events(stack)]
        assert "SuccessfulUpdateSubset" in events


def test_a_settled_unitedeployment_writes_nothing() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 4, AB))
        stack.settle()
        assert stack.united_controller is not None and stack.united_source is not None
        before = ud(stack, "web")["metadata"]["resourceVersion"]
        stack.united_source.refresh()
        reports = stack.united_controller.step()
        assert [r.outcome for r in reports] == ["synced"]
        assert reports[0].writes.total == 0
        assert ud(stack, "web")["metadata"]["resourceVersion"] == before


def test_statefulset_template_runs_end_to_end() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("db", 4, AB, kind="statefulSetTemplate"))
        stack.settle()
        assert replicas_of(stack, STATEFULSETS) == {"a": 3, "b": 1}
        assert pods_per_subset(stack, "db", placed_only=True) == {"a": 3, "b": 1}
        assert ud(stack, "db")["status"]["readyReplicas"] == 4


@pytest.mark.parametrize(
    ("kind", "resource", "version"),
    [
        ("cloneSetTemplate", "apps.kruise.io/v1beta1/clonesets", "apps.kruise.io/v1beta1"),
        ("advancedStatefulSetTemplate", "apps.kruise.io/v1beta1/statefulsets", "apps.kruise.io/v1beta1"),
    ],
)
def test_kruise_kinds_are_generated_and_managed(kind: str, resource: str, version: str) -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 5, AB, kind=kind, partitions={"a": 1}))
        stack.settle()
        found = workloads(stack, resource)
        assert {n: w["spec"]["replicas"] for n, w in found.items()} == {"a": 3, "b": 2}
        assert {w["apiVersion"] for w in found.values()} == {version}
        a = found["a"]
        assert a["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 1
        terms = a["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert terms == [term("a")]
        # Managed: a spec change reaches the stored custom resources.
        stack.api.patch(UDS, "default", "web", {"spec": {"replicas": 7}}, "merge")
        stack.settle()
        assert {n: w["spec"]["replicas"] for n, w in workloads(stack, resource).items()} == {"a": 3, "b": 4}
        assert not stack.api.list(DEPLOYMENTS, "default")["items"]


def test_a_refused_allocation_touches_nothing_and_says_why() -> None:
    fixed = [
        {"name": "a", "replicas": 4, "nodeSelectorTerm": term("a")},
        {"name": "b", "replicas": 3, "nodeSelectorTerm": term("b")},
    ]
    with Stack(pools("a", "b")) as stack:
        opt_out_of_validation(stack)
        stack.create(UDS, united("web", 5, fixed))  # 4 + 3 > 5: Kruise's allocator refuses
        stack.settle()
        assert workloads(stack) == {} and not stack.api.list(REVISIONS, "default")["items"]
        assert "status" not in ud(stack, "web") or not ud(stack, "web")["status"]
        found = ud_warnings(stack)
        assert found and found[0][0] == "FailedSpecifySubsetReplicas"
        assert "Specified subset replicas is ineffective" in found[0][1]
        assert stack.united_controller is not None
        assert stack.united_controller.last["default/web"].outcome == "refused"
        stack.api.patch(UDS, "default", "web", {"spec": {"replicas": 7}}, "merge")
        stack.settle()
        assert replicas_of(stack) == {"a": 4, "b": 3}


def test_an_unreadable_spec_is_reported_once_and_not_retried() -> None:
    with Stack(pools("a")) as stack:
        opt_out_of_validation(stack)
        bad = united("web", 2, [{"name": "Not_A_Label", "nodeSelectorTerm": term("a")}])
        stack.create(UDS, bad)
        stack.settle(max_advance=600)
        assert [r for r, _ in ud_warnings(stack)] == ["InvalidSpec"]
        assert stack.united_controller is not None and stack.united_controller.next_deadline() is None
