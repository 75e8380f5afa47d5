"""A UnitedDeployment stored with more subsets than the CRD allows (around admission: before
the bound existed, or with the webhook down) is refused by the controller, which creates
nothing for it (issue 23: 10,000 subsets made it create 2,290 Deployments in 20 s)."""

from __future__ import annotations

import pytest
from united_kit import DEPLOYMENTS, UDS, opt_out_of_validation, pools, term, ud_warnings, united
from webhook_testkit import without_subset_bound

from py_engine.assembled_stack import Stack
from py_engine.model import ModelError
from py_engine.model.constants import MAX_SUBSETS
from py_engine.model.uniteddeployment import UnitedDeployment


def many(count: int) -> list[dict[str, object]]:
    return [{"name": f"s{i}", "nodeSelectorTerm": term("a")} for i in range(count)]


def test_the_model_refuses_more_subsets_than_the_bound_and_reads_the_bound() -> None:
    assert len(UnitedDeployment.from_object(united("web", 1, many(MAX_SUBSETS))).subsets) == MAX_SUBSETS
    with pytest.raises(ModelError) as refused:
        UnitedDeployment.from_object(united("web", 1, many(10_000)))
    assert str(refused.value).startswith("spec.topology.subsets")
    assert f"10000 subsets, more than the {MAX_SUBSETS} allowed" in str(refused.value)


def test_a_stored_uniteddeployment_beyond_the_bound_creates_nothing() -> None:
    with Stack(pools("a")) as stack:
        # Stored around admission: under a CRD from before the bound, with the webhook opted out.
        crds = "apiextensions.k8s.io/v1/customresourcedefinitions"
        name = "uniteddeployments.spreadgate.dev"
        stack.api.update(crds, None, name, without_subset_bound(stack.api.get(crds, None, name)))
        opt_out_of_validation(stack)
        stack.create(UDS, united("web", MAX_SUBSETS + 1, many(MAX_SUBSETS + 1)))
        stack.settle(max_advance=600)
        assert [r for r, _ in ud_warnings(stack)] == ["InvalidSpec"]
        assert f"more than the {MAX_SUBSETS} allowed" in ud_warnings(stack)[0][1]
        assert stack.api.list(DEPLOYMENTS, "default")["items"] == []
