"""A ReplicaSet and its pods, as the controller runtime tests create them on the embedded cluster."""

from __future__ import annotations

from typing import Any

from benchmarks.kube_objects import container_spec, controller_ref, workload


def replicaset() -> dict[str, Any]:
    labels = {"pod-template-hash": "h1"}
    return workload(
        "ReplicaSet", "web", replicas=2, namespace="default", labels=labels, container="app", image="nginx:1"
    )


def pod(name: str, owner_uid: str) -> dict[str, Any]:
    metadata = {
        "name": name,
        "namespace": "default",
        "labels": {"app": "web", "pod-template-hash": "h1"},
        "ownerReferences": [controller_ref("ReplicaSet", "web", owner_uid)],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": container_spec("app", "nginx:1")}
