"""A ReplicaSet and its pods, as the controller runtime tests create them on the embedded cluster."""

from __future__ import annotations

from typing import Any


def replicaset() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "labels": {"pod-template-hash": "h1"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    }


def pod(name: str, owner_uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "web", "pod-template-hash": "h1"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web",
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
    }
