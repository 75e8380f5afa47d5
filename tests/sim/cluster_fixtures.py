"""Shared helpers for the embedded-cluster tests (imported explicitly)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import urllib3
from polling import wait_until as wait_for  # noqa: F401 - re-exported for the cluster tests

from benchmarks.kube_objects import workload
from py_engine.semantics.clock import VirtualClock
from py_engine.sim.cluster import Cluster
from py_engine.sim.http_server import RunningServer
from py_engine.sim.kubelet import KubeletConfig
from py_engine.sim.nodepool import nodes_from_description

START = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
ZONE = "topology.kubernetes.io/zone"


def three_zone_nodes(per_zone: int = 2, **capacity: Any) -> list[dict[str, Any]]:
    cap = {"cpu": "8", "memory": "32Gi", "pods": 110, **capacity}
    return nodes_from_description(
        {
            "pools": [
                {"name": f"zone-{z}", "count": per_zone, "labels": {ZONE: f"zone-{z}"}, "capacity": cap}
                for z in "abc"
            ]
        }
    )


def pod_template(labels: dict[str, str], image: str = "nginx:1", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": image}], **spec}}


def deployment(name: str, replicas: int, image: str = "nginx:1", **spec: Any) -> dict[str, Any]:
    dep = workload("Deployment", name, replicas=replicas, namespace="default", container="app", image=image)
    dep["spec"].update(spec)
    return dep


def pods_of(
    cluster: Cluster, selector: str | None = None, namespace: str = "default"
) -> list[dict[str, Any]]:
    return list(cluster.api.list("v1/pods", namespace, label_selector=selector)["items"])


@pytest.fixture
def make_cluster() -> Iterator[Callable[..., Cluster]]:
    """Factory: a stepped cluster on a VirtualClock; every cluster is closed afterwards."""
    made: list[Cluster] = []

    def factory(
        nodes: list[dict[str, Any]] | None = None, kubelet: KubeletConfig | None = None, **kwargs: Any
    ) -> Cluster:
        cluster = Cluster(
            clock=kwargs.pop("clock", None) or VirtualClock(START),
            nodes=three_zone_nodes() if nodes is None else nodes,
            kubelet=kubelet,
            **kwargs,
        )
        made.append(cluster)
        return cluster

    yield factory
    for cluster in made:
        cluster.close()


class AdminPool(urllib3.HTTPSConnectionPool):
    """A connection pool to the emulator that sends the administrator's bearer token with
    every request (urllib3 replaces, not merges, a pool's default headers per request)."""

    def __init__(self, server: RunningServer, maxsize: int = 1) -> None:
        super().__init__(
            "127.0.0.1",
            server.port,
            cert_reqs="CERT_REQUIRED",
            ca_cert_data=server.ca_pem,
            maxsize=maxsize,
            retries=False,
            timeout=urllib3.Timeout(total=10),
        )
        self.token = server.token

    def urlopen(
        self, method: str, url: str, body: Any = None, headers: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        merged = {**dict(headers or {}), "Authorization": f"Bearer {self.token}"}
        return super().urlopen(method, url, body, merged, *args, **kwargs)


@pytest.fixture
def admin_http(https_server: RunningServer) -> Iterator[urllib3.HTTPSConnectionPool]:
    """An `AdminPool` (two connections) to the `https_server` fixture's emulator."""
    pool = AdminPool(https_server, maxsize=2)
    yield pool
    pool.close()
