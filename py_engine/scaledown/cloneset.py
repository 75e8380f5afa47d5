"""OpenKruise CloneSet scale-down: which pods one scale-in removes, and in what order.

A CloneSet reconcile (`Scale`) that has too many pods works in this order:

1. Planned deletions come first. Pods in lifecycle state `PreparingDelete` are
   finished off; then pods marked `apps.kruise.io/specified-delete` (any value)
   or listed in `spec.scaleStrategy.podsToDelete` are deleted, in list order,
   update-revision ones before old-revision ones. While any planned deletion is
   pending, the ranked scale-in below is skipped entirely.
2. Ranked scale-in splits the other pods by revision and removes
   `scaleDownNumOldRevision` old-revision pods before touching update-revision
   pods. Inside each revision group (`choose`): if fewer pods go than the group
   holds, a ranker is built over that group only (SpreadConstraintsRanker when the
   template has topology spread constraints, else SameNodeRanker), the group is
   sorted with the Kruise comparator plus ranks plus availability
   (`IsPodAvailable` with `minReadySeconds`), and the first pods are taken;
   if the whole group goes, it goes unsorted, in list order.
3. Ready pods are deleted only while `deleteReadyLimit` lasts; not-ready pods
   (readiness here = available with minReadySeconds 0) always go.

`cloneset_deletion_order` flattens that into one first-to-delete-first list;
`cloneset_victims` and `choose_pods_to_delete` give the exact choice for a count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from py_engine.scaledown.errors import ScaledownInputError
from py_engine.scaledown.kruise import KruiseKeys, KruiseOrder, availability, is_pod_available
from py_engine.scaledown.ordering import LAST, UNSORTED, Placement
from py_engine.scaledown.pods import PodFacts
from py_engine.scaledown.rankers import (
    NodeLabels,
    SpreadConstraint,
    constraints_from_workload,
    same_node_ranks,
    spread_constraints_ranking,
)

PREPARING_DELETE = "PreparingDelete"
PREPARING_UPDATE = "PreparingUpdate"

# Criteria that separate groups in a flattened CloneSet order.
BY_PREPARING_DELETE = "preparing-delete"
BY_SPECIFIED_DELETE = "specified-delete"
BY_REVISION = "revision"
BY_PARTITION = "partition"


@dataclass(frozen=True)
class CloneSetSpec:
    """The parts of a CloneSet that steer its scale-down.

    `update_revision=None` means "unknown": every pod counts as update revision, so
    there is a single revision group. `partition` is the number of old-revision
    pods the update strategy keeps (0 = every old pod goes before new ones).
    """

    update_revision: str | None = None
    min_ready_seconds: int = 0
    pods_to_delete: frozenset[str] = frozenset()
    constraints: tuple[SpreadConstraint, ...] = ()
    partition: int = 0
    preparing_update_as_update: bool = False


def _int_or_percent(value: object, total: int, field: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            pass
        else:
            return math.ceil(percent * total / 100)
    raise ScaledownInputError(f"{field} must be an integer or a percentage like '20%', got {value!r}")


def cloneset_spec_from_object(cloneset: Mapping[str, Any]) -> CloneSetSpec:
    """Read a CloneSet object (`kubectl get cloneset NAME -o json`).

    Uses `status.updateRevision`, `spec.minReadySeconds`,
    `spec.scaleStrategy.podsToDelete`, the partition (`spec.updateStrategy.rollingUpdate.partition`
    at v1beta1, `spec.updateStrategy.partition` at v1alpha1; a percentage is scaled by
    `spec.replicas`, rounding up) and the template's
    topology spread constraints.
    """
    if not isinstance(cloneset, Mapping):
        raise ScaledownInputError("the CloneSet must be a JSON object")
    kind = cloneset.get("kind")
    if kind is not None and kind != "CloneSet":
        raise ScaledownInputError(f"expected a CloneSet, got kind {kind!r}")
    spec = cloneset.get("spec") or {}
    status = cloneset.get("status") or {}
    if not isinstance(spec, Mapping) or not isinstance(status, Mapping):
        raise ScaledownInputError("CloneSet spec and status must be objects")
    revision = status.get("updateRevision")
    if revision is not None and not isinstance(revision, str):
        raise ScaledownInputError("status.updateRevision must be a string")
    min_ready = spec.get("minReadySeconds", 0) or 0
    if not isinstance(min_ready, int) or isinstance(min_ready, bool) or min_ready < 0:
        raise ScaledownInputError("spec.minReadySeconds must be a non-negative integer")
    scale_strategy = spec.get("scaleStrategy") or {}
    names = scale_strategy.get("podsToDelete") or [] if isinstance(scale_strategy, Mapping) else None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ScaledownInputError("spec.scaleStrategy.podsToDelete must be a list of pod names")
    replicas = spec.get("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise ScaledownInputError("spec.replicas must be an integer")
    raw_partition, where = _partition_field(cloneset)
    partition = 0
    if raw_partition is not None:
        partition = max(min(_int_or_percent(raw_partition, replicas, where), replicas), 0)
    return CloneSetSpec(
        update_revision=revision or None,
        min_ready_seconds=min_ready,
        pods_to_delete=frozenset(names),
        constraints=constraints_from_workload(cloneset),
        partition=partition,
    )


def _partition_field(cloneset: Mapping[str, Any]) -> tuple[object, str]:
    """The partition and its path in the CloneSet's API version's layout.

    v1beta1 keeps it in `spec.updateStrategy.rollingUpdate`, v1alpha1 directly in
    `spec.updateStrategy`; an object without `apiVersion` is read in whichever layout it uses.
    """
    strategy = (cloneset.get("spec") or {}).get("updateStrategy") or {}
    if not isinstance(strategy, Mapping):
        return None, "spec.updateStrategy"
    rolling = strategy.get("rollingUpdate")
    version = str(cloneset.get("apiVersion") or "")
    if version.endswith("/v1alpha1") or (not version and not isinstance(rolling, Mapping)):
        return strategy.get("partition"), "spec.updateStrategy.partition"
    return (
        rolling.get("partition") if isinstance(rolling, Mapping) else None,
        "spec.updateStrategy.rollingUpdate.partition",
    )


def _short_hash(revision: str) -> str:
    return revision.rsplit("-", 1)[-1]


def equal_to_revision_hash(label: str | None, revision: str) -> bool:
    """Kruise's `EqualToRevisionHash`: same hash, or same suffix after the last `-`."""
    value = label or ""
    return value == revision or _short_hash(value) == _short_hash(revision)


