"""Compact node facts for the subset policy's node-fit simulation (Adaptive spreads).

The policy does not need whole Node objects, only what the scheduler's
filters read: labels, taints, cordoning, and free resources. Free resources
are the node's allocatable minus the requests of the non-terminal pods bound
to it (terminating pods still hold theirs), computed with the same quantity
and request arithmetic as the scheduler (`py_engine.semantics`). The webhook's node
watch cache and `spreadgate admit` both build their inventory here.

A `NodeInventory` knows a digest of its facts (`version`), so the eligibility
cache can key decisions by it without re-serialising hundreds of nodes.
"""

from __future__ import annotations

import hashlib
import json
import threading
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


def build_node_inventory(nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> NodeInventory:
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


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def constrained_label_keys(pod: Mapping[str, Any], subsets: Iterable[Mapping[str, Any]]) -> tuple[frozenset[str], bool]:
    """Label keys the pod's or any subset's node terms read, and whether any term reads the node name."""
    keys: set[str] = set()
    by_name = False
    spec = _mapping(pod.get("spec"))
    keys.update(str(k) for k in _mapping(spec.get("nodeSelector")))
    node_affinity = _mapping(_mapping(spec.get("affinity")).get("nodeAffinity"))
    required = _mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms: list[Any] = list(required.get("nodeSelectorTerms") or [])
    terms += [s.get("requiredNodeSelectorTerm") for s in subsets if isinstance(s, Mapping)]
    for term in terms:
        if not isinstance(term, Mapping):
            continue
        keys.update(str(e.get("key")) for e in term.get("matchExpressions") or [] if isinstance(e, Mapping))
        by_name = by_name or bool(term.get("matchFields"))
    return frozenset(keys), by_name


def _pareto_front(free_vectors: Iterable[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """The free-resource vectors not dominated by another: a pod fits some node of the
    class exactly when it fits one of these."""
    front: list[tuple[float, int, int]] = []
    for vector in sorted(set(free_vectors), reverse=True):
        if not any(all(o >= v for o, v in zip(other, vector, strict=True)) for other in front):
            front.append(vector)
    return front


class NodeClassCache:
    """`policy_node_classes` remembered per (inventory version, label keys, node names kept):
    the webhook asks for the same reduction for every pod of a burst until a node or a bound
    pod changes. Owned by whoever runs admissions (the admission service, the UnitedDeployment
    node-fit check), never process-global. Thread-safe; keeps the `maxsize` newest entries."""

    def __init__(self, maxsize: int = 64) -> None:
        self.maxsize = max(maxsize, 1)
        self._entries: dict[tuple[str, frozenset[str], bool], NodeInventory] = {}
        self._lock = threading.Lock()

    def classes(self, inventory: Sequence[Mapping[str, Any]], label_keys: frozenset[str],
                keep_names: bool) -> NodeInventory:
        """The reduced inventory; computed once per key (an inventory without a `version`
        is reduced every time)."""
        version = getattr(inventory, "version", None)
        if not isinstance(version, str):
            return policy_node_classes(inventory, label_keys, keep_names)
        key = (version, label_keys, keep_names)
        with self._lock:
            found = self._entries.get(key)
        if found is not None:
            return found
        classes = policy_node_classes(inventory, label_keys, keep_names)
        with self._lock:
            if len(self._entries) >= self.maxsize:
                self._entries.pop(next(iter(self._entries)))  # oldest first
            self._entries[key] = classes
        return classes

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def policy_node_classes(
    inventory: Sequence[Mapping[str, Any]], label_keys: frozenset[str], keep_names: bool
) -> NodeInventory:
    """The inventory reduced to what the subset policy can tell apart, with the same answers.

    The policy reads only the labels named in node terms, the taints that keep pods
    off (NoSchedule, NoExecute), cordoning, and whether requests fit the free
    resources. Nodes that agree on all of that form one class, and within a class
    only the Pareto-maximal free (cpu, memory, pods) vectors matter. Cordoned nodes
    and nodes without a free pod slot can never fit and are dropped. A cluster of
    1,000 nodes over 3 zones typically becomes a handful of entries, which keeps the
    policy's node-fit cost independent of cluster size.
    """
    classes: dict[tuple[Any, ...], list[tuple[float, int, int]]] = {}
    unlimited_pods = 1 << 30
    for node in inventory:
        free = node.get("free") or {}
        pods = int(free.get("pods", unlimited_pods))
        if node.get("unschedulable") or pods < 1:
            continue
        labels = tuple(sorted((k, v) for k, v in (node.get("labels") or {}).items() if k in label_keys))
        taints = tuple(sorted(
            (str(t.get("key", "")), str(t.get("value", "")), str(t["effect"]))
            for t in node.get("taints") or []
            if t.get("effect") in ("NoSchedule", "NoExecute")
        ))
        key = (labels, taints, node.get("name", "") if keep_names else "")
        classes.setdefault(key, []).append((float(free.get("cpu", 0)), int(free.get("memory", 0)), pods))
    facts = []
    for (labels, taints, name), vectors in classes.items():
        for cpu, memory, pods in _pareto_front(vectors):
            facts.append({
                "name": name,
                "labels": dict(labels),
                "taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints],
                "free": {"cpu": cpu, "memory": memory, "pods": pods},
            })
    return NodeInventory(facts)
