"""What a watch event must change to wake a controller, and the key it wakes.

Both controllers' triggers (`py_engine.workloadspread.controller.runtime.triggers`,
`py_engine.uniteddeployment.controller.runtime.triggers`) drop a MODIFIED event whose object
reads the same to a sync as before: the facts below are what their syncs read of a pod and
of a node. A controller's own writes (a deletion-cost patch, a label) change none of them
unless the sync reads that field, so they cannot loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.semantics.objects import meta


def queue_key(obj: Mapping[str, Any]) -> str:
    """The work-queue key of a reconciled object: `namespace/name`."""
    m = meta(obj)
    return f"{m.get('namespace') or ''}/{m.get('name') or ''}"


def pod_facts(pod: Mapping[str, Any] | None, annotations: tuple[str, ...] = ()) -> Any:
    """Phase, node, conditions, deletion, labels and the given annotations' values (None: no pod)."""
    if pod is None:
        return None
    m = meta(pod)
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    present = m.get("annotations") or {}
    return (
        status.get("phase"),
        spec.get("nodeName"),
        status.get("conditions"),
        m.get("deletionTimestamp"),
        m.get("labels"),
        *(present.get(key) for key in annotations),
    )


def node_facts(node: Mapping[str, Any] | None) -> Any:
    """The scheduling facts of a node: labels, taints, cordoning, allocatable, condition states."""
    if node is None:
        return None
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    conditions = [
        (c.get("type"), c.get("status")) for c in status.get("conditions") or [] if isinstance(c, Mapping)
    ]
    return (
        meta(node).get("labels"),
        spec.get("taints"),
        spec.get("unschedulable"),
        status.get("allocatable"),
        conditions,
    )
