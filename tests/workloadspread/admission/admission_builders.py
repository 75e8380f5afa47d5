"""Small builders of spreads, workloads and pods for the admission tests."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from py_engine.workloadspread.admission.context import AdmissionContext

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
NOW_TEXT = "2024-06-01T12:00:00Z"
NS = "default"


def subset(
    name: str, max_replicas: int | str | None = None, zone: str | None = None, **extra: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if max_replicas is not None:
        entry["maxReplicas"] = max_replicas
    if zone is not None:
        entry["requiredNodeSelectorTerm"] = {
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]
        }
    entry.update(extra)
    return entry


def spread(
    subsets: list[dict[str, Any]],
    *,
    target: tuple[str, str, str] = ("apps/v1", "Deployment", "web"),
    status: dict[str, Any] | None = None,
    name: str = "ws",
    namespace: str = NS,
    **spec_extra: Any,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "7"},
        "spec": {
            "targetRef": {"apiVersion": target[0], "kind": target[1], "name": target[2]},
            "subsets": subsets,
            **spec_extra,
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


def versioned(version: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"versionedSubsetStatuses": {version: [dict(e) for e in entries]}}


def owner_ref(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"uid-{kind}-{name}",
        "controller": True,
    }


def workload(
    api_version: str,
    kind: str,
    name: str,
    *,
    owner: dict[str, Any] | None = None,
    namespace: str = NS,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{kind}-{name}"}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": dict(spec)}


def deployment_chain(replicas: int = 6, template_hash: str = "abc123") -> list[dict[str, Any]]:
    """Deployment `web` and its ReplicaSet `web-<hash>`."""
    deploy = workload("apps/v1", "Deployment", "web", replicas=replicas)
    rs = workload(
        "apps/v1",
        "ReplicaSet",
        f"web-{template_hash}",
        owner=owner_ref("apps/v1", "Deployment", "web"),
        replicas=replicas,
    )
    return [deploy, rs]


def counted_cluster(replicas: int = 6) -> list[dict[str, Any]]:
    """Spread `ws` over subsets a (full), b (2 slots left) and c (unlimited), and its Deployment."""
    ws = spread(
        [subset("a", 1, "z1"), subset("b", 3, "z2"), subset("c", None, "z3")],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 1, "missingReplicas": 0},
            {"name": "b", "replicas": 1, "missingReplicas": 2},
            {"name": "c", "replicas": 0, "missingReplicas": -1},
        ),
    )
    return [ws, *deployment_chain(replicas)]


def pod(
    name: str | None = "web-abc123-x1",
    *,
    owner: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    namespace: str = NS,
    spec: dict[str, Any] | None = None,
    **metadata_extra: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"namespace": namespace}
    if name is not None:
        metadata["name"] = name
    else:
        metadata["generateName"] = "web-abc123-"
    metadata["labels"] = labels if labels is not None else {"app": "web", "pod-template-hash": "abc123"}
    if annotations is not None:
        metadata["annotations"] = annotations
    metadata["ownerReferences"] = [
        owner if owner is not None else owner_ref("apps/v1", "ReplicaSet", "web-abc123")
    ]
    metadata.update(metadata_extra)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec if spec is not None else {"containers": [{"name": "main", "image": "nginx"}]},
    }


class Objects:
    """An in-memory cache answering `lookup` by (group, kind, namespace, name), counting calls."""

    def __init__(self, objects: Iterable[dict[str, Any]] = ()) -> None:
        self.calls: list[tuple[str, str, str, str]] = []
        self._index: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for obj in objects:
            self._index[
                self._key(
                    obj["apiVersion"],
                    obj["kind"],
                    obj["metadata"].get("namespace", NS),
                    obj["metadata"]["name"],
                )
            ] = obj

    @staticmethod
    def _key(api_version: str, kind: str, namespace: str, name: str) -> tuple[str, str, str, str]:
        return (api_version.split("/", 1)[0] if "/" in api_version else "", kind, namespace, name)

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        self.calls.append((api_version, kind, namespace, name))
        obj = self._index.get(self._key(api_version, kind, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None


def make_ctx(objects: Iterable[dict[str, Any]] = (), **kwargs: Any) -> AdmissionContext:
    return AdmissionContext(now=NOW, lookup=Objects(objects).lookup, **kwargs)
