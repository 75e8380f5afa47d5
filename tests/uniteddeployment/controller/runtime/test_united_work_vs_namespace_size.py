"""What one UnitedDeployment's sync reads does not grow with the other UnitedDeployments of its
namespace (issue 28; the 1,000-UD figure is `python -m benchmarks bench_controller_scale`).

Counted, not timed: the lines Python executes (`sys.settrace` line events, one per loop
iteration too) while the source's indexes pick one UnitedDeployment's workloads, revisions and
pods, and while its workloads' pods are attributed, with 3 and with 60 UnitedDeployments (each
with 5 subset Deployments and 4 pods a subset) in the namespace.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from py_engine.uniteddeployment.controller.podowners import pods_of
from py_engine.uniteddeployment.controller.runtime.source import OwnedIndex, PodIndex

pytestmark = pytest.mark.timeout(60)

JSON = dict[str, Any]


def lines_run(func: Callable[[], object]) -> int:
    count = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    sys.settrace(global_)
    try:
        func()
    finally:
        sys.settrace(None)
    return count[0]


def namespace(uds: int) -> tuple[list[JSON], list[JSON], list[JSON]]:
    """Subset Deployments (owned by their UD's uid), ControllerRevisions and pods of `uds` UDs."""
    workloads: list[JSON] = []
    revisions: list[JSON] = []
    pods: list[JSON] = []
    for u in range(uds):
        app = f"app{u:03d}"
        owner = [
            {
                "apiVersion": "spreadgate.dev/v1beta1",
                "kind": "UnitedDeployment",
                "name": app,
                "uid": f"uid-{app}",
                "controller": True,
            }
        ]
        revisions.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": f"{app}-rev",
                    "namespace": "default",
                    "labels": {"app": app},
                    "ownerReferences": owner,
                },
            }
        )
        for s in range(5):
            labels = {"app": app, "apps.kruise.io/subset-name": f"s{s}"}
            workloads.append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {
                        "name": f"{app}-s{s}",
                        "namespace": "default",
                        "labels": dict(labels),
                        "ownerReferences": owner,
                    },
                    "spec": {"selector": {"matchLabels": dict(labels)}},
                }
            )
            for i in range(4):
                pods.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": f"{app}-s{s}-{i}",
                            "namespace": "default",
                            "labels": dict(labels),
                        },
                    }
                )
    return workloads, revisions, pods


def one_sync_reads(uds: int) -> int:
    workloads, revisions, pods = namespace(uds)
    workload_index, revision_index, pod_index = OwnedIndex(workloads), OwnedIndex(revisions), PodIndex(pods)
    selector = {"matchLabels": {"app": "app000"}}

    def read() -> None:
        mine = workload_index.select("uid-app000", selector)
        assert len(mine) == 5 and len(revision_index.select("uid-app000", selector)) == 1
        candidates = pod_index.select(selector)
        assert sum(len(pods_of(workload, candidates)) for workload in mine) == 20

    read()
    return lines_run(read)


def test_one_uniteddeployments_reads_do_not_grow_with_the_namespace() -> None:
    small, large = one_sync_reads(3), one_sync_reads(60)
    # 20x the UnitedDeployments: the same lines; a scan of the namespace's lists would add thousands.
    assert large == small, (small, large)
