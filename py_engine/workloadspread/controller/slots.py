"""Distinct, topology-ordered deletion costs inside a subset, stable as pods come and go.

Encoding (one int32 per pod)::

    cost = band * BAND_WIDTH + slot            0 <= slot < BAND_WIDTH
    slot = BAND_WIDTH - 1 - ((level - 1) * DOMAIN_SLOTS + domain)

`band` is the reference cost / 100 (`costs`), so every refined cost lies in
`[band * 10^7, band * 10^7 + 10^7 - 1]` and the between-subset order of the
reference is untouched (band 0 is never used, so no refined cost is 0).
Inside a band, a lower cost is deleted first: pods of a higher `level` go first,
and among one level the higher `domain` index first.

* `domain` is the pod's topology domain (the node's value of the first
  `topologySpreadConstraints[].topologyKey` of the pod template, else the node
  itself), numbered 0..999 per subset. Pods not on a known node share domain "".
* `level` counts from the most valuable pod of the domain (1) upwards. On a
  fresh assignment level = `n - i` for the pod at position i of the domain in
  the CloneSet's SpreadConstraintsRanker sort (Kruise comparator with
  SameNodeRanker ranks, costs ignored), which is exactly that ranker's
  coefficient: deleting by descending level takes the next pod from the
  currently largest domain, as a CloneSet scale-in with topology spread does.

Limits: |band| <= 214, i.e. at most 213 subsets per spread (more: the spread
falls back to the reference values); 1,000 domains per subset and 10,000 pods
per domain. A pod beyond those limits gets the band's lowest value (slot 0), so
it stays in its band but may share its cost.

Stability (the controller is stateless; the API server is the source of
truth): a pod keeps its existing (level, domain) when its cost decodes to a
valid band, its domain index agrees with its domain's (majority of the domain's
decodable pods), and its level is unique in the domain and at most the domain's
size. Pods without such a slot, and pods whose level exceeds the domain's size
(they sat above pods that are gone), take the free levels 1..n of their domain,
lowest first (moved pods before new pods, new pods most valuable first). So the
levels of a domain stay exactly 1..n: k pods created cost k writes; k pods
deleted from the top (what a scale-down removes) cost none, and from anywhere
else at most k moves. Between syncs the order inside a domain is not re-sorted
(that would rewrite the subset); only a fresh assignment matches the CloneSet's
within-domain order exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.scaledown import ScaledownInputError, constraints_from_workload, read_pods, same_node_ranks
from py_engine.scaledown.kruise import KruiseKeys
from py_engine.scaledown.rankers import HOSTNAME_LABEL
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.workloadspread.controller.errors import ReconcileError

Obj = Mapping[str, Any]
BAND_WIDTH = 10_000_000
DOMAIN_SLOTS = 1_000
LEVELS = BAND_WIDTH // DOMAIN_SLOTS
MAX_SUBSETS = 213
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


@dataclass(frozen=True)
class Slot:
    """A pod's place in its subset: `level` >= 1 and `domain` index in [0, DOMAIN_SLOTS)."""

    level: int
    domain: int


def encode(band: int, slot: Slot | None) -> int:
    """The cost of a pod in `band` at `slot` (None: the band's lowest value)."""
    if slot is None or not (1 <= slot.level <= LEVELS and 0 <= slot.domain < DOMAIN_SLOTS):
        return band * BAND_WIDTH
    return band * BAND_WIDTH + BAND_WIDTH - 1 - ((slot.level - 1) * DOMAIN_SLOTS + slot.domain)


