"""Which watch events enqueue which UnitedDeployments.

* A UnitedDeployment event enqueues it.
* A workload event (the four subset kinds) or a ControllerRevision event
  enqueues the UnitedDeployment named by its controller owner reference, or,
  for an orphan, every UnitedDeployment of its namespace whose selector matches
  it (it may be adopted).
* A pod event enqueues the UnitedDeployments of its namespace that select it,
  when something a sync reads changed (phase, node, conditions, deletion,
  labels). Kruise does not watch pods and relies on requeue timers to notice
  pods stuck Pending; here the Adaptive verdicts also follow the pods.
* A node event that changes scheduling facts (labels, taints, cordoning,
  allocatable, conditions) enqueues every Adaptive UnitedDeployment, and so
  does a pod starting or stopping to hold a node's resources (bound, finished,
  deleted): node fit reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from py_engine.model.pods import controller_owner
from py_engine.model.ud_constants import UD_KIND
from py_engine.runtime.triggers import node_facts, pod_facts, queue_key
from py_engine.semantics.labels import SelectorError, matches_label_selector
from py_engine.semantics.objects import meta
from py_engine.uniteddeployment.controller.runtime.source import JSON, CachedUnitedSource

Enqueue = Callable[[str], None]


def _selects(ud: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    spec = ud.get("spec")
    selector = spec.get("selector") if isinstance(spec, Mapping) else None
    labels = meta(obj).get("labels")
    if not isinstance(selector, Mapping) or not selector:
        return False
    try:
        return matches_label_selector(selector, labels if isinstance(labels, Mapping) else {})
    except SelectorError:
        return False


def _adaptive(ud: Mapping[str, Any]) -> bool:
    spec = ud.get("spec")
    topology = spec.get("topology") if isinstance(spec, Mapping) else None
    strategy = topology.get("scheduleStrategy") if isinstance(topology, Mapping) else None
    return isinstance(strategy, Mapping) and strategy.get("type") == "Adaptive"


def _holds_resources(pod: Mapping[str, Any] | None) -> Any:
    """What the node inventory reads of a pod: the node it is bound to while it holds resources."""
    if pod is None:
        return None
    node = (pod.get("spec") or {}).get("nodeName")
    phase = (pod.get("status") or {}).get("phase")
    return node if node and phase not in ("Succeeded", "Failed") else None


class UnitedTriggers:
    """Wires a `CachedUnitedSource`'s caches to `enqueue` (see the module docstring)."""

    def __init__(
        self,
        source: CachedUnitedSource,
        enqueue: Enqueue,
        inventory_changed: Callable[[], None] | None = None,
    ) -> None:
        self.source = source
        self.enqueue = enqueue
        self.inventory_changed = inventory_changed or (lambda: None)

    def install(self) -> None:
        self.source.ud_cache.add_handler(self._on_ud)
        self.source.revision_cache.add_handler(self._on_owned)
        self.source.pod_cache.add_handler(self._on_pod)
        self.source.node_cache.add_handler(self._on_node)
        for cache in self.source.workload_caches.values():
            cache.add_handler(self._on_owned)

    def _on_ud(self, event: str, obj: JSON, old: JSON | None) -> None:
        self.enqueue(queue_key(obj))

    def _on_owned(self, event: str, obj: JSON, old: JSON | None) -> None:
        ns = str(meta(obj).get("namespace") or "")
        owner = controller_owner(obj)
        if owner is not None:
            if owner.get("kind") == UD_KIND:
                self.enqueue(f"{ns}/{owner.get('name')}")
            return
        for ud in self.source.ud_cache.list(ns):
            if _selects(ud, obj):
                self.enqueue(queue_key(ud))

    def _on_pod(self, event: str, pod: JSON, old: JSON | None) -> None:
        if event == "MODIFIED" and pod_facts(pod) == pod_facts(old):
            return
        if _holds_resources(pod) != _holds_resources(old):
            self.inventory_changed()
            for ud in self.source.ud_cache.list():
                if _adaptive(ud):
                    self.enqueue(queue_key(ud))
        ns = str(meta(pod).get("namespace") or "")
        for ud in self.source.ud_cache.list(ns):
            if _selects(ud, pod) or (old is not None and _selects(ud, old)):
                self.enqueue(queue_key(ud))

    def _on_node(self, event: str, node: JSON, old: JSON | None) -> None:
        if event == "MODIFIED" and node_facts(node) == node_facts(old):
            return
        self.inventory_changed()
        for ud in self.source.ud_cache.list():
            if _adaptive(ud):
                self.enqueue(queue_key(ud))
