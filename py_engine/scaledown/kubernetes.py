"""Kubernetes' scale-down comparators: `ActivePodsWithRanks` and the older `ActivePods`.

`ActivePodsWithRanks.Less(i, j)` (kube-controller-manager, used by ReplicaSet and
ReplicationController scale-down) tries eight rules in order; the first one that
tells the pods apart decides which is deleted first:

1. unscheduled before scheduled (only when exactly one `spec.nodeName` is empty);
2. phase Pending < Unknown < Running (any other phase counts as Pending);
3. not ready before ready;
4. lower pod-deletion-cost first (skipped when the `PodDeletionCost` gate is off);
5. higher rank first (ReplicaSet: co-located related pods);
6. if both are ready and their ready times differ: the more recently ready first;
7. more container restarts first;
8. if the creation times differ: the newer first.

Rules 6 and 8 use `afterOrZero` (zero time first, then newest first) or, with
`LogarithmicScaleDown` on and a reference `now`, log2-age buckets: the younger
bucket goes first and, inside one bucket, the pod with the smaller UID goes
first and the comparison *ends there* (rules 7/8 are not consulted).

Two representations live here:

* `decide` / `k8s_less`: the pairwise comparator, rule for rule as upstream. The
  vectors and property tests use it as the specification.
* `K8sOrder`: the order Spreadgate actually computes, by precomputed integer
  keys and one stable `sorted()`.

Where upstream's order is not defined, the choices made here:

* The bucket rule is not a strict weak order. Inside one bucket, two pods whose
  ready times *differ* are ordered by UID and the comparison ends, while two
  pods whose ready times are *equal* fall through to restarts and creation. So
  three pods can form a cycle (x before y by restarts, y before z and z before x
  by UID); and with equal times counting as "equal", incomparability is not
  transitive either. Go's result then depends on the input order and on which
  pairs its sort happens to compare (insertion sort up to 12 pods, pdqsort
  beyond), and need not respect every pairwise decision even when some order
  would. The model: a group of pods that tie on rules 1-5 and share a ready-time bucket is
  laid out in UID order as soon as it holds two different ready times; pods of
  that group sharing one exact ready time keep the set of UID positions they
  occupy but fill them in rules 7-8 order. With unique UIDs (always the case in
  a cluster) this respects every upstream decision whenever the decisions admit
  any order at all, and is deterministic when they do not. A group whose pods
  all share one ready time falls through to rules 7-8 exactly as upstream.
  Rule 8 is treated the same way (UID order inside a creation bucket once the
  group holds two creation times), which never contradicts upstream there:
  equal creation times compare equal upstream, so any order between them is
  consistent.
* Pods equal on every criterion keep their input order (stable sort). Go sorts
  slices of up to 12 pods by insertion sort, which does the same; for longer
  slices Go's pdqsort leaves the order of equal pods to its pivoting, which is
  not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from py_engine.scaledown.gates import DEFAULT_GATES, FeatureGates
from py_engine.scaledown.ordering import LAST, Placement, first_difference
from py_engine.scaledown.pods import PHASE_ORDINAL, PodFacts
from py_engine.scaledown.timekeys import (
    NEWEST_FIRST,
    SAFE_BELOW_NEXT_POWER,
    after_or_zero,
    log2_bucket,
    to_unix_nanos,
)

# Names of the per-criterion values `K8sOrder.components` returns, in comparison order.
K8S_CRITERIA: tuple[str, ...] = (
    "scheduled",
    "phase",
    "ready",
    "deletion-cost",
    "rank",
    "ready-time",
    "ready-time-uid",
    "restarts",
    "creation-time",
    "creation-time-uid",
)

_COST_OFFSET = 2**31  # int32 cost -> non-negative
_TIME_BITS = 72  # room for a newest-first time key (see timekeys.NEWEST_FIRST)
_BUCKET_BITS = 8  # room for a log2 bucket + 2 (ages below 2**126 ns)
_GATES_OFF = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=False)


def _nanos(now: datetime | None) -> int | None:
    return None if now is None else to_unix_nanos(now)


def _time_rule(
    t_a: int | None, t_b: int | None, uid_a: str, uid_b: str, now: int | None, buckets: bool, label: str
) -> tuple[int, str] | None:
    """Rules 6 and 8. None: the rule does not fire (equal instants)."""
    if t_a == t_b:
        return None
    if not buckets or now is None or t_a is None or t_b is None:
        return (-1 if after_or_zero(t_a, t_b) else 1), label
    bucket_a = log2_bucket(now - t_a)
    bucket_b = log2_bucket(now - t_b)
    if bucket_a != bucket_b:
        return (-1 if bucket_a < bucket_b else 1), label
    # Same bucket: the UID decides and the comparison ends, even on equal UIDs.
    if uid_a == uid_b:
        return 0, "equal"
    return (-1 if uid_a < uid_b else 1), f"{label}-uid"


def decide(
    a: PodFacts,
    b: PodFacts,
    rank_a: int = 0,
    rank_b: int = 0,
    *,
    now: datetime | None = None,
    gates: FeatureGates = DEFAULT_GATES,
) -> tuple[int, str]:
    """Upstream `ActivePodsWithRanks` for one pair: (-1 a first | 1 b first | 0 neither, criterion).

    `Less(a, b)` is `decide(...)[0] < 0` and `Less(b, a)` is `decide(...)[0] > 0`;
    the comparator is symmetric, so one call answers both.
    """
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return (-1 if not a.node_name else 1), "scheduled"
    phase_a = PHASE_ORDINAL.get(a.phase, 0)
    phase_b = PHASE_ORDINAL.get(b.phase, 0)
    if phase_a != phase_b:
        return (-1 if phase_a < phase_b else 1), "phase"
    if a.ready != b.ready:
        return (-1 if not a.ready else 1), "ready"
    if gates.pod_deletion_cost and a.cost != b.cost:
        return (-1 if a.cost < b.cost else 1), "deletion-cost"
    if rank_a != rank_b:
        return (-1 if rank_a > rank_b else 1), "rank"
    now_ns = _nanos(now)
    buckets = gates.logarithmic_scale_down
    if a.ready and b.ready:
        decided = _time_rule(a.ready_time, b.ready_time, a.uid, b.uid, now_ns, buckets, "ready-time")
        if decided is not None:
            return decided
    if a.restarts != b.restarts:
        return (-1 if a.restarts > b.restarts else 1), "restarts"
    decided = _time_rule(a.created, b.created, a.uid, b.uid, now_ns, buckets, "creation-time")
    if decided is not None:
        return decided
    return 0, "equal"


def k8s_less(
    a: PodFacts,
    b: PodFacts,
    rank_a: int = 0,
    rank_b: int = 0,
    *,
    now: datetime | None = None,
    gates: FeatureGates = DEFAULT_GATES,
) -> bool:
    """Upstream `ActivePodsWithRanks.Less`: True when `a` is deleted before `b`."""
    return decide(a, b, rank_a, rank_b, now=now, gates=gates)[0] < 0


def active_pods_less(a: PodFacts, b: PodFacts) -> bool:
    """Upstream `controller.ActivePods.Less`: rules 1, 2, 3, 6, 7, 8 with plain time comparison."""
    return decide(a, b, now=None, gates=_GATES_OFF)[0] < 0


def uid_codes(uids: Sequence[str]) -> tuple[list[int], int]:
    """Order-preserving integers for UIDs compared as Go compares strings (byte-wise).

    Each UID's UTF-8 bytes are zero-padded to the longest one and read as a
    big-endian integer, then the length breaks the tie a padding can create (a
    prefix sorts first, as in Go). "" maps to 0. Returns the codes and their bit
    width, so the codes can sit in a bit field of a larger integer key.
    """
    raw = [uid.encode() for uid in uids]
    size = max(map(len, raw), default=0)
    if size == 0:
        return [0] * len(raw), 0
    scale = size + 1
    codes = [
        int.from_bytes(data.ljust(size, b"\0"), "big") * scale + len(data) if data else 0 for data in raw
    ]
    return codes, (((1 << (8 * size)) - 1) * scale + size).bit_length()


class K8sOrder:
    """Scale-down order of pods under `ActivePodsWithRanks`, computed by sort keys.

    Build once per ranking: every key is derived from `PodFacts` in O(n), the
    UID tie-break groups (see the module docstring) in two more O(n) passes, then
    one `sorted()` runs on the keys. `order` lists input indices, first to delete
    first.
    """

    def __init__(
        self,
        facts: Sequence[PodFacts],
        ranks: Sequence[int] | None = None,
        *,
        now: datetime | None = None,
        gates: FeatureGates = DEFAULT_GATES,
    ) -> None:
        count = len(facts)
        if ranks is None:
            ranks = [0] * count
        elif len(ranks) != count:
            raise ValueError(f"{len(ranks)} ranks for {count} pods")
        self.facts = facts
        self.ranks = ranks
        self.gates = gates
        now_ns = _nanos(now)
        bucketed = gates.logarithmic_scale_down and now_ns is not None
        reference = now_ns if now_ns is not None else 0
        use_cost = gates.pod_deletion_cost
        top_rank = max(ranks, default=0)
        rank_span = top_rank - min(ranks, default=0) + 1
        phases = PHASE_ORDINAL
        # Width of a time key: a bucket (+2) needs 8 bits, a newest-first time 72.
        time_bits = _BUCKET_BITS if bucketed else _TIME_BITS

        heads: list[int] = [0] * count  # rules 1-6 (without the UID tie-break) in one integer
        ready_keys: list[int] = [0] * count
        created_keys: list[int] = [0] * count
        first_ready: dict[int, int | None] = {}  # rule-6 group -> first ready time seen
        mixed_ready: set[int] = set()  # rule-6 groups holding two different ready times
        safe = SAFE_BELOW_NEXT_POWER
        # Unpacking each facts tuple (field order of PodFacts) is cheaper than eight
        # attribute reads per pod.
        for index, (
            _,
            _,
            _,
            node_name,
            phase,
            _,
            ready,
            ready_time,
            _,
            created,
            cost,
            _,
            _,
            _,
            _,
        ) in enumerate(facts):
            # Time keys: 0 = zero time; bucketed: log2 bucket + 2 (bucket -1 -> 1),
            # inlined from timekeys.log2_bucket; otherwise timekeys.newest_first_key.
            ready_key = 0
            if ready:
                moment = ready_time
                if moment is not None:
                    if bucketed:
                        age = reference - moment
                        if age <= 0:
                            ready_key = 1
                        else:
                            bits = age.bit_length()
                            ready_key = bits + 1 if age < safe[bits - 1] else log2_bucket(age) + 2
                    else:
                        ready_key = NEWEST_FIRST - moment
                    ready_keys[index] = ready_key
            moment = created
            if moment is not None:
                if bucketed:
                    age = reference - moment
                    if age <= 0:
                        created_keys[index] = 1
                    else:
                        bits = age.bit_length()
                        created_keys[index] = bits + 1 if age < safe[bits - 1] else log2_bucket(age) + 2
                else:
                    created_keys[index] = NEWEST_FIRST - moment
            head = (4 if node_name else 0) + phases.get(phase, 0)
            head = ((head * 2 + ready) << 32) + (cost + _COST_OFFSET if use_cost else 0)
            head = ((head * rank_span + (top_rank - ranks[index])) << time_bits) + ready_key
            heads[index] = head
            # Pods with one head tie on rules 1-5 and share a ready-time bucket.
            if bucketed and ready_key and first_ready.setdefault(head, ready_time) != ready_time:
                mixed_ready.add(head)

        most_restarts = max((pod.restarts for pod in facts), default=0)
        ready_uids = [""] * count
        created_uids = [""] * count
        ready_codes: list[int] = [0] * count
        ready_bits = 0
        if bucketed:
            # Rule 8 groups, among the pods that rule 6 leaves to the later rules;
            # and, inside mixed rule-6 groups, the pods that share an exact ready time.
            first_created: dict[int, int | None] = {}
            mixed_created: set[int] = set()
            groups: dict[int, int] = {}
            first_of_time: dict[tuple[int, int | None], int] = {}
            same_time: dict[tuple[int, int | None], list[int]] = {}
            tagged: list[int] = []  # pods of mixed rule-6 groups
            for index, pod in enumerate(facts):
                head = heads[index]
                if ready_keys[index] and head in mixed_ready:
                    ready_uids[index] = pod.uid
                    tagged.append(index)
                    moment_key = (head, pod.ready_time)
                    first = first_of_time.setdefault(moment_key, index)
                    if first != index:
                        same_time.setdefault(moment_key, [first]).append(index)
                elif created_keys[index]:
                    group = ((head * (most_restarts + 1) + pod.restarts) << time_bits) + created_keys[index]
                    groups[index] = group
                    if first_created.setdefault(group, pod.created) != pod.created:
                        mixed_created.add(group)
            if mixed_created:
                for index, group in groups.items():
                    if group in mixed_created:
                        created_uids[index] = facts[index].uid
            ready_codes, ready_bits = uid_codes(ready_uids)
            if same_time:
                if len({ready_codes[index] for index in tagged}) < len(tagged):
                    # Some UIDs repeat (copies of a pod, hand-written pods): in the
                    # groups whose positions get shared out, number the positions
                    # instead, so that sharing never makes pods with different UIDs tie.
                    widest = self._number_uid_positions(
                        {head for head, _ in same_time},
                        tagged,
                        heads,
                        ready_codes,
                        created_keys,
                        most_restarts,
                    )
                    ready_bits = max(ready_bits, widest.bit_length())
                self._share_uid_slots(same_time.values(), ready_codes, created_keys, most_restarts)

        self._ready_keys = ready_keys
        self._created_keys = created_keys
        self._ready_codes = ready_codes
        self._created_uids = created_uids
        # The whole key is one integer (`sorted()` compares those fastest): rules 1-6,
        # the rule-6 UID, restarts, the rule-8 time key, the rule-8 UID, each in its
        # own bit field, most significant first.
        restart_bits = (most_restarts + 1).bit_length()
        keys: list[int]
        if bucketed:
            created_codes, created_bits = uid_codes(created_uids) if any(created_uids) else ([0] * count, 0)
            keys = []
            append = keys.append
            for index, pod in enumerate(facts):
                key = (heads[index] << ready_bits) + ready_codes[index]
                key = (key << restart_bits) + most_restarts - pod.restarts
                key = (key << time_bits) + created_keys[index]
                append((key << created_bits) + created_codes[index])
        else:
            keys = [
                (((heads[index] << restart_bits) + most_restarts - pod.restarts) << time_bits)
                + created_keys[index]
                for index, pod in enumerate(facts)
            ]
        self.keys = keys
        self.order: list[int] = sorted(range(count), key=keys.__getitem__)

    def _tie_break(self, index: int) -> tuple[Any, ...]:
        """Exact creation time and name: only identical pods tie on it, which keeps
        the result independent of input order."""
        pod = self.facts[index]
        return (pod.created is not None, pod.created or 0, pod.namespace, pod.name, index)

    def _number_uid_positions(
        self,
        shared_heads: set[int],
        tagged: Sequence[int],
        heads: Sequence[int],
        ready_codes: list[int],
        created_keys: Sequence[int],
        most_restarts: int,
    ) -> int:
        """In groups with repeated UIDs, replace UID codes by positions 0..n-1 in UID
        order (rules 7-8 and `_tie_break` order equal UIDs); returns the widest n."""
        groups: dict[int, list[int]] = {}
        for index in tagged:
            if heads[index] in shared_heads:
                groups.setdefault(heads[index], []).append(index)
        widest = 0
        for members in groups.values():
            if len({ready_codes[index] for index in members}) == len(members):
                continue
            members.sort(
                key=lambda index: (
                    ready_codes[index],
                    most_restarts - self.facts[index].restarts,
                    created_keys[index],
                    *self._tie_break(index),
                )
            )
            for position, index in enumerate(members):
                ready_codes[index] = position
            widest = max(widest, len(members))
        return widest

    def _share_uid_slots(
        self,
        classes: Iterable[list[int]],
        ready_codes: list[int],
        created_keys: Sequence[int],
        most_restarts: int,
    ) -> None:
        """Reorder pods that share a ready time inside a UID-ordered rule-6 group.

        Upstream orders two such pods by restarts and creation (rules 7-8), while
        every other pair of the group goes by UID. The pods of one ready time keep
        the set of UID positions they occupy, and fill them in rules 7-8 order (the
        UID inside a creation bucket, then creation time and name for ties). With
        unique UIDs this respects every decision
        upstream makes whenever those decisions admit an order at all; when they
        are cyclic, it is the documented deterministic choice.
        """
        for members in classes:
            slots = sorted(ready_codes[index] for index in members)
            # Rules 7-8 (restarts, creation bucket, then UID inside the bucket).
            members.sort(
                key=lambda index: (
                    most_restarts - self.facts[index].restarts,
                    created_keys[index],
                    ready_codes[index],
                    *self._tie_break(index),
                )
            )
            for index, slot in zip(members, slots, strict=True):
                ready_codes[index] = slot

    def components(self, index: int) -> tuple[Any, ...]:
        """Per-criterion values of one pod (names in `K8S_CRITERIA`); compared left to right."""
        pod = self.facts[index]
        return (
            1 if pod.node_name else 0,
            PHASE_ORDINAL.get(pod.phase, 0),
            pod.ready,
            pod.cost if self.gates.pod_deletion_cost else 0,
            -self.ranks[index],
            self._ready_keys[index],
            self._ready_codes[index],
            -pod.restarts,
            self._created_keys[index],
            self._created_uids[index],
        )

    def criterion(self, first: int, second: int) -> str:
        """The criterion that orders input pod `first` before `second` in this model."""
        name = first_difference(self.components(first), self.components(second), K8S_CRITERIA)
        a, b = self.facts[first], self.facts[second]
        if name == "ready-time-uid" and a.ready_time == b.ready_time:
            # Same ready time: their UID positions were shared out by rules 7-8.
            if a.restarts != b.restarts:
                return "restarts"
            if self._created_keys[first] != self._created_keys[second]:
                return "creation-time"
            if a.created != b.created:
                return "creation-time-uid"
        return name

    def placements(self, limit: int | None = None) -> list[Placement]:
        """The order with each pod's rank and the criterion separating it from the next pod.

        `limit` explains only the first `limit` pods (the last of them still
        against its successor), which is all a scale-down by `limit` needs.
        """
        order = self.order
        shown = len(order) if limit is None else min(limit, len(order))
        placements: list[Placement] = []
        for position in range(shown):
            index = order[position]
            following = position + 1
            criterion = self.criterion(index, order[following]) if following < len(order) else LAST
            placements.append(Placement(index, float(self.ranks[index]), criterion))
        return placements


def active_pods_order(facts: Sequence[PodFacts]) -> list[int]:
    """Input indices sorted by the older `controller.ActivePods` comparator."""
    return K8sOrder(facts, None, now=None, gates=_GATES_OFF).order
