"""Fuzzing the webhook: hostile AdmissionReviews (and raw bytes) against the real app and
admission service over an in-memory cluster whose spreads and pods may be hostile too.

Properties: never an HTTP 5xx; a 200 is a well-formed AdmissionReview answer
echoing the request's apiVersion and uid (a patch, when present, is base64 of
a JSON Patch list; a denial carries an integer code and a message); anything
else is a Status object with a 4xx code; and no answer is the panic-recovery
denial ("internal error: ..."), which would mean the service raised.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from fuzz_strategies import (
    RS_UID,
    fuzz_settings,
    hostile_pods,
    hostile_reviews,
    hostile_spreads,
    nodes,
    owners,
)
from fuzz_support import MemoryCluster, webhook_app
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.kube_objects import admission_review, container_spec, pod_create_request, replicaset_pod

# Denials the webhook may give with an "internal error" message: none. (The fuzzer once found
# three: ill-typed selector terms and a non-string status name raised inside the policy and the
# subset choice; the regression tests below keep them fixed.)
KNOWN_INTERNAL_ERRORS: tuple[str, ...] = ()


def check_answer(status: int, body: bytes, sent: Any) -> None:
    assert status < 500, (status, body[:500])
    answer = json.loads(body)
    assert isinstance(answer, dict)
    if status != 200:
        assert (
            answer.get("kind") == "Status"
            and answer.get("code") == status
            and isinstance(answer.get("message"), str)
        )
        return
    assert answer["kind"] == "AdmissionReview" and answer["apiVersion"] == sent["apiVersion"]
    response = answer["response"]
    assert response["uid"] == sent["request"]["uid"]
    assert isinstance(response["allowed"], bool)
    if "patch" in response:
        assert response["patchType"] == "JSONPatch"
        ops = json.loads(base64.b64decode(response["patch"]))
        assert isinstance(ops, list) and all(
            isinstance(op, dict) and "op" in op and "path" in op for op in ops
        )
    if not response["allowed"]:
        result = response["status"]
        assert isinstance(result["code"], int) and isinstance(result["message"], str)
        message = result["message"]
        assert not message.startswith("internal error") or any(k in message for k in KNOWN_INTERNAL_ERRORS), (
            message
        )
    for warning in response.get("warnings") or []:
        assert isinstance(warning, str)


@fuzz_settings(weight=3)
@given(
    review=hostile_reviews,
    spreads=st.lists(hostile_spreads, min_size=1, max_size=2),
    existing=st.lists(hostile_pods, max_size=3),
    adaptive_nodes=st.booleans(),
    mode=st.sampled_from(["deny", "allow-unmodified"]),
)
def test_hostile_reviews_never_5xx_and_always_well_formed(
    review: Any, spreads: list[Any], existing: list[Any], adaptive_nodes: bool, mode: str
) -> None:
    named = [
        dict(s, metadata=dict(s["metadata"], name=f"ws{i}"))
        if isinstance(s, dict) and isinstance(s.get("metadata"), dict)
        else s
        for i, s in enumerate(spreads)
    ]
    cluster = MemoryCluster([*owners(5), *named, *existing], nodes() if adaptive_nodes else None)
    client = webhook_app(cluster, on_commit_failure=mode).test_client()
    body = json.dumps(review).encode()
    for path in ("/mutate/pods", "/validate/pods", "/validate/workloadspreads"):
        resp = client.post(path, data=body, content_type="application/json")
        if resp.status_code == 200:
            check_answer(resp.status_code, resp.data, review)
        else:
            check_answer(resp.status_code, resp.data, None)


@fuzz_settings(weight=1.5)
@given(
    body=st.one_of(st.binary(max_size=2000), st.text(max_size=500).map(str.encode)),
    content_type=st.sampled_from(["application/json", "text/plain", "", "application/json; charset=utf-8"]),
)
def test_raw_bytes_are_4xx_never_5xx(body: bytes, content_type: str) -> None:
    client = webhook_app(MemoryCluster(owners(1))).test_client()
    resp = client.post("/mutate/pods", data=body, content_type=content_type)
    assert resp.status_code < 500, resp.data[:300]
    if resp.status_code != 200:
        check_answer(resp.status_code, resp.data, None)


@fuzz_settings(weight=0.5)
@given(depth=st.integers(500, 200_000), opener=st.sampled_from(["[", '{"a":']))
def test_absurdly_deep_documents_are_answered_not_crashed(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    body = (
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE",'
        '"namespace":"default","resource":{"group":"","version":"v1","resource":"pods"},"object":{"metadata":'
        + opener * depth
        + "1"
        + closer * depth
        + "}}}"
    ).encode()
    client = webhook_app(MemoryCluster(owners(1))).test_client()
    resp = client.post("/mutate/pods", data=body, content_type="application/json")
    assert resp.status_code < 500, resp.data[:300]
    if resp.status_code == 200:
        assert json.loads(resp.data)["response"]["uid"] == "u"


def spread_of(subsets: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws0", "namespace": "default", "generation": 1},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "subsets": subsets,
        },
        **extra,
    }


def admit_replicaset_pod(spread: dict[str, Any], **spec_extra: Any) -> dict[str, Any]:
    """The webhook's answer for a ReplicaSet pod of `web` (generateName only).

    The cluster holds `spread`."""
    pod = replicaset_pod(RS_UID, spec={**container_spec(), **spec_extra})
    review = admission_review(pod_create_request(pod))
    client = webhook_app(MemoryCluster([*owners(5), spread])).test_client()
    response: dict[str, Any] = client.post("/mutate/pods", json=review).get_json()["response"]
    return response


def test_gt_with_a_non_numeric_value_regression() -> None:
    """The fuzzer's shrunk example: the pod's own required affinity has `Gt ["a"]` on a key the
    subset also constrains. The API server would reject such a pod after admission (Gt needs one
    integer); the webhook must not fail inside Rego."""
    spread = spread_of(
        [
            {
                "name": "s0",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [{"key": "kubernetes.io/arch", "operator": "NotIn", "values": []}]
                },
            },
            {"name": "s1"},
        ]
    )
    term = {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "Gt", "values": ["a"]}]}
    answer = admit_replicaset_pod(
        spread,
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        },
    )
    assert answer["allowed"] or not answer["status"]["message"].startswith("internal error"), answer["status"]


def test_match_expressions_not_a_list_regression() -> None:
    """The fuzzer's second shrunk example: a stored spread whose matchExpressions is a string
    is refused with a field path, not an internal error."""
    spread = spread_of(
        [
            {"name": "s0", "maxReplicas": 2, "requiredNodeSelectorTerm": {"matchExpressions": "not-a-list"}},
            {"name": "s1"},
        ]
    )
    answer = admit_replicaset_pod(spread)
    assert answer["allowed"] or not answer["status"]["message"].startswith("internal error"), answer["status"]


def test_status_entry_name_not_a_string_regression() -> None:
    """The fuzzer's third shrunk example: a stored status entry whose name is a map."""
    spread = spread_of(
        [{"name": "s0"}, {"name": "s1"}],
        status={
            "versionedSubsetStatuses": {
                "h": [
                    {"name": {"k": "bottom"}, "replicas": 0, "missingReplicas": 0},
                    {"name": "s1", "replicas": 0, "missingReplicas": 0},
                ]
            }
        },
    )
    answer = admit_replicaset_pod(spread)
    assert answer["allowed"] or not answer["status"]["message"].startswith("internal error"), answer["status"]


@pytest.mark.parametrize(
    ("field", "value"), [("creatingPods", "x" * 1000), ("deletingPods", 7), ("conditions", 5)]
)
def test_malformed_status_entry_field_regression(field: str, value: Any) -> None:
    """The full run's shrunk example (`creatingPods` a string) and its siblings: a stored
    entry with room and one malformed field. The field reads as empty (no pods, no
    condition) and the pod is placed in that subset."""
    spread = spread_of(
        [{"name": "s0"}, {"name": "s1"}],
        status={
            "versionedSubsetStatuses": {
                "h": [
                    {"name": "s0", "replicas": 0, "missingReplicas": 1, field: value},
                    {"name": "s1", "replicas": 0, "missingReplicas": 0, "creatingPods": {}},
                ]
            }
        },
    )
    answer = admit_replicaset_pod(spread)
    assert answer["allowed"] and "patch" in answer, answer.get("status")
    assert '\\"subset\\":\\"s0\\"' in base64.b64decode(answer["patch"]).decode()
