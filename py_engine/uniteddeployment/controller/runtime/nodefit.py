"""Node fit before allocating (Adaptive UnitedDeployments): which subsets have no node
for a new pod?

Kruise's Adaptive strategy gives a subset its share first and notices only
after `rescheduleCriticalSeconds` of Pending pods that no node could take them.
Spreadgate asks the placement query the WorkloadSpread webhook also asks
(`py_engine.placement.fit.fitting_subsets`: the subset policy `policies/subset/eligibility.rego`
over the node inventory of `py_engine.placement.inventory`) whether any node fits a
pod of the subset: labels against the subset's node term, taints against its
tolerations, free cpu/memory/pods against the template's requests (with the
subset patch's resources). The subsets it rejects go to the planner as
`UnitedState.no_node_fit`, which keeps the pods they have placed and gives them
no more until a node fits again. `spreadgate.dev/node-fit: "false"` on the
UnitedDeployment turns this off (Kruise's timing). docs/uniteddeployment.md,
"Node fit before allocating".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from py_engine.model.constants import GROUP
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.placement.fit import SubsetTerms, fitting_subsets
from py_engine.placement.inventory import NodeInventory, build_node_inventory
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.uniteddeployment.controller.runtime.lazyengine import LazyEngine

log = logging.getLogger(__name__)

NODE_FIT_ANNOTATION = f"{GROUP}/node-fit"


def node_fit_enabled(ud: UnitedDeployment) -> bool:
    """Adaptive default mode, unless the annotation says `"false"`."""
    if not ud.schedule.is_adaptive or ud.schedule.reserves:
        return False
    annotations = (ud.raw.get("metadata") or {}).get("annotations")
    value = annotations.get(NODE_FIT_ANNOTATION) if isinstance(annotations, Mapping) else None
    return not (isinstance(value, str) and value.strip().lower() == "false")


def template_pod(ud: UnitedDeployment) -> dict[str, Any]:
    """The pod the subset workloads would create, before any subset is applied."""
    template = ud.template.spec.get("template")
    spec = template.get("spec") if isinstance(template, Mapping) else None
    return {"spec": dict(spec) if isinstance(spec, Mapping) else {}}


def subset_terms(ud: UnitedDeployment) -> list[SubsetTerms]:
    """The subsets as the placement query reads them, in spec order."""
    return [
        SubsetTerms(subset.name, subset.node_selector_term, tuple(subset.tolerations), subset.patch)
        for subset in ud.subsets
    ]


def unfit_subsets(
    engine: PolicyEngine,
    ud: UnitedDeployment,
    inventory: Sequence[Mapping[str, Any]],
    cache: EligibilityCache | None = None,
    node_classes: NodeClassCache | None = None,
) -> frozenset[str]:
    """The subsets the policy rejects for a pod of `ud` (no fitting node, or a node term
    that contradicts the template's own node affinity). Raises PolicyError."""
    decision = fitting_subsets(
        engine, template_pod(ud), subset_terms(ud), inventory, cache=cache, node_classes=node_classes
    )
    return frozenset(s.name for s in ud.subsets) - frozenset(decision.eligible)


class NodeFit:
    """The runtime's node-fit check: one engine (built lazily), a decision cache, and
    the node inventory rebuilt only when the source's nodes or pods change."""

    def __init__(self, engine_factory: Callable[[], PolicyEngine] | None = None) -> None:
        self._engine = LazyEngine(engine_factory)
        self._cache = EligibilityCache(maxsize=512)
        self._node_classes = NodeClassCache()
        self._lock = threading.Lock()
        self._inventory: tuple[object, NodeInventory] | None = None
        self.evaluations = 0

    def inventory(
        self,
        version: object,
        nodes: Callable[[], Sequence[Mapping[str, Any]]],
        pods: Callable[[], Sequence[Mapping[str, Any]]],
    ) -> NodeInventory:
        with self._lock:
            memo = self._inventory
        if memo is not None and memo[0] == version:
            return memo[1]
        inventory = build_node_inventory(nodes(), pods())
        with self._lock:
            self._inventory = (version, inventory)
        return inventory

    def unfit(self, ud: UnitedDeployment, inventory: Sequence[Mapping[str, Any]]) -> frozenset[str]:
        """Subsets with no node for a new pod; empty (Kruise's behaviour) when the check is
        off for `ud` or the policy fails."""
        if not node_fit_enabled(ud) or not ud.subsets:
            return frozenset()
        try:
            found = unfit_subsets(self._engine.get(), ud, inventory, self._cache, self._node_classes)
        except PolicyError as exc:
            log.warning("node fit of %s/%s skipped: %s", ud.namespace, ud.name, exc)
            return frozenset()
        self.evaluations += 1
        return found

    def close(self) -> None:
        self._engine.close()
