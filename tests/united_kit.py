"""Objects and helpers for the UnitedDeployment controller tests (embedded cluster, virtual time)."""

from __future__ import annotations

import contextlib
import copy
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from py_engine.assembled_stack import Stack
from py_engine.model.ud_constants import SUBSET_NAME_LABEL
from py_engine.sim.nodepool import nodes_from_description

UDS = "spreadgate.dev/v1beta1/uniteddeployments"
DEPLOYMENTS = "apps/v1/deployments"
STATEFULSETS = "apps/v1/statefulsets"
REVISIONS = "apps/v1/controllerrevisions"
POOL = "node.spreadgate.dev/pool"


def term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": POOL, "operator": "In", "values": [pool]}]}


def pools(*names: str, count: int = 2, taint: str | None = None, pods: int = 110) -> list[dict[str, Any]]:
    """One pool per name (`count` nodes labelled `POOL=<name>`); `taint` gets a NoSchedule taint."""
    described = []
    for name in names:
        pool: dict[str, Any] = {
            "name": name,
            "count": count,
            "labels": {POOL: name},
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": str(pods)},
        }
        if name == taint:
            pool["taints"] = [{"key": "spreadgate.dev/blocked", "value": "true", "effect": "NoSchedule"}]
        described.append(pool)
    return nodes_from_description({"pools": described})


def pod_template(app: str = "web", image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [
                {"name": "main", "image": image, "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
            ]
        },
    }


def united(
    name: str,
    replicas: int,
    subsets: list[dict[str, Any]],
    *,
    kind: str = "deploymentTemplate",
    schedule: dict[str, Any] | None = None,
    partitions: dict[str, int] | None = None,
    annotations: dict[str, str] | None = None,
    image: str = "nginx:1.27",
) -> dict[str, Any]:
    workload_spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": pod_template(name, image),
    }
    if kind in ("statefulSetTemplate", "advancedStatefulSetTemplate"):
        workload_spec["serviceName"] = name
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {kind: {"metadata": {"labels": {"app": name}}, "spec": workload_spec}},
        "topology": {"subsets": copy.deepcopy(subsets)},
    }
    if schedule is not None:
        spec["topology"]["scheduleStrategy"] = schedule
    if partitions is not None:
        spec["updateStrategy"] = {"type": "Manual", "manualUpdate": {"partitions": partitions}}
    return {
        "apiVersion": "spreadgate.dev/v1beta1",
        "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": spec,
    }


def live_pods(stack: Stack, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in stack.api.list("v1/pods", "default", label_selector=f"app={app}")["items"]
        if not p["metadata"].get("deletionTimestamp")
    ]


def pods_per_subset(stack: Stack, app: str, *, placed_only: bool = False) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for pod in live_pods(stack, app):
        if placed_only and not pod.get("spec", {}).get("nodeName"):
            continue
        counts[str(pod["metadata"].get("labels", {}).get(SUBSET_NAME_LABEL, "-"))] += 1
    return dict(counts)


def pending_per_subset(stack: Stack, app: str) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for pod in live_pods(stack, app):
        if not pod.get("spec", {}).get("nodeName"):
            counts[str(pod["metadata"].get("labels", {}).get(SUBSET_NAME_LABEL, "-"))] += 1
    return dict(counts)


def workloads(stack: Stack, resource: str = DEPLOYMENTS) -> dict[str, dict[str, Any]]:
    """Subset name -> workload (live ones)."""
    out = {}
    for obj in stack.api.list(resource, "default")["items"]:
        if obj["metadata"].get("deletionTimestamp"):
            continue
        subset = obj["metadata"].get("labels", {}).get(SUBSET_NAME_LABEL)
        if subset:
            out[str(subset)] = obj
    return out


def replicas_of(stack: Stack, resource: str = DEPLOYMENTS) -> dict[str, int]:
    return {name: int(obj["spec"].get("replicas", 0)) for name, obj in workloads(stack, resource).items()}


def ud(stack: Stack, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = stack.api.get(UDS, "default", name)
    return obj


def ud_events(stack: Stack) -> list[dict[str, Any]]:
    """The Events recorded on UnitedDeployments in namespace default."""
    return [
        e
        for e in stack.api.list("v1/events", "default")["items"]
        if e["involvedObject"]["kind"] == "UnitedDeployment"
    ]


def ud_warnings(stack: Stack) -> list[tuple[str, str]]:
    """(reason, message) of each Warning Event recorded on a UnitedDeployment."""
    return [(e["reason"], e["message"]) for e in ud_events(stack) if e["type"] == "Warning"]


def scale(stack: Stack, name: str, replicas: int) -> None:
    """What `kubectl scale sgud/NAME --replicas N` (and an HPA) does: a merge patch of /scale."""
    stack.api.patch(UDS, "default", name, {"spec": {"replicas": replicas}}, "merge", subresource="scale")


def opt_out_of_validation(stack: Stack) -> None:
    """Label `default` as an operator opting a namespace out of Spreadgate's webhooks does.

    The stack registers the shipped validating webhook, which refuses the invalid objects these
    tests store; stored anyway (webhook off, namespace opted out), the controller must cope.
    """
    stack.api.patch(
        "v1/namespaces",
        None,
        "default",
        {"metadata": {"labels": {"spreadgate.dev/admission": "disabled"}}},
        "merge",
    )


@contextlib.contextmanager
def controller_process(stack: Stack, log: Path, *flags: str) -> Iterator[subprocess.Popen[bytes]]:
    """`spreadgate controller` on `stack`'s kubeconfig as a subprocess logging JSON into `log`
    (`flags`: more of its flags); killed on the way out if it is still running."""
    with log.open("w", encoding="utf-8") as sink:
        argv = [
            "controller",
            "--kubeconfig",
            str(stack.cluster.kubeconfig_path),
            *flags,
            "--log-format",
            "json",
        ]
        proc = subprocess.Popen([sys.executable, "-m", "py_engine.cli", *argv], stdout=sink, stderr=sink)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
