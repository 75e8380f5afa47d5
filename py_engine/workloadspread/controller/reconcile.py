"""One sync of one WorkloadSpread, as a pure function of the objects and `now`.

`reconcile` answers everything the controller loop then writes: the new
status (and whether it differs semantically from the stored one), the patches
adopting pre-existing pods, the deletion cost of every active pod (and which
pods need a patch), the pods to delete for Adaptive rescheduling, when to run
again, and the events to record. No I/O and no clock: the loop and
`spreadgate reconcile` feed it the same way, so what the offline command shows
is what the controller does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from py_engine.model.errors import ModelError
from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist, target_kind
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.workloadspread.controller.costs import REFERENCE_STEP, spread_bands
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.events import Event, unique
from py_engine.workloadspread.controller.grouping import NO_SUBSET, Adoption, Grouping, group_pods, pod_name
from py_engine.workloadspread.controller.options import DEFAULT_OPTIONS, ReconcileOptions
from py_engine.workloadspread.controller.podlisting import list_pods
from py_engine.workloadspread.controller.slots import (
    MAX_SUBSETS,
    assign_slots,
    domain_orders,
    encode,
    existing_cost,
    topology_key,
)
from py_engine.workloadspread.controller.status import semantically_equal, status_lists
from py_engine.workloadspread.controller.target import TargetProblem, check_target
from py_engine.workloadspread.controller.versions import is_versioned, latest_version
from py_engine.workloadspread.controller.workloads import workload_replicas

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class ClusterView:
    """What one sync reads besides the spread: the target, candidate pods, nodes.

    `pods` are the namespace's pods in list order (the order breaks ties);
    `replica_sets` the namespace's ReplicaSets (Deployment targets);
    `scale_replicas`/`scale_selector` a custom kind's `/scale` answer, if any.
    """

    workload: Obj | None
    pods: Sequence[Obj] = ()
    nodes: Mapping[str, Obj] = field(default_factory=dict)
    replica_sets: Sequence[Obj] = ()
    whitelist: Whitelist = EMPTY_WHITELIST
    scale_replicas: int | None = None
    scale_selector: Obj | None = None


def requeue_after(durations: Iterable[float]) -> float | None:
    """When to sync again: the smallest positive duration pushed, None when there is none.

    As Kruise's requeue store (`requeueduration.Duration.Update` ignores durations
    <= 0): an entry whose deadline is exactly `now` is kept (expiries are strict,
    `deadline < now`) but asks for no requeue, so the next sync comes at the next
    positive deadline, an event or the periodic resync — never at once.
    """
    positive = [seconds for seconds in durations if seconds > 0]
    return min(positive) if positive else None


@dataclass
class SyncResult:
    """Everything one sync decided; see the module docstring.

    `requeue_after` is > 0 seconds, or None for no requeue (see `requeue_after`).
    """

    status: dict[str, Any]
    status_changed: bool
    pods: list[Obj]
    pod_subset: dict[str, str | None]
    adoptions: list[Adoption]
    costs: dict[str, str]
    cost_patches: dict[str, str]
    pods_to_delete: list[str]
    requeue_after: float | None
    events: list[Event]
    replicas: int
    refined_costs: bool
    target_problem: TargetProblem | None = None
    target_problem_new: bool = False


def _annotation(pod: Obj, key: str) -> Any:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(key)


def _refined(
    spread: WorkloadSpread, grouping: Grouping, bands: Mapping[str, int], view: ClusterView
) -> dict[str, int]:
    """In-subset costs: per subset (all versions together) a stable topology slot inside the band."""
    count = len(spread.subsets)
    key = topology_key(view.workload)
    costs: dict[str, int] = {}
    for group in [*(s.name for s in spread.subsets), NO_SUBSET]:
        members = [pod for pod in grouping.aggregate(group) if pod_name(pod) in bands]
        if not members:
            continue
        slots = assign_slots(
            domain_orders(members, key, view.nodes),
            {pod_name(pod): existing_cost(pod) for pod in members},
            lambda band: band != 0 and -(count + 1) <= band <= count,
        )
        costs.update((name, encode(bands[name], slot)) for name, slot in slots.items())
    return costs


def deletion_costs(
    spread: WorkloadSpread, grouping: Grouping, replicas: int, view: ClusterView, options: ReconcileOptions
) -> tuple[dict[str, int], bool]:
    """Cost of every active pod (empty for kinds whose scale-down ignores costs), and the mode."""
    kind = target_kind(spread)
    if view.workload is None or kind is None or not kind.deletion_cost:
        return {}, False
    latest = latest_version(spread, view.workload, view.replica_sets, options)
    bands = spread_bands(spread, grouping, replicas, latest)
    if spread.in_subset_spread and len(spread.subsets) <= MAX_SUBSETS:
        return _refined(spread, grouping, bands, view), True
    return {name: band * REFERENCE_STEP for name, band in bands.items()}, False


def reconcile(
    spread_object: Obj, view: ClusterView, now: datetime, options: ReconcileOptions = DEFAULT_OPTIONS
) -> SyncResult:
    """Compute one sync; raises ReconcileError when the inputs cannot be reconciled."""
    try:
        spread = WorkloadSpread.from_object(spread_object)
    except ModelError as exc:
        raise ReconcileError(f"WorkloadSpread: {exc}") from None
    replicas = workload_replicas(spread, view.workload, view.whitelist, view.scale_replicas)
    pods = list_pods(
        spread, view.workload, view.pods, view.replica_sets, view.scale_replicas, view.scale_selector
    )
    grouping = group_pods(spread, pods, view.nodes, replicas, versioned=is_versioned(spread, options))

    costs, refined = deletion_costs(spread, grouping, replicas, view, options)
    by_name = {pod_name(pod): pod for pod in grouping.pods}
    cost_text = {name: str(cost) for name, cost in costs.items()}
    cost_patches = {}
    for name, value in cost_text.items():
        current = _annotation(by_name[name], DELETION_COST_ANNOTATION)
        if current != value and not (current is None and value == "0"):
            cost_patches[name] = value

    lists = status_lists(spread, grouping, replicas, now, options)
    status: dict[str, Any] = {"observedGeneration": spread.generation, "subsetStatuses": lists.aggregate}
    if lists.versioned:
        status["versionedSubsetStatuses"] = lists.versioned
    target = check_target(spread, view.workload, view.whitelist, now)
    if target.conditions:
        status["conditions"] = target.conditions
    return SyncResult(
        status=status,
        status_changed=not semantically_equal(spread.raw.get("status"), status),
        pods=grouping.pods,
        pod_subset=dict(grouping.subset_of),
        adoptions=list(grouping.adoptions),
        costs=cost_text,
        cost_patches=cost_patches,
        pods_to_delete=list(lists.pods_to_delete),
        requeue_after=requeue_after(lists.requeue_seconds),
        events=unique([*target.events, *lists.events]),
        replicas=replicas,
        refined_costs=refined,
        target_problem=target.problem,
        target_problem_new=target.appeared,
    )
