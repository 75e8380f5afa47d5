"""A subset's placement applied to a pod spec, compared whole (mutation run U1 found these
unpinned): the requirements are ANDed into every required term, one term is made when the list
is missing or empty, the template's own matchFields stay first, tolerations are appended to what
is there (nothing when absent). docs/kruise-compatibility.md, "UnitedDeployment".
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.placement import attach_node_affinity, attach_tolerations

pytestmark = pytest.mark.timeout(30)

ZONE = {"key": "zone", "operator": "In", "values": ["a"]}
NAME = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
POOL = {"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}


def _required(terms: Any) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    }


def test_an_empty_term_list_gets_one_term() -> None:
    pod_spec = _required([])
    attach_node_affinity(pod_spec, {"matchExpressions": [ZONE]})
    assert pod_spec == _required([{"matchExpressions": [ZONE]}])


def test_match_fields_are_anded_after_the_templates_own() -> None:
    pod_spec = _required([{"matchFields": [POOL]}, {"matchExpressions": [ZONE]}])
    attach_node_affinity(pod_spec, {"matchFields": [NAME]})
    assert pod_spec == _required(
        [{"matchFields": [POOL, NAME]}, {"matchExpressions": [ZONE], "matchFields": [NAME]}]
    )


def test_tolerations_are_appended_or_set() -> None:
    ud = UnitedDeployment.from_object(
        ud_object(1, [{"name": "a", "tolerations": [{"key": "spot", "operator": "Exists"}]}])
    )
    empty: dict[str, Any] = {}
    attach_tolerations(empty, ud.subsets[0])
    assert empty == {"tolerations": [{"key": "spot", "operator": "Exists"}]}
    odd: dict[str, Any] = {"tolerations": "x"}
    attach_tolerations(odd, ud.subsets[0])
    assert odd == {"tolerations": [{"key": "spot", "operator": "Exists"}]}
    some: dict[str, Any] = {"tolerations": [{"key": "t", "operator": "Exists"}]}
    attach_tolerations(some, ud.subsets[0])
    assert some == {
        "tolerations": [{"key": "t", "operator": "Exists"}, {"key": "spot", "operator": "Exists"}]
    }
