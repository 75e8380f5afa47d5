"""Injection details asserted literally (py_engine/workloadspread/admission/inject.py; mutation
survivors of run A2, MUTATION-admission.md)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.workloadspread.admission.context import AdmissionError
from py_engine.workloadspread.admission.inject import apply_subset_patch, inject


def test_a_pod_whose_spec_is_not_an_object_is_patched_without_reading_its_priority_class() -> None:
    patched = apply_subset_patch(
        {"metadata": {"name": "p"}, "spec": ["junk"]}, {"metadata": {"labels": {"a": "b"}}}
    )
    assert patched == {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": ["junk"]}


ZONE = "topology.kubernetes.io/zone"


def _expression(zone: str) -> dict[str, Any]:
    return {"key": ZONE, "operator": "In", "values": [zone]}


DISK = {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}


def _with_required_terms(*terms: Any) -> dict[str, Any]:
    """A pod whose node affinity already requires one of `terms`."""
    required = {"nodeSelectorTerms": list(copy.deepcopy(terms))}
    return {
        "metadata": {"name": "p"},
        "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}},
    }


def _spread(subset: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "ws", "namespace": "default"}, "spec": {"subsets": [subset]}}


def test_the_injected_terms_are_the_pods_own_copies() -> None:
    """Changing the admitted pod (its terms, their expressions) leaves the stored spread as it was."""
    preferred = [{"weight": 10, "preference": {"matchExpressions": [_expression("z1")]}}]
    ws = _spread(
        {
            "name": "a",
            "preferredNodeSelectorTerms": preferred,
            "requiredNodeSelectorTerm": {"matchExpressions": [_expression("z1")]},
        }
    )
    before = copy.deepcopy(ws)
    bare = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    affinity = inject(bare, ws, "a", None)["spec"]["affinity"]["nodeAffinity"]
    affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] = 99
    required = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    required["matchExpressions"].append(_expression("z9"))
    assert ws == before
    with_terms = _with_required_terms(DISK)
    anded = inject(with_terms, ws, "a", None)["spec"]["affinity"]["nodeAffinity"]
    anded["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][1][
        "values"
    ].append("z9")
    assert ws == before


def test_a_required_term_that_is_not_an_object_is_skipped_and_the_next_one_is_extended() -> None:
    ws = _spread({"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": [_expression("z1")]}})
    the_pod = _with_required_terms("junk", DISK)
    terms = inject(the_pod, ws, "a", None)["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == ["junk", {"matchExpressions": [{"key": "disk", "operator": "Exists"}, _expression("z1")]}]


def test_a_spread_whose_spec_is_not_an_object_has_no_subset_to_inject() -> None:
    with pytest.raises(AdmissionError, match=r"^subset 'a' is not in the WorkloadSpread's spec$"):
        inject(
            {"metadata": {"name": "p"}, "spec": {}}, {"metadata": {"name": "ws"}, "spec": "junk"}, "a", None
        )


def test_injected_tolerations_and_match_fields_are_the_pods_own_copies() -> None:
    field = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
    toleration = {"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}
    ws = _spread(
        {"name": "a", "tolerations": [toleration], "requiredNodeSelectorTerm": {"matchFields": [field]}}
    )
    before = copy.deepcopy(ws)
    the_pod = _with_required_terms(DISK)
    spec = inject(the_pod, ws, "a", None)["spec"]
    spec["tolerations"][0]["value"] = "b"
    term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]
    term["matchFields"][0]["values"].append("n2")
    assert ws == before
