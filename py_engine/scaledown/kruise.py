"""OpenKruise's copy of the scale-down comparator (`clonesetutils.ActivePodsWithRanks`).

It forked from Kubernetes before the log2 buckets existed; it adds an
availability step, never gates the deletion cost, and takes its ranks from a
`Ranker` (see `rankers`). Its rules, first difference decides:

1. unscheduled before scheduled;
2. phase Pending < Unknown < Running (other phases count as Pending);
3a. unavailable before available, only when an `AvailableFunc` is supplied (the
    CloneSet passes one: lifecycle state, Running, Ready for minReadySeconds,
    `InPlaceUpdateReady` not false);
3b. not ready before ready;
4. lower pod-deletion-cost first, always (no feature gate);
5. higher rank first (a float from a `Ranker`; 0 for every pod without one);
6. if both are ready and their ready times differ: `afterOrZero` (exact times);
7. more container restarts first;
8. if the creation times differ: `afterOrZero` (exact times, no UID).

Every rule compares a per-pod value, so the comparator is a strict weak order and
sorting by the tuple of those values (`kruise_components`, packed into one
integer by `KruiseKeys`) reproduces it exactly.
Pods equal on every rule keep their input order (Go's insertion sort does the
same for up to 12 pods; pdqsort's order of equal pods beyond that is not modelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from py_engine.scaledown.ordering import Placement, explain_sorted, first_difference
from py_engine.scaledown.pods import PHASE_ORDINAL, PodFacts
from py_engine.scaledown.timekeys import NEWEST_FIRST, after_or_zero, newest_first_key, to_unix_nanos

KRUISE_CRITERIA: tuple[str, ...] = (
    "scheduled",
    "phase",
    "available",
    "ready",
    "deletion-cost",
    "rank",
    "ready-time",
    "restarts",
    "creation-time",
)

_COST_OFFSET = 2**31
NORMAL_STATES = frozenset({"", "Normal"})

KruiseComponents = tuple[int, int, int, int, int, float, int, int, int]


def is_pod_available(pod: PodFacts, min_ready_seconds: int, now: datetime | None) -> bool:
    """The CloneSet's `IsPodAvailable(pod, minReadySeconds)`.

    Lifecycle state empty or `Normal`; phase Running; Ready; when
    `min_ready_seconds > 0`, a non-zero ready transition strictly more than
    `min_ready_seconds` before `now`; and an `InPlaceUpdateReady` condition, if
    present, that is `True`.
    """
    if pod.lifecycle_state not in NORMAL_STATES:
        return False
    if pod.phase != "Running" or not pod.ready:
        return False
    if min_ready_seconds > 0:
        if now is None:
            raise ValueError("availability with minReadySeconds > 0 needs a reference time")
        if pod.ready_time is None:
            return False
        now_ns = to_unix_nanos(now)
        if now_ns is None or not pod.ready_time + min_ready_seconds * 1_000_000_000 < now_ns:
            return False
    return pod.in_place_update_ready is None or pod.in_place_update_ready == "True"


def availability(facts: Sequence[PodFacts], min_ready_seconds: int, now: datetime | None) -> list[bool]:
    """`is_pod_available` for every pod (the CloneSet's AvailableFunc over a group)."""
    if min_ready_seconds > 0:
        return [is_pod_available(pod, min_ready_seconds, now) for pod in facts]
    normal = NORMAL_STATES
    return [
        pod.ready
        and pod.phase == "Running"
        and pod.lifecycle_state in normal
        and (pod.in_place_update_ready is None or pod.in_place_update_ready == "True")
        for pod in facts
    ]


def kruise_decide(
    a: PodFacts,
    b: PodFacts,
    rank_a: float = 0.0,
    rank_b: float = 0.0,
    available_a: bool | None = None,
    available_b: bool | None = None,
) -> tuple[int, str]:
    """Upstream Kruise `Less` for one pair: (-1 a first | 1 b first | 0 neither, criterion).

    `available_*` are the `AvailableFunc` results, or None when no function is set.
    """
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return (-1 if not a.node_name else 1), "scheduled"
    phase_a = PHASE_ORDINAL.get(a.phase, 0)
    phase_b = PHASE_ORDINAL.get(b.phase, 0)
    if phase_a != phase_b:
        return (-1 if phase_a < phase_b else 1), "phase"
    if available_a is not None and available_b is not None and available_a != available_b:
        return (-1 if not available_a else 1), "available"
    if a.ready != b.ready:
        return (-1 if not a.ready else 1), "ready"
    if a.cost != b.cost:
        return (-1 if a.cost < b.cost else 1), "deletion-cost"
    if rank_a != rank_b:
        return (-1 if rank_a > rank_b else 1), "rank"
    if a.ready and b.ready and a.ready_time != b.ready_time:
        return (-1 if after_or_zero(a.ready_time, b.ready_time) else 1), "ready-time"
    if a.restarts != b.restarts:
        return (-1 if a.restarts > b.restarts else 1), "restarts"
    if a.created != b.created:
        return (-1 if after_or_zero(a.created, b.created) else 1), "creation-time"
    return 0, "equal"


def kruise_less(
    a: PodFacts,
    b: PodFacts,
    rank_a: float = 0.0,
    rank_b: float = 0.0,
    available_a: bool | None = None,
    available_b: bool | None = None,
) -> bool:
    """Upstream Kruise `ActivePodsWithRanks.Less`: True when `a` is deleted before `b`."""
    return kruise_decide(a, b, rank_a, rank_b, available_a, available_b)[0] < 0


def kruise_components(pod: PodFacts, rank: float = 0.0, available: bool | None = None) -> KruiseComponents:
    """Per-criterion values (names in `KRUISE_CRITERIA`); their tuple order is Kruise's order."""
    return (
        1 if pod.node_name else 0,
        PHASE_ORDINAL.get(pod.phase, 0),
        0 if available is None else int(available),
        int(pod.ready),
        pod.cost,
        -rank,
        newest_first_key(pod.ready_time) if pod.ready else 0,
        -pod.restarts,
        newest_first_key(pod.created),
    )


_TIME_BITS = 72  # room for a newest-first time key (see timekeys.NEWEST_FIRST)


class KruiseKeys:
    """Integer parts of the Kruise sort key, computed once per list of pods.

    The comparator is used three ways in a CloneSet ranking (per-node sort without
    rank, per-topology sort with same-node ranks, final sort with ranks and
    availability), over the same pods. Each pod's rules are folded into three
    integers once: `hi` (scheduled, phase), `lo` (ready, cost) and `tail`
    (ready time, restarts, creation time). Availability slots in between `hi` and
    `lo`, the rank (as its level among the distinct ranks) between head and tail,
    so the whole key is one integer, which `sorted()` compares fastest.
    """

    __slots__ = ("hi", "lo", "tail", "tail_bits")

    def __init__(self, facts: Sequence[PodFacts]) -> None:
        most_restarts = max((pod.restarts for pod in facts), default=0)
        restart_bits = (most_restarts + 1).bit_length()
        ready_shift = restart_bits + _TIME_BITS
        phases = PHASE_ORDINAL
        newest = NEWEST_FIRST
        self.hi = [(4 if pod.node_name else 0) + phases.get(pod.phase, 0) for pod in facts]
        self.lo = [(pod.ready << 32) + pod.cost + _COST_OFFSET for pod in facts]
        tails: list[int] = []
        append = tails.append
        for pod in facts:
            ready_time = pod.ready_time
            created = pod.created
            append(
                ((0 if not pod.ready or ready_time is None else newest - ready_time) << ready_shift)
                + ((most_restarts - pod.restarts) << _TIME_BITS)
                + (0 if created is None else newest - created)
            )
        self.tail = tails
        self.tail_bits = ready_shift + _TIME_BITS

    def heads(self, available: Sequence[bool] | None) -> list[int]:
        """Rules 1-4 (with availability when given) as one integer per pod."""
        if available is None:
            return [((hi * 2) << 33) + lo for hi, lo in zip(self.hi, self.lo, strict=True)]
        return [
            ((hi * 2 + flag) << 33) + lo for hi, flag, lo in zip(self.hi, available, self.lo, strict=True)
        ]

    def keys(
        self, ranks: Sequence[float] | None = None, available: Sequence[bool] | None = None
    ) -> list[int]:
        """One integer sort key per pod; ranks enter as their position among the distinct ranks."""
        heads = self.heads(available)
        bits = self.tail_bits
        if ranks is None:
            return [(head << bits) + tail for head, tail in zip(heads, self.tail, strict=True)]
        if len(ranks) != len(heads):
            raise ValueError(f"{len(ranks)} ranks for {len(heads)} pods")
        # Higher rank first: level 0 is the highest distinct rank. (Float ranks
        # compare exactly; equal floats share a level, as they tie upstream.)
        levels = {rank: level for level, rank in enumerate(sorted(set(ranks), reverse=True))}
        span = len(levels)
        return [
            ((head * span + levels[rank]) << bits) + tail
            for head, rank, tail in zip(heads, ranks, self.tail, strict=True)
        ]


class KruiseOrder:
    """A set of pods sorted by the Kruise comparator (optionally with ranks and availability)."""

    def __init__(
        self,
        facts: Sequence[PodFacts],
        ranks: Sequence[float] | None = None,
        available: Sequence[bool] | None = None,
        parts: KruiseKeys | None = None,
    ) -> None:
        if ranks is not None and len(ranks) != len(facts):
            raise ValueError(f"{len(ranks)} ranks for {len(facts)} pods")
        if available is not None and len(available) != len(facts):
            raise ValueError(f"{len(available)} availability flags for {len(facts)} pods")
        self.facts = facts
        self.ranks: Sequence[float] = ranks if ranks is not None else [0.0] * len(facts)
        self.available = available
        keys = (parts if parts is not None else KruiseKeys(facts)).keys(ranks, available)
        self.keys = keys
        self.order: list[int] = sorted(range(len(facts)), key=keys.__getitem__)

    def components(self, index: int) -> KruiseComponents:
        """Per-criterion values of one pod (names in `KRUISE_CRITERIA`)."""
        available = None if self.available is None else self.available[index]
        return kruise_components(self.facts[index], self.ranks[index], available)

    def criterion(self, first: int, second: int) -> str:
        """The criterion that orders input pod `first` before `second`."""
        return first_difference(self.components(first), self.components(second), KRUISE_CRITERIA)

    def placements(self, explain: bool = True, items: Sequence[int] | None = None) -> list[Placement]:
        """The order with each pod's rank and the criterion separating it from the next pod.

        `explain=False` leaves the criteria empty, which saves building every
        pod's per-criterion tuple when only the order is wanted. `items` maps
        positions in `facts` to the caller's indices (e.g. a group's input indices).
        """
        ranks = self.ranks
        new = tuple.__new__  # NamedTuple construction without its Python-level __new__
        if explain:
            placements = explain_sorted(self.order, self.components, KRUISE_CRITERIA, ranks)
            if items is None:
                return placements
            return [new(Placement, (items[p.item], p.rank, p.criterion)) for p in placements]
        if items is None:
            return [new(Placement, (index, ranks[index], "")) for index in self.order]
        return [new(Placement, (items[index], ranks[index], "")) for index in self.order]
