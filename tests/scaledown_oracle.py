"""The upstream scale-down rules, restated for the tests from docs/design-scaledown.md.

An oracle that does not share code with `py_engine.scaledown`: each rule of Kubernetes'
`ActivePodsWithRanks` (ReplicaSet) and Kruise's CloneSet comparator is written here on its own,
from the design document's tables, so a test can check the product's orders rule by rule
instead of replaying the product's own comparator. Everything is plain data: `Pod` holds what
the rules read, times as Unix nanoseconds (None = Go's zero time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}  # any other phase reads as 0 (rule 2)
COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


@dataclass(frozen=True)
class Pod:
    name: str
    uid: str = ""
    node: str = ""
    phase: str = "Running"
    ready: bool = True
    ready_time: int | None = None
    restarts: int = 0
    created: int | None = None
    cost: int = 0
    terminating: bool = False

    @property
    def active(self) -> bool:
        return self.phase not in ("Succeeded", "Failed") and not self.terminating


def nanos(text: str | None) -> int | None:
    """An RFC 3339 API timestamp (whole seconds) as Unix nanoseconds."""
    if not text:
        return None
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1_000_000_000


def deletion_cost(value: Any) -> int:
    """Kubernetes' parser as the design document states it: a base-10 int32, '-' allowed, no
    '+', no leading zero except "0" itself; anything else is 0."""
    if not isinstance(value, str) or not value:
        return 0
    digits = value[1:] if value.startswith("-") else value
    if not digits or not all("0" <= c <= "9" for c in digits):
        return 0
    if value != "0" and value[0] == "0":
        return 0
    number = int(value)
    return number if -(2**31) <= number < 2**31 else 0


def from_object(pod: Mapping[str, Any]) -> Pod:
    """Read a pod object the way the upstream helpers do (first Ready condition, container
    restarts only, deletion-cost annotation)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    ready, ready_time = False, None
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            ready = condition.get("status") == "True"
            ready_time = nanos(condition.get("lastTransitionTime")) if ready else None
            break
    restarts = max([0, *(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])])
    return Pod(
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        node=spec.get("nodeName") or "",
        phase=status.get("phase") or "",
        ready=ready,
        ready_time=ready_time,
        restarts=restarts,
        created=nanos(meta.get("creationTimestamp")),
        cost=deletion_cost((meta.get("annotations") or {}).get(COST_ANNOTATION)),
        terminating=bool(meta.get("deletionTimestamp")),
    )


def replicaset_ranks(pods: Sequence[Pod], related: Sequence[Pod]) -> list[int]:
    """§1.2: the number of active related pods on the pod's node, the pod itself included."""
    return [sum(1 for other in related if other.active and other.node == pod.node) for pod in pods]


def bucket(now: int, moment: int) -> int:
    """§1.4: floor(log2(age in ns)), -1 for an age <= 0."""
    age = now - moment
    return -1 if age <= 0 else int(math.log2(float(age)))


def after_or_zero(t_a: int | None, t_b: int | None) -> int:
    """§1.4 `afterOrZero` for two different instants: zero first, then the later one."""
    if t_a is None or t_b is None:
        return -1 if t_a is None else 1
    return -1 if t_a > t_b else 1


# A rule: (a, b, context) -> -1 a first, 1 b first, 0 a final tie, None the rule does not decide.
Rule = Callable[[Pod, Pod, "Context"], "int | None"]


@dataclass(frozen=True)
class Context:
    """What a comparison reads besides the two pods."""

    rank_a: float = 0
    rank_b: float = 0
    now: int | None = None
    deletion_cost: bool = True
    logarithmic: bool = True
    available_a: bool | None = None
    available_b: bool | None = None


def rule_scheduled(a: Pod, b: Pod, ctx: Context) -> int | None:
    if a.node != b.node and (not a.node or not b.node):
        return -1 if not a.node else 1
    return None


def rule_phase(a: Pod, b: Pod, ctx: Context) -> int | None:
    pa, pb = PHASE_ORDER.get(a.phase, 0), PHASE_ORDER.get(b.phase, 0)
    return None if pa == pb else (-1 if pa < pb else 1)


def rule_available(a: Pod, b: Pod, ctx: Context) -> int | None:
    if ctx.available_a is None or ctx.available_b is None or ctx.available_a == ctx.available_b:
        return None
    return -1 if not ctx.available_a else 1


def rule_ready(a: Pod, b: Pod, ctx: Context) -> int | None:
    return None if a.ready == b.ready else (-1 if not a.ready else 1)


def rule_cost(a: Pod, b: Pod, ctx: Context) -> int | None:
    if not ctx.deletion_cost or a.cost == b.cost:
        return None
    return -1 if a.cost < b.cost else 1


