"""Every UnitedDeployment `validate` reference vector through the policy the webhook and
`spreadgate validate` use (tests/vectors/README.md describes the vectors).

`validate` vectors are create requests; `validateUpdate` vectors carry `new` and `old`
(the admission handler runs the create rules on the new object as well, which adds
nothing for these objects); `validateSubsetReplicas` vectors exercise only the subset
count rules, so the subsets are placed into a minimal valid UnitedDeployment and the
reported paths are read relative to `spec.topology.subsets`. Field lists are compared
exactly, as multisets: two messages at one path count twice, as in Kruise's error list.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from vectors import uniteddeployment_cases

from py_engine.policy import PolicyEngine, create_engine
from py_engine.validation.uniteddeployment import (
    build_ud_review_input,
    review_uniteddeployment,
    validate_uniteddeployment,
)

CASES = uniteddeployment_cases("validate")
SUBSETS_PATH = "spec.topology.subsets"


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return create_engine()


def _object(api_version: str, body: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(body)
    obj.update(
        {
            "apiVersion": api_version,
            "kind": "UnitedDeployment",
            "metadata": {"name": "test", "namespace": "default"},
        }
    )
    return obj


def _subset_replicas_object(given: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": "demo"}
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {"deploymentTemplate": {"metadata": {"labels": labels}, "spec": {"template": pod}}},
        "topology": {"subsets": given["subsets"]},
    }
    if given.get("replicas") is not None:
        spec["replicas"] = given["replicas"]
    return _object("spreadgate.dev/v1beta1", {"spec": spec})


def _reported(case: dict[str, Any], engine: PolicyEngine) -> list[str]:
    given = case["input"]
    function = case["function"]
    if function == "validate":
        obj = _object(given["apiVersion"], {"spec": given["spec"]})
        policy_input = build_ud_review_input(obj)
    elif function == "validateUpdate":
        new, old = _object(given["apiVersion"], given["new"]), _object(given["apiVersion"], given["old"])
        policy_input = build_ud_review_input(new, operation="UPDATE", old=old)
    else:
        assert function == "validateSubsetReplicas", function
        policy_input = build_ud_review_input(_subset_replicas_object(given))
    fields = [v.field for v in validate_uniteddeployment(engine, policy_input)]
    if function == "validateSubsetReplicas":
        prefix = given["fieldPath"]
        fields = [prefix + f[len(SUBSETS_PATH) :] for f in fields if f.startswith(SUBSETS_PATH)]
    return sorted(fields)


def test_all_validate_vectors_are_loaded() -> None:
    assert len(CASES) >= 20
    assert {c["function"] for c in CASES} == {"validate", "validateUpdate", "validateSubsetReplicas"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_validate_vector(engine: PolicyEngine, case: dict[str, Any]) -> None:
    expected = case["expected"]
    reported = _reported(case, engine)
    assert (not reported) == expected["allowed"], reported
    assert reported == sorted(expected["errorFields"])


HANDLER_CASES = [c for c in CASES if "httpCode" in c["expected"]]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", HANDLER_CASES, ids=[c["id"] for c in HANDLER_CASES])
def test_handler_vector_answers_with_kruise_status_code(engine: PolicyEngine, case: dict[str, Any]) -> None:
    given = case["input"]
    request: dict[str, Any] = {"operation": given["operation"]}
    if case["function"] == "validateUpdate":
        request["object"] = _object(given["apiVersion"], given["new"])
        request["oldObject"] = _object(given["apiVersion"], given["old"])
    else:
        request["object"] = _object(given["apiVersion"], {"spec": given["spec"]})
    result = review_uniteddeployment(engine, request)
    assert result.allowed == case["expected"]["allowed"]
    assert result.code == case["expected"]["httpCode"]
    for field in case["expected"]["errorFields"]:
        assert f"{field}: " in result.message
