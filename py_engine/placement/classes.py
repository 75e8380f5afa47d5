"""Node classes: an inventory reduced to what the subset policy can tell apart.

Which label keys matter is read from the node terms of the pod and of the subsets
(`constrained_label_keys`); nodes that agree on those labels, on the taints that keep
pods off and on cordoning form one class, of which only the Pareto-maximal free
resources are kept (`policy_node_classes`). `NodeClassCache` remembers a reduction
per inventory version, so a burst of pods of one workload reduces the inventory once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from py_engine.placement.inventory import NodeInventory


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def constrained_label_keys(
    pod: Mapping[str, Any], subsets: Iterable[Mapping[str, Any]]
) -> tuple[frozenset[str], bool]:
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

    def classes(
        self, inventory: Sequence[Mapping[str, Any]], label_keys: frozenset[str], keep_names: bool
    ) -> NodeInventory:
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
        taints = tuple(
            sorted(
                (str(t.get("key", "")), str(t.get("value", "")), str(t["effect"]))
                for t in node.get("taints") or []
                if t.get("effect") in ("NoSchedule", "NoExecute")
            )
        )
        key = (labels, taints, node.get("name", "") if keep_names else "")
        classes.setdefault(key, []).append((float(free.get("cpu", 0)), int(free.get("memory", 0)), pods))
    facts = []
    for (labels, taints, name), vectors in classes.items():
        for cpu, memory, pods in _pareto_front(vectors):
            facts.append(
                {
                    "name": name,
                    "labels": dict(labels),
                    "taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints],
                    "free": {"cpu": cpu, "memory": memory, "pods": pods},
                }
            )
    return NodeInventory(facts)