def rule_rank(a: Pod, b: Pod, ctx: Context) -> int | None:
    return None if ctx.rank_a == ctx.rank_b else (-1 if ctx.rank_a > ctx.rank_b else 1)


def _time(t_a: int | None, t_b: int | None, a: Pod, b: Pod, ctx: Context) -> int | None:
    if t_a == t_b:
        return None
    if not ctx.logarithmic or ctx.now is None or t_a is None or t_b is None:
        return after_or_zero(t_a, t_b)
    bucket_a, bucket_b = bucket(ctx.now, t_a), bucket(ctx.now, t_b)
    if bucket_a != bucket_b:
        return -1 if bucket_a < bucket_b else 1
    ua, ub = a.uid.encode(), b.uid.encode()
    return 0 if ua == ub else (-1 if ua < ub else 1)  # the UID ends the comparison


def rule_ready_time(a: Pod, b: Pod, ctx: Context) -> int | None:
    return _time(a.ready_time, b.ready_time, a, b, ctx) if a.ready and b.ready else None


def rule_restarts(a: Pod, b: Pod, ctx: Context) -> int | None:
    return None if a.restarts == b.restarts else (-1 if a.restarts > b.restarts else 1)


def rule_created(a: Pod, b: Pod, ctx: Context) -> int | None:
    return _time(a.created, b.created, a, b, ctx)


REPLICASET_RULES: tuple[tuple[str, Rule], ...] = (
    ("scheduled", rule_scheduled),
    ("phase", rule_phase),
    ("ready", rule_ready),
    ("deletion-cost", rule_cost),
    ("rank", rule_rank),
    ("ready-time", rule_ready_time),
    ("restarts", rule_restarts),
    ("creation-time", rule_created),
)
"""§1.3, in order; `logarithmic` selects §1.4's buckets."""

CLONESET_RULES: tuple[tuple[str, Rule], ...] = (
    *REPLICASET_RULES[:2],  # scheduled, phase
    ("available", rule_available),
    *REPLICASET_RULES[2:],  # ready, deletion-cost, rank, ready-time, restarts, creation-time
)
"""§2.1, in order: §1.3's rules with `available` after `phase`; used with `deletion_cost=True,
logarithmic=False` (no gates, exact times)."""


def _uid_decided(name: str, a: Pod, b: Pod, ctx: Context) -> bool:
    """Whether a time rule that decided did so inside one log2 bucket, i.e. by UID (§1.4)."""
    if name not in ("ready-time", "creation-time") or not ctx.logarithmic or ctx.now is None:
        return False
    t_a, t_b = (a.ready_time, b.ready_time) if name == "ready-time" else (a.created, b.created)
    return t_a is not None and t_b is not None and bucket(ctx.now, t_a) == bucket(ctx.now, t_b)


def compare(
    a: Pod, b: Pod, ctx: Context, rules: Sequence[tuple[str, Rule]] = REPLICASET_RULES
) -> tuple[int, str]:
    """The first rule that decides: (-1 a first | 1 b first | 0 tie, the rule's name; "<rule>-uid"
    when a time rule fell to the UID tie-break, "equal" for a tie)."""
    for name, rule in rules:
        verdict = rule(a, b, ctx)
        if verdict is not None:
            if verdict == 0:
                return 0, "equal"
            return verdict, (f"{name}-uid" if _uid_decided(name, a, b, ctx) else name)
    return 0, "equal"


def kruise_context(
    rank_a: float = 0.0, rank_b: float = 0.0, available_a: bool | None = None, available_b: bool | None = None
) -> Context:
    return Context(
        rank_a=rank_a,
        rank_b=rank_b,
        now=None,
        deletion_cost=True,
        logarithmic=False,
        available_a=available_a,
        available_b=available_b,
    )


def victims_are_first(
    pods: Sequence[Pod],
    ranks: Sequence[float],
    victims: set[int],
    now: int | None,
    *,
    deletion_cost: bool = True,
    logarithmic: bool = True,
) -> list[tuple[str, str, str]]:
    """Every (survivor, victim, rule) where the upstream rules put a survivor strictly before a victim:
    empty when the victims are a valid first `len(victims)` of some upstream order."""
    wrong = []
    for s in range(len(pods)):
        if s in victims:
            continue
        for v in victims:
            ctx = Context(
                rank_a=ranks[s],
                rank_b=ranks[v],
                now=now,
                deletion_cost=deletion_cost,
                logarithmic=logarithmic,
            )
            verdict, rule = compare(pods[s], pods[v], ctx)
            if verdict < 0:
                wrong.append((pods[s].name, pods[v].name, rule))
    return wrong