def is_updated(pod: PodFacts, spec: CloneSetSpec) -> bool:
    """Whether a pod counts as update revision for scale-down."""
    if spec.update_revision is None:
        return True
    if spec.preparing_update_as_update and pod.lifecycle_state == PREPARING_UPDATE:
        return True
    return equal_to_revision_hash(pod.revision, spec.update_revision)


def is_specified_delete(pod: PodFacts, spec: CloneSetSpec) -> bool:
    """Label `apps.kruise.io/specified-delete` (any value) or name in `podsToDelete`."""
    return pod.specified_delete or pod.name in spec.pods_to_delete


def planned_deletions(
    facts: Sequence[PodFacts], spec: CloneSetSpec
) -> tuple[list[int], list[int], list[int]]:
    """(PreparingDelete pods, specified update-revision pods, specified old-revision pods), list order.

    Specified pods already in PreparingDelete are counted only once, with the
    PreparingDelete pods (Kruise finishes those first).
    """
    pre_delete, specified_new, specified_old, _, _ = _partition(facts, spec)
    return pre_delete, specified_new, specified_old


def _partition(
    facts: Sequence[PodFacts], spec: CloneSetSpec
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Input indices: PreparingDelete, specified (update revision), specified (old
    revision), the other old-revision pods, the other update-revision pods."""
    pre_delete: list[int] = []
    specified_new: list[int] = []
    specified_old: list[int] = []
    old: list[int] = []
    new: list[int] = []
    listed = spec.pods_to_delete
    for index, pod in enumerate(facts):
        if pod.lifecycle_state == PREPARING_DELETE:
            pre_delete.append(index)
            continue
        updated = is_updated(pod, spec)
        if pod.specified_delete or pod.name in listed:
            (specified_new if updated else specified_old).append(index)
        else:
            (new if updated else old).append(index)
    return pre_delete, specified_new, specified_old, old, new


def group_ranks(
    facts: Sequence[PodFacts],
    group: Sequence[int],
    spec: CloneSetSpec,
    nodes: NodeLabels | None,
    keys: KruiseKeys | None = None,
) -> list[float]:
    """The ranker `choose` builds over one revision group, aligned with `group`.

    `keys` are the group members' precomputed `KruiseKeys`, if any.
    """
    members = [facts[index] for index in group]
    if spec.constraints:
        return spread_constraints_ranking(members, spec.constraints, nodes or {}, keys).ranks
    return same_node_ranks(members, keys)


def rank_group(
    facts: Sequence[PodFacts],
    group: Sequence[int],
    spec: CloneSetSpec,
    nodes: NodeLabels | None,
    now: datetime | None,
    ranks: Mapping[int, float] | None = None,
    explain: bool = True,
) -> list[Placement]:
    """One revision group sorted as `choose` sorts it; indices are input indices.

    `ranks` (input index -> rank) replaces the ranker when given. `explain=False`
    skips the per-pod criteria (left empty).
    """
    if not group:
        return []
    members = [facts[index] for index in group]
    keys = KruiseKeys(members)
    if ranks is not None:
        member_ranks = [float(ranks[index]) for index in group]
    else:
        member_ranks = group_ranks(facts, group, spec, nodes, keys)
    available = availability(members, spec.min_ready_seconds, now)
    return KruiseOrder(members, member_ranks, available, keys).placements(explain, items=group)


def _unsorted(group: Sequence[int]) -> list[Placement]:
    return [Placement(index, None, UNSORTED) for index in group]


def _chain(segments: Sequence[tuple[list[Placement], str]]) -> list[Placement]:
    """Concatenate groups; each group's last pod is labelled with why its group comes first."""
    present = [(segment, label) for segment, label in segments if segment]
    chained: list[Placement] = []
    for position, (segment, label) in enumerate(present):
        tail = label if position + 1 < len(present) else LAST
        chained.extend(segment[:-1])
        chained.append(segment[-1]._replace(criterion=tail))
    return chained


def choose(
    facts: Sequence[PodFacts],
    group: Sequence[int],
    count: int,
    spec: CloneSetSpec,
    nodes: NodeLabels | None,
    now: datetime | None,
    ranks: Mapping[int, float] | None = None,
    explain: bool = True,
) -> list[Placement]:
    """Kruise's `choose(pods, diff)`: sort only when some pods of the group stay."""
    if count <= 0:
        return []
    if count < len(group):
        return rank_group(facts, group, spec, nodes, now, ranks, explain)[:count]
    # diff == len: every pod goes, unsorted; diff > len: upstream logs and returns them all.
    return _unsorted(group)


def choose_pods_to_delete(
    facts: Sequence[PodFacts],
    total: int,
    old_revision_diff: int,
    not_updated: Sequence[int],
    updated: Sequence[int],
    spec: CloneSetSpec,
    nodes: NodeLabels | None,
    now: datetime | None,
    ranks: Mapping[int, float] | None = None,
    explain: bool = True,
) -> list[Placement]:
    """`choosePodsToDelete(totalDiff, currentRevDiff, notUpdatedPods, updatedPods)`."""
    if old_revision_diff >= total:
        segments = [(choose(facts, not_updated, total, spec, nodes, now, ranks, explain), LAST)]
    elif old_revision_diff > 0:
        segments = [
            (choose(facts, not_updated, old_revision_diff, spec, nodes, now, ranks, explain), BY_REVISION),
            (choose(facts, updated, total - old_revision_diff, spec, nodes, now, ranks, explain), LAST),
        ]
    else:
        segments = [(choose(facts, updated, total, spec, nodes, now, ranks, explain), LAST)]
    return _chain(segments)


def _planned_segments(
    pre_delete: list[int], specified_new: list[int], specified_old: list[int]
) -> list[tuple[list[Placement], str]]:
    return [
        (_unsorted(pre_delete), BY_PREPARING_DELETE),
        (_unsorted(specified_new), BY_REVISION if specified_old else BY_SPECIFIED_DELETE),
        (_unsorted(specified_old), BY_SPECIFIED_DELETE),
    ]


def cloneset_deletion_order(
    facts: Sequence[PodFacts],
    spec: CloneSetSpec,
    nodes: NodeLabels | None = None,
    now: datetime | None = None,
    ranks: Mapping[int, float] | None = None,
    explain: bool = True,
) -> list[Placement]:
    """Every pod, first to delete first, over successive reconciles of a scale-down.

    Planned deletions, then the old-revision pods the partition lets go (ranked
    within the old group), then the update-revision pods (ranked within their
    group), then any old-revision pods the partition keeps. Any prefix of this
    list is the set a scale-down by that many pods removes (modulo
    `deleteReadyLimit` pacing).
    """
    pre_delete, specified_new, specified_old, old, new = _partition(facts, spec)
    old_ranked = rank_group(facts, old, spec, nodes, now, ranks, explain)
    new_ranked = rank_group(facts, new, spec, nodes, now, ranks, explain)
    old_first = max(len(old) - spec.partition, 0)
    return _chain(
        [
            *_planned_segments(pre_delete, specified_new, specified_old),
            (old_ranked[:old_first], BY_REVISION),
            (new_ranked, BY_PARTITION),
            (old_ranked[old_first:], LAST),
        ]
    )


def cloneset_victims(
    facts: Sequence[PodFacts],
    spec: CloneSetSpec,
    count: int,
    nodes: NodeLabels | None = None,
    now: datetime | None = None,
    ranks: Mapping[int, float] | None = None,
    explain: bool = True,
) -> list[Placement]:
    """The pods a scale-down by `count` removes, in the order Kruise picks them.

    Planned deletions go first (when there are more of them than `count`, the
    first `count` are returned; Kruise would delete them all and create
    replacements). The remainder is one `choosePodsToDelete` over the other
    pods, with `scaleDownNumOldRevision = old-revision pods - partition`.
    """
    if count < 0 or count > len(facts):
        raise ValueError(f"cannot scale down by {count}: there are {len(facts)} active pods")
    pre_delete, specified_new, specified_old, old, new = _partition(facts, spec)
    planned = _planned_segments(pre_delete, specified_new, specified_old)
    planned_count = sum(len(segment) for segment, _ in planned)
    if count <= planned_count:
        victims = _chain(planned)[:count]
    else:
        old_diff = max(len(old) - spec.partition, 0)
        chosen = choose_pods_to_delete(
            facts, count - planned_count, old_diff, old, new, spec, nodes, now, ranks, explain
        )
        victims = _chain([*planned, (chosen, LAST)])
    if victims:
        victims[-1] = victims[-1]._replace(criterion=LAST)
    return victims


def filter_delete_ready_limit(
    facts: Sequence[PodFacts], chosen: Sequence[int], limit: int, now: datetime | None
) -> list[int]:
    """Keep every not-ready pod, and ready ones only while `deleteReadyLimit` lasts."""
    kept: list[int] = []
    for index in chosen:
        if not is_pod_available(facts[index], 0, now):
            kept.append(index)
        elif limit > 0:
            kept.append(index)
            limit -= 1
    return kept


def scale_in_pass(
    facts: Sequence[PodFacts],
    spec: CloneSetSpec,
    scale_down_num: int,
    scale_down_num_old_revision: int,
    *,
    delete_ready_limit: int | None = None,
    nodes: NodeLabels | None = None,
    now: datetime | None = None,
) -> list[int]:
    """Input indices one reconcile deletes, given the controller's computed diffs.

    Planned deletions win (and suppress the ranked scale-in); otherwise
    `choosePodsToDelete` runs. `delete_ready_limit=None` means unlimited.
    """
    pre_delete, specified_new, specified_old, old, new = _partition(facts, spec)
    specified = specified_new + specified_old
    limit = len(facts) if delete_ready_limit is None else delete_ready_limit
    if pre_delete:
        return pre_delete
    if specified:
        return filter_delete_ready_limit(facts, specified, limit, now)
    if scale_down_num <= 0:
        return []
    chosen = choose_pods_to_delete(
        facts, scale_down_num, scale_down_num_old_revision, old, new, spec, nodes, now
    )
    return filter_delete_ready_limit(facts, [placement.item for placement in chosen], limit, now)
