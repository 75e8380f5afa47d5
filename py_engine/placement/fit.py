"""The node-fit query: which of these subsets have a node a pod of this template fits?

A subset here is what placement needs of one (`SubsetTerms`): its name, the node selector
term it requires, the tolerations it adds and the patch whose container resources replace
the template's. The answer is the subset policy's (`policies/subset/eligibility.rego`, via
`eligibility`) over the node inventory reduced to node classes (`classes`): a subset is
eligible when some node matches the pod's and the subset's terms, carries no taint the pod
(with the subset's tolerations) does not tolerate, and has the free cpu, memory and pod slot
the pod requests, and the subset's term does not contradict the pod's own node affinity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.placement.classes import NodeClassCache, constrained_label_keys
from py_engine.placement.eligibility import (
    EligibilityCache,
    EligibilityDecision,
    build_eligibility_input,
    decide_eligibility_cached,
)
from py_engine.policy import PolicyEngine


@dataclass(frozen=True)
class SubsetTerms:
    """One subset of nodes, as the query reads it."""

    name: str
    node_selector_term: Mapping[str, Any] | None = None
    tolerations: tuple[Mapping[str, Any], ...] = ()
    patch: Mapping[str, Any] | None = None

    def policy_subset(self) -> dict[str, Any]:
        """The subset in the policy's input shape (`eligibility.trim_subset` trims it further)."""
        entry: dict[str, Any] = {"name": self.name}
        if self.node_selector_term is not None:
            entry["requiredNodeSelectorTerm"] = self.node_selector_term
        if self.tolerations:
            entry["tolerations"] = [dict(t) for t in self.tolerations]
        if self.patch is not None:
            entry["patch"] = self.patch
        return entry


def fitting_subsets(
    engine: PolicyEngine,
    pod: Mapping[str, Any],
    subsets: Sequence[SubsetTerms],
    inventory: Sequence[Mapping[str, Any]],
    *,
    cache: EligibilityCache | None = None,
    node_classes: NodeClassCache | None = None,
) -> EligibilityDecision:
    """The policy's decision for a pod shaped `pod` (`{"spec": ...}`) over `subsets` and the
    nodes of `inventory`: eligible names in `subsets` order, and why the others are not.
    Raises PolicyError when the policy fails."""
    shaped = [subset.policy_subset() for subset in subsets]
    keys, keep_names = constrained_label_keys(pod, shaped)
    classes = (node_classes or NodeClassCache(1)).classes(inventory, keys, keep_names=keep_names)
    policy_input = build_eligibility_input(pod, shaped, (), classes)
    return decide_eligibility_cached(engine, policy_input, cache, nodes_version=classes.version)
