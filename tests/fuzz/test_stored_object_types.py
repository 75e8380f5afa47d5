"""Issue 24, finding 4: no review and no stored object reaches a Python or Rego exception.

The two 500s the issue names, each a regression test: a Rego type error in
`policies/validation/names.rego` when another spread of the namespace has a non-string
`targetRef.apiVersion`, and a Python TypeError when a pod's `spec.containers` is a number.
Then hypothesis over the stored objects the admission paths read (spreads, target
workloads, subset patches) beside a well-formed review: never an internal error.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzz_strategies import RS_UID, fuzz_settings, json_values, owners
from fuzz_support import MemoryCluster, webhook_app
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.kube_objects import replicaset_pod

SPREAD_RESOURCE = {"group": "spreadgate.dev", "version": "v1alpha1", "resource": "workloadspreads"}
POD_RESOURCE = {"group": "", "version": "v1", "resource": "pods"}


def _spread(name: str = "ws0", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "subsets": [{"name": "s0"}, {"name": "s1"}],
    }
    body.update(spec)
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1},
        "spec": body,
    }


def _pod(spec: Any) -> dict[str, Any]:
    return replicaset_pod(RS_UID, spec=spec)


def _post(cluster: list[Any], path: str, request: dict[str, Any]) -> tuple[int, Any]:
    client = webhook_app(MemoryCluster(cluster)).test_client()
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u", "namespace": "default", **request},
    }
    resp = client.post(path, data=json.dumps(review), content_type="application/json")
    return resp.status_code, resp.get_json()


def _no_internal_error(status: int, answer: Any) -> None:
    assert status < 500, answer
    if status == 200:
        response = answer["response"]
        assert response["allowed"] or response["status"]["code"] < 500, response["status"]
        assert response["allowed"] or "internal error" not in response["status"]["message"], response[
            "status"
        ]


def test_non_string_api_version_of_another_spread_is_not_a_rego_type_error() -> None:
    other = _spread("other")
    other["spec"]["targetRef"]["apiVersion"] = 5
    status, answer = _post(
        [*owners(3), other],
        "/validate/workloadspreads",
        {"operation": "CREATE", "resource": SPREAD_RESOURCE, "object": _spread("new")},
    )
    _no_internal_error(status, answer)


def test_non_string_api_version_of_the_spread_itself_names_the_field() -> None:
    bad = _spread("new")
    bad["spec"]["targetRef"]["apiVersion"] = 5
    status, answer = _post(
        owners(3),
        "/validate/workloadspreads",
        {"operation": "CREATE", "resource": SPREAD_RESOURCE, "object": bad},
    )
    _no_internal_error(status, answer)
    assert "spec.targetRef" in answer["response"]["status"]["message"]


@pytest.mark.parametrize("containers", [5, "main", {"name": "c"}, [5]])
def test_pod_containers_of_the_wrong_type_get_400_naming_the_field(containers: Any) -> None:
    adaptive = _spread(scheduleStrategy={"type": "Adaptive", "adaptive": {}})
    status, answer = _post(
        [*owners(3), adaptive],
        "/mutate/pods",
        {"operation": "CREATE", "resource": POD_RESOURCE, "object": _pod({"containers": containers})},
    )
    _no_internal_error(status, answer)
    assert status == 400 and "spec.containers" in answer["message"], answer


def test_workload_template_containers_of_the_wrong_type_are_not_a_rego_type_error() -> None:
    deployment, replicaset = owners(3)
    deployment["spec"]["template"]["spec"]["containers"] = 5
    patched = _spread(
        subsets=[{"name": "s0", "patch": {"spec": {"containers": [{"name": "c", "resources": {}}]}}}]
    )
    status, answer = _post(
        [deployment, replicaset],
        "/validate/workloadspreads",
        {"operation": "CREATE", "resource": SPREAD_RESOURCE, "object": patched},
    )
    _no_internal_error(status, answer)


stored_spreads = st.builds(
    lambda target, subsets, extra: _spread(targetRef=target, subsets=subsets, **extra),
    target=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"apiVersion": json_values, "kind": st.just("Deployment"), "name": st.just("web")}
        ),
    ),
    subsets=st.lists(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["s0", "s1"])},
            optional={
                "patch": json_values,
                "tolerations": json_values,
                "requiredNodeSelectorTerm": json_values,
            },
        ),
        max_size=3,
    ),
    extra=st.dictionaries(st.sampled_from(["targetFilter", "scheduleStrategy"]), json_values, max_size=1),
)
stored_workloads = st.builds(
    lambda template, selector: [
        dict(owners(3)[0], spec={"replicas": 3, "selector": selector, "template": template}),
        owners(3)[1],
    ],
    template=json_values,
    selector=json_values,
)


@fuzz_settings(weight=1)
@given(spread=stored_spreads, other=stored_spreads, workload=stored_workloads)
def test_stored_objects_never_reach_an_exception(spread: Any, other: Any, workload: list[Any]) -> None:
    other["metadata"]["name"] = "other"
    cluster = [*workload, spread, other]
    status, answer = _post(
        cluster,
        "/mutate/pods",
        {
            "operation": "CREATE",
            "resource": POD_RESOURCE,
            "object": _pod({"containers": [{"name": "c", "image": "i"}]}),
        },
    )
    _no_internal_error(status, answer)
    status, answer = _post(
        cluster,
        "/validate/workloadspreads",
        {"operation": "CREATE", "resource": SPREAD_RESOURCE, "object": _spread("new")},
    )
    _no_internal_error(status, answer)