def decode(cost: int) -> tuple[int, Slot]:
    """(band, slot) of a refined cost; the inverse of `encode` for in-limit slots."""
    band, offset = divmod(cost, BAND_WIDTH)
    code = BAND_WIDTH - 1 - offset
    return band, Slot(code // DOMAIN_SLOTS + 1, code % DOMAIN_SLOTS)


def parse_cost(value: Any) -> int | None:
    """An annotation value as an int32, None when absent or not an integer."""
    if not isinstance(value, str) or not _INTEGER.match(value.strip()):
        return None
    number = int(value)
    return number if INT32_MIN <= number <= INT32_MAX else None


def existing_cost(pod: Obj) -> int | None:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return parse_cost(annotations.get(DELETION_COST_ANNOTATION))


def _domain_indices(
    domains: Mapping[str, Sequence[str]], decoded: Mapping[str, Slot]
) -> dict[str, int | None]:
    """Domain -> index: kept from the majority of its pods' costs, else the lowest free index."""
    votes: list[tuple[int, str, int]] = []
    for domain, names in domains.items():
        counts = Counter(decoded[n].domain for n in names if n in decoded)
        votes.extend((-count, domain, index) for index, count in counts.items())
    assigned: dict[str, int | None] = {}
    used: set[int] = set()
    for _, domain, index in sorted(votes):
        if domain not in assigned and index not in used:
            assigned[domain] = index
            used.add(index)
    free = (i for i in range(DOMAIN_SLOTS) if i not in used)
    for domain in sorted(domains):
        if domain not in assigned:
            assigned[domain] = next(free, None)
    return assigned


def _levels(names: Sequence[str], domain: int, decoded: Mapping[str, Slot]) -> dict[str, int]:
    """Levels 1..n for the pods of one domain (`names` most valuable first), moving as few as possible."""
    kept: dict[int, str] = {}
    for name in names:
        slot = decoded.get(name)
        if slot is not None and slot.domain == domain and slot.level not in kept:
            kept[slot.level] = name
    size = len(names)
    levels = {name: level for level, name in kept.items() if level <= size}
    movers = [kept[level] for level in sorted(kept) if level > size]
    moving = set(movers)
    movers += [name for name in names if name not in levels and name not in moving]
    free = (level for level in range(1, size + 1) if level not in kept)
    for name in movers:
        levels[name] = next(free)
    return levels


def assign_slots(
    domains: Mapping[str, Sequence[str]],
    existing: Mapping[str, int | None],
    band_ok: Callable[[int], bool],
) -> dict[str, Slot | None]:
    """Slots for every pod of one subset; `domains` maps domain -> pod names, most valuable first."""
    decoded: dict[str, Slot] = {}
    for name, cost in existing.items():
        if cost is not None:
            band, slot = decode(cost)
            if band_ok(band) and slot.level <= LEVELS:
                decoded[name] = slot
    indices = _domain_indices(domains, decoded)
    slots: dict[str, Slot | None] = {}
    for domain, names in domains.items():
        index = indices[domain]
        if index is None:
            slots.update((name, None) for name in names)
            continue
        for name, level in _levels(names, index, decoded).items():
            slots[name] = Slot(level, index) if level <= LEVELS else None
    return slots


def topology_key(workload: Obj | None) -> str:
    """The first topology key of the pod template's spread constraints, else the hostname."""
    if workload is None:
        return HOSTNAME_LABEL
    try:
        constraints = constraints_from_workload(workload)
    except ScaledownInputError as exc:
        raise ReconcileError(str(exc)) from None
    return constraints[0].topology_key if constraints else HOSTNAME_LABEL


def pod_domain(pod: Obj, key: str, nodes: Mapping[str, Obj]) -> str:
    """The pod's topology value; "" when unscheduled or the node lacks the label."""
    node_name = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node_name:
        return ""
    node = nodes.get(node_name)
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(key)
    if isinstance(value, str):
        return value
    return node_name if key == HOSTNAME_LABEL else ""


def domain_orders(pods: Sequence[Obj], key: str, nodes: Mapping[str, Obj]) -> dict[str, list[str]]:
    """Per domain, pod names most valuable first: the reverse of the CloneSet's sort of the
    domain (Kruise comparator, SameNodeRanker ranks unless the key is the hostname, costs ignored)."""
    try:
        facts = [fact._replace(cost=0) for fact in read_pods(pods)]
    except ScaledownInputError as exc:
        raise ReconcileError(str(exc)) from None
    parts = KruiseKeys(facts)
    sort_keys = parts.keys() if key == HOSTNAME_LABEL else parts.keys(same_node_ranks(facts, parts))
    # Members are gathered node by node (nodes in order of first appearance), as the
    # SpreadConstraintsRanker gathers them: that order breaks ties in its stable sort.
    by_node: dict[str, list[int]] = {}
    for index, pod in enumerate(pods):
        by_node.setdefault(str((pod.get("spec") or {}).get("nodeName") or ""), []).append(index)
    members: dict[str, list[int]] = {}
    for indices in by_node.values():
        members.setdefault(pod_domain(pods[indices[0]], key, nodes), []).extend(indices)
    return {
        domain: [facts[i].name for i in reversed(sorted(indices, key=sort_keys.__getitem__))]
        for domain, indices in members.items()
    }
