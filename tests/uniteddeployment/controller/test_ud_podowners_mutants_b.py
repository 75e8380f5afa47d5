"""`PodOwners` on workloads the generated snapshots of test_ud_podowners.py do not make: without
a namespace, without a spec, with a selector that is not an object (mutation run U1). The index
must find what `ownership.owns_pod` accepts, and never fail on a malformed workload.
"""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.uniteddeployment.controller.podowners import PodOwners, pods_of

pytestmark = pytest.mark.timeout(30)


def _pod(name: str, ref: dict[str, Any] | None = None, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app": "web"}}
    if namespace is not None:
        metadata["namespace"] = namespace
    if ref is not None:
        metadata["ownerReferences"] = [{"controller": True, **ref}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}


STS_REF = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web-a"}


def test_a_workload_without_a_namespace_finds_its_pods_without_one() -> None:
    workload = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web-a"}}
    mine, elsewhere = _pod("p1", STS_REF), _pod("p2", STS_REF, namespace="default")
    assert PodOwners([elsewhere, mine]).of(workload) == (mine,)


@pytest.mark.parametrize(
    "spec", [None, "x", {"selector": "app=web"}, {"selector": {"matchLabels": {"n": 1}}}]
)
def test_a_malformed_workload_owns_no_ownerless_pod(spec: Any) -> None:
    workload: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web-a"}}
    if spec is not None:
        workload["spec"] = spec
    controlled = _pod("p2", STS_REF)
    assert pods_of(workload, [_pod("p1"), controlled]) == (controlled,)


def test_a_deployment_finds_a_pod_whose_hash_label_holds_a_dash() -> None:
    # The ReplicaSet is `<deployment>-<pod-template-hash>` with the pod's own hash, whatever it holds.
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-a", "namespace": "default"},
    }
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-a-x-5d8f"}
    pod = _pod("p1", rs, namespace="default")
    pod["metadata"]["labels"]["pod-template-hash"] = "x-5d8f"
    assert PodOwners([pod]).of(deployment) == (pod,)
