"""A subset's node affinity and tolerations on the pod template: what mutation testing (run U1)
found unpinned. Kruise ANDs the subset's `nodeSelectorTerm` into every required node selector term
of the template (one term when there is none), `matchExpressions` and `matchFields` appended to
what the term already has; the subset's tolerations are appended to the template's
(docs/uniteddeployment.md, "Subset workloads")."""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.placement import attach_node_affinity, attach_tolerations

pytestmark = pytest.mark.timeout(30)

ZONE = {"key": "zone", "operator": "In", "values": ["a"]}
NAME = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
OLD_FIELD = {"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}


def required(terms: Any) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    }


@pytest.mark.parametrize("terms", [[], None, "junk"], ids=["empty", "none", "junk"])
def test_without_a_required_term_the_subsets_term_becomes_the_only_one(terms: Any) -> None:
    spec = required(terms)
    attach_node_affinity(spec, {"matchExpressions": [ZONE], "matchFields": [NAME]})
    assert spec == required([{"matchExpressions": [ZONE], "matchFields": [NAME]}])


def test_fields_and_expressions_are_appended_to_every_existing_term() -> None:
    spec = required([{"matchFields": [OLD_FIELD]}, {"matchExpressions": [ZONE]}])
    attach_node_affinity(spec, {"matchExpressions": [ZONE], "matchFields": [NAME]})
    assert spec == required(
        [
            {"matchFields": [OLD_FIELD, NAME], "matchExpressions": [ZONE]},
            {"matchExpressions": [ZONE, ZONE], "matchFields": [NAME]},
        ]
    )


def test_tolerations_are_appended_and_a_malformed_list_is_replaced() -> None:
    toleration = {"key": "pool", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    ud = UnitedDeployment.from_object(ud_object(1, [{"name": "a", "tolerations": [toleration]}]))
    spec: dict[str, Any] = {"tolerations": "junk"}
    attach_tolerations(spec, ud.subsets[0])
    assert spec == {"tolerations": [toleration]}
    mine = {"key": "x", "operator": "Exists"}
    spec = {"tolerations": [mine]}
    attach_tolerations(spec, ud.subsets[0])
    assert spec == {"tolerations": [mine, toleration]}
