"""Ownership on the embedded cluster: release, orphans of other teams, and what a refused
allocation still writes (issues 24 and 25)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from united_kit import DEPLOYMENTS, UDS, opt_out_of_validation, pools, term, ud, united, workloads

from py_engine.assembled_stack import Stack
from py_engine.model.ud_constants import SUBSET_NAME_LABEL

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

AB: list[dict[str, Any]] = [
    {"name": "a", "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def _owners(obj: dict[str, Any]) -> list[str]:
    return [r["kind"] for r in obj["metadata"].get("ownerReferences") or []]


def test_a_workload_relabelled_out_of_the_selector_is_released_and_replaced() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 4, AB))
        stack.settle()
        a = workloads(stack)["a"]
        name = a["metadata"]["name"]
        stack.api.patch(
            DEPLOYMENTS, "default", name, {"metadata": {"labels": {"app": "taken-over"}}}, "merge"
        )
        stack.settle()
        released = stack.api.get(DEPLOYMENTS, "default", name)
        assert "UnitedDeployment" not in _owners(released)  # released, not deleted
        assert released["spec"]["replicas"] == 2
        owned = [
            d
            for d in stack.api.list(DEPLOYMENTS, "default")["items"]
            if _owners(d) == ["UnitedDeployment"] and d["metadata"]["labels"][SUBSET_NAME_LABEL] == "a"
        ]
        assert [d["metadata"]["name"] != name for d in owned] == [True]  # a new workload for subset a


def test_an_orphan_deployment_of_another_team_is_left_alone() -> None:
    with Stack(pools("a", "b")) as stack:
        theirs = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "team-b",
                "namespace": "default",
                "labels": {"app": "web", SUBSET_NAME_LABEL: "zz"},
            },
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web", SUBSET_NAME_LABEL: "zz"}},
                "template": {
                    "metadata": {"labels": {"app": "web", SUBSET_NAME_LABEL: "zz"}},
                    "spec": {"containers": [{"name": "main", "image": "team-b:7"}]},
                },
            },
        }
        stack.api.create(DEPLOYMENTS, "default", theirs)
        stack.create(UDS, united("web", 4, AB))
        stack.settle()
        kept = stack.api.get(DEPLOYMENTS, "default", "team-b")
        assert (
            _owners(kept) == [] and kept["spec"]["template"]["spec"]["containers"][0]["image"] == "team-b:7"
        )


def test_a_refused_allocation_still_deletes_a_duplicate() -> None:
    fixed = [
        {"name": "a", "replicas": 2, "nodeSelectorTerm": term("a")},
        {"name": "b", "nodeSelectorTerm": term("b")},
    ]
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 4, fixed))
        stack.settle()
        original = workloads(stack)["a"]
        duplicate = copy.deepcopy(original)
        duplicate["metadata"] = {
            k: v for k, v in original["metadata"].items() if k in ("labels", "annotations", "ownerReferences")
        }
        duplicate["metadata"]["name"] = "web-a-duplicate"
        duplicate.pop("status", None)
        stack.api.create(DEPLOYMENTS, "default", duplicate)
        status_before = ud(stack, "web")["status"]
        opt_out_of_validation(stack)  # the invalid change is stored, as with the webhook off
        stack.api.patch(UDS, "default", "web", {"spec": {"replicas": 1}}, "merge")  # 2 fixed > 1: refused
        stack.settle()
        subset_a = [
            d["metadata"]["name"]
            for d in stack.api.list(DEPLOYMENTS, "default")["items"]
            if not d["metadata"].get("deletionTimestamp")
            and d["metadata"]["labels"][SUBSET_NAME_LABEL] == "a"
        ]
        # one of the two is deleted (the first in list order is kept, as in Kruise)
        assert len(subset_a) == 1 and subset_a[0] in ("web-a-duplicate", original["metadata"]["name"])
        assert ud(stack, "web")["status"] == status_before  # the status is not written
        assert stack.united_controller is not None
        assert stack.united_controller.last["default/web"].outcome == "refused"
