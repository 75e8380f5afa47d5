"""Node inventory: compact node facts for the subset policy's node-fit simulation.

The policy does not need whole Node objects, only what the scheduler's
filters read: labels, taints, cordoning, and free resources. Free resources
are the node's allocatable minus the requests of the non-terminal pods bound
to it (terminating pods still hold theirs), computed with the same quantity
and request arithmetic as the scheduler (`py_engine.semantics`). The webhook's node
watch cache, `spreadgate admit` and the UnitedDeployment controller's node-fit check
all build their inventory here.

A `NodeInventory` knows a digest of its facts (`version`), so the eligibility
cache can key decisions by it without re-serialising hundreds of nodes. `classes`
reduces an inventory to what the policy can tell apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, overload

from py_engine.semantics import objects
from py_engine.semantics.scheduling import node_allocatable, pod_requests

NodeFacts = dict[str, Any]


def _bound_node(pod: Mapping[str, Any]) -> str | None:
    """The node a pod holds resources on: bound and not finished."""
    spec = pod.get("spec")
    node_name = spec.get("nodeName") if isinstance(spec, Mapping) else None
    status = pod.get("status")
    phase = status.get("phase") if isinstance(status, Mapping) else None
    if not isinstance(node_name, str) or not node_name or phase in ("Succeeded", "Failed"):
        return None
    return node_name


def _cores(amount: Fraction) -> float:
    """Cores as the policy compares them, rounded to whole millicores (like `units.parse("250m")`)."""
    return round(amount * 1000) / 1000


def node_facts(node: Mapping[str, Any], bound_pods: Iterable[Mapping[str, Any]] = ()) -> NodeFacts:
    """`{name, labels, taints, unschedulable, free: {cpu (cores), memory (bytes), pods}}`.

    `free.pods` is omitted when the node does not report a pod capacity
    (no limit); missing cpu/memory allocatable counts as 0, as in the scheduler.
    """
    metadata = objects.meta(node)
    raw_spec = node.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    allocatable = node_allocatable(node)
    used: dict[str, Fraction] = {}
    count = 0
    for pod in bound_pods:
        count += 1
        for resource, amount in pod_requests(pod).items():
            used[resource] = used.get(resource, Fraction(0)) + amount
    free: dict[str, Any] = {
        "cpu": _cores(allocatable.get("cpu", Fraction(0)) - used.get("cpu", Fraction(0))),
        "memory": int(allocatable.get("memory", Fraction(0)) - used.get("memory", Fraction(0))),
    }
    if "pods" in allocatable:
        free["pods"] = int(allocatable["pods"]) - count
    taints = [
        {k: taint[k] for k in ("key", "value", "effect") if k in taint}
        for taint in spec.get("taints") or []
        if isinstance(taint, Mapping)
    ]
    labels = metadata.get("labels")
    return {
        "name": str(metadata.get("name") or ""),
        "labels": dict(labels) if isinstance(labels, Mapping) else {},
        "taints": taints,
        "unschedulable": bool(spec.get("unschedulable", False)),
        "free": free,
    }


class NodeInventory(Sequence[NodeFacts]):
    """An immutable sequence of node facts with a digest of its content (`version`)."""

    __slots__ = ("_facts", "version")

    def __init__(self, facts: Iterable[NodeFacts]) -> None:
        self._facts: tuple[NodeFacts, ...] = tuple(facts)
        text = json.dumps(self._facts, sort_keys=True, separators=(",", ":"))
        self.version: str = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    @overload
    def __getitem__(self, index: int) -> NodeFacts: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeFacts]: ...

    def __getitem__(self, index: int | slice) -> NodeFacts | Sequence[NodeFacts]:
        return self._facts[index]

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[NodeFacts]:
        return iter(self._facts)

    def __repr__(self) -> str:
        return f"NodeInventory({len(self._facts)} nodes, version={self.version[:12]})"


def build_node_inventory(
    nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
) -> NodeInventory:
    """Facts of every node, with the pods bound to each subtracted from its allocatable."""
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        node_name = _bound_node(pod)
        if node_name is not None:
            by_node.setdefault(node_name, []).append(pod)
    facts = []
    for node in nodes:
        facts.append(node_facts(node, by_node.get(objects.name(node), ())))
    return NodeInventory(facts)
