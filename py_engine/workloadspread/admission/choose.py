"""Choosing a subset for a new pod: eligibility from the policy, room from the counts.

Eligibility does not depend on counts (Schedulable condition, contradictions
with the pod's own node affinity, node fit when simulating), so it is asked
of the Rego subset policy once per distinct input and cached. Counting is
done here: the first eligible subset **in status order** (which is spec
order once the controller has synced) with `missingReplicas > 0` or `-1`
(unlimited) gets the pod (docs/design-workloadspread.md §2.1.1 step 4). StatefulSet pods are
placed by ordinal instead (§2.1.3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_engine.model import WorkloadSpread
from py_engine.model.constants import MAX_INT32
from py_engine.placement.classes import constrained_label_keys, policy_node_classes
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.eligibility import decide_subsets
from py_engine.workloadspread.admission.statuses import missing_replicas, schedulable

# Without a policy engine only the reference's Schedulable check runs, and nobody can be asked
# for its words: the one copy of the policy's `skip_reasons.unschedulable` in Python
# (policies/subset/eligibility.rego; tests/workloadspread/admission/test_eligibility.py keeps them equal).
UNSCHEDULABLE_REASON = "Schedulable condition is False (pods could not be scheduled there recently)"


@dataclass(frozen=True)
class Eligibility:
    """Subset names a pod may go to (capacity aside), and why the others may not."""

    names: frozenset[str]
    rejected: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def simulation_nodes(view: WorkloadSpread, ctx: AdmissionContext) -> Sequence[Mapping[str, Any]] | None:
    """The node inventory for node-fit checks: only for Adaptive spreads that do not
    disable simulation, and only when the caller has one."""
    strategy = view.strategy
    if strategy.is_adaptive and not strategy.disable_simulation_schedule:
        return ctx.nodes
    return None


def eligibility(
    pod: Mapping[str, Any],
    view: WorkloadSpread,
    statuses: Sequence[Mapping[str, Any]],
    ctx: AdmissionContext,
) -> Eligibility:
    """Which spec subsets `pod` may go to. Without an engine only the reference's check
    (Schedulable condition not False in `statuses`) applies."""
    if ctx.engine is None:
        by_name = {entry.get("name"): entry for entry in statuses}
        names: set[str] = set()
        rejected: dict[str, tuple[str, ...]] = {}
        for subset in view.subsets:
            if schedulable(by_name.get(subset.name) or {}):
                names.add(subset.name)
            else:
                rejected[subset.name] = (UNSCHEDULABLE_REASON,)
        return Eligibility(frozenset(names), rejected)
    nodes = simulation_nodes(view, ctx)
    if nodes is not None:
        spec_subsets = view.raw.get("spec", {}).get("subsets") or []
        keys, keep_names = constrained_label_keys(pod, spec_subsets)
        if ctx.node_classes is not None:
            nodes = ctx.node_classes.classes(nodes, keys, keep_names=keep_names)
        else:
            nodes = policy_node_classes(nodes, keys, keep_names=keep_names)
    nodes_version = getattr(nodes, "version", None) if nodes is not None else None
    decision = decide_subsets(
        ctx.engine,
        pod,
        view.raw,
        statuses,
        nodes,
        ctx.decision_cache,
        ctx.caches.subset_inputs if ctx.caches is not None else None,
        nodes_version=nodes_version if isinstance(nodes_version, str) else None,
    )
    return Eligibility(frozenset(decision.eligible), decision.rejected)


def choose_counted(statuses: Sequence[Mapping[str, Any]], eligible: Eligibility) -> int | None:
    """Index (in `statuses`) of the first eligible subset with room: missingReplicas > 0 or -1."""
    for index, entry in enumerate(statuses):
        if entry.get("name") not in eligible.names:
            continue
        missing = missing_replicas(entry)
        if missing > 0 or missing == -1:
            return index
    return None


_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def pod_ordinal(name: str) -> int:
    """A StatefulSet pod's ordinal (`web-12` -> 12); -1 when the name has none."""
    match = _ORDINAL.match(name)
    if match is None:
        return -1
    ordinal = int(match.group(2))
    return ordinal if ordinal <= MAX_INT32 else -1


def choose_by_ordinal(view: WorkloadSpread, pod_name: str, eligible: Eligibility) -> str | None:
    """StatefulSet placement: thresholds accumulate the caps of eligible subsets in spec
    order (unlimited = 2^31-1); the first subset whose threshold exceeds the ordinal.

    A percentage cap (rejected by validation for StatefulSets) counts 0, as Go's
    `IntOrString.IntValue()` reads it.
    """
    ordinal = pod_ordinal(pod_name)
    threshold = 0
    for subset in view.subsets:
        if subset.name not in eligible.names:
            continue
        if subset.max_replicas is None:
            threshold = MAX_INT32
        elif not subset.max_replicas.percent:
            threshold += subset.max_replicas.value
        if ordinal < threshold:
            return subset.name
    return None
