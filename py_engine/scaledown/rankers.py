"""OpenKruise CloneSet rankers: `SameNodeRanker` and `SpreadConstraintsRanker`.

A ranker gives every pod a float; Kruise's comparator deletes higher ranks first
(rule 5, after deletion cost). Both rankers key their results by pod UID, so
copies of one pod share a rank (see `_identities` for pods without a UID).

SameNodeRanker: on every node holding two or more of the pods, the pods are
sorted by the Kruise comparator (no ranker, no availability), the last one (the
most valuable) is kept at rank 0 and the others get `m, m-1, ..., 1`. Sorting by
rank descending therefore always takes the next pod from the currently most
crowded node.

SpreadConstraintsRanker: for each constraint (only its `topologyKey` matters; the
CloneSet takes them from the pod template's `topologySpreadConstraints`), pods
are grouped by their node's label value. With `T` distinct values among the
pods' nodes, each group is sorted by the Kruise comparator using the
SameNodeRanker's ranks (no ranker at all for `kubernetes.io/hostname`, where every
node is its own topology) and the pod at index `i` of a group of `n` gets
`(n - i) * ln(T + 2)` added. Pods on unscheduled, unknown or unlabelled nodes get
nothing for that constraint, so among otherwise equal pods they are deleted last.

Exact ranks: a pod's rank is kept as integer coefficients per weight (`terms`,
log argument -> coefficient) and its float value is computed from them in one
canonical way, so pods whose rank is the same sum of the same weights compare
exactly equal. (Go accumulates the float in constraint order, and two
constraints with the same number of values can make mathematically equal ranks
differ in the last bit there; weights that are powers of a common base, such as
ln 4 and ln 8, are not merged here either.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_engine.scaledown.errors import ScaledownInputError
from py_engine.scaledown.kruise import KruiseKeys
from py_engine.scaledown.pods import PodFacts

HOSTNAME_LABEL = "kubernetes.io/hostname"

NodeLabels = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """What the ranker uses of a topology spread constraint.

    `limited_values` mirrors a field of Kruise's ranker that the CloneSet never
    fills (None or empty = every value counts); its unit tests exercise it.
    """

    topology_key: str
    limited_values: frozenset[str] | None = None


def constraints_from_workload(workload: Mapping[str, Any]) -> tuple[SpreadConstraint, ...]:
    """The constraints a CloneSet derives from `spec.template.spec.topologySpreadConstraints`.

    Only `topologyKey` is read (maxSkew, whenUnsatisfiable and labelSelector play no
    part in scale-down). Keys repeat when the template repeats them.
    """
    spec = workload.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    raw = pod_spec.get("topologySpreadConstraints") if isinstance(pod_spec, Mapping) else None
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ScaledownInputError("spec.template.spec.topologySpreadConstraints must be a list")
    constraints: list[SpreadConstraint] = []
    for index, item in enumerate(raw):
        key = item.get("topologyKey") if isinstance(item, Mapping) else None
        if not isinstance(key, str) or not key:
            raise ScaledownInputError(
                f"spec.template.spec.topologySpreadConstraints[{index}].topologyKey "
                "must be a non-empty string"
            )
        constraints.append(SpreadConstraint(key))
    return tuple(constraints)


def constraints_from_keys(keys: Iterable[str]) -> tuple[SpreadConstraint, ...]:
    """Constraints for plain topology keys (the `--topology-key` option)."""
    return tuple(SpreadConstraint(key) for key in keys)


def _identities(facts: Sequence[PodFacts]) -> tuple[list[str | int], bool]:
    """The keys under which the rankers store ranks, and whether two pods share one.

    Upstream keys ranks by UID, so copies of one pod share a rank. A pod without
    a UID (only hand-written JSON; the API server always sets one) is keyed by
    its position instead: upstream would merge every UID-less pod into one map
    entry, which would make hand-written examples meaningless.
    """
    identities: list[str | int] = [pod.uid or index for index, pod in enumerate(facts)]
    return identities, len(set(identities)) != len(identities)


def _shared(identities: Sequence[str | int], values: Sequence[float], accumulate: bool) -> list[float]:
    """Values of pods that share an identity, merged as upstream's UID-keyed map merges them.

    SpreadConstraintsRanker adds. SameNodeRanker assigns, and only for the pods it
    ranks (rank >= 1; a kept pod is simply not written): the last write wins,
    taken here in input order (Go's order across nodes is its random map order).
    """
    merged: dict[str | int, float] = {}
    for identity, value in zip(identities, values, strict=True):
        if accumulate:
            merged[identity] = merged.get(identity, 0.0) + value
        elif value or identity not in merged:
            merged[identity] = value
    return [merged[identity] for identity in identities]


def same_node_ranks(facts: Sequence[PodFacts], keys: KruiseKeys | None = None) -> list[float]:
    """`NewSameNodeRanker(pods).GetRank` for every pod, aligned with `facts`.

    `keys` are the pods' precomputed `KruiseKeys` when the caller has them.
    """
    plain = (keys if keys is not None else KruiseKeys(facts)).keys()
    return _same_node_ranks(facts, plain, _identities(facts))


def _same_node_ranks(
    facts: Sequence[PodFacts], plain_keys: Sequence[int], identities: tuple[list[str | int], bool]
) -> list[float]:
    by_node: dict[str, list[int]] = {}
    for index, pod in enumerate(facts):
        if pod.node_name:
            members = by_node.get(pod.node_name)
            if members is None:
                by_node[pod.node_name] = [index]
            else:
                members.append(index)
    ranks = [0.0] * len(facts)
    for members in by_node.values():
        if len(members) < 2:
            continue
        members.sort(key=plain_keys.__getitem__)
        top = len(members) - 1
        for position in range(top):
            ranks[members[position]] = float(top - position)
    keyed, duplicated = identities
    return _shared(keyed, ranks, accumulate=False) if duplicated else ranks


@dataclass(frozen=True)
class SpreadRanking:
    """Result of a SpreadConstraintsRanker over a set of pods (lists aligned with the input)."""

    ranks: list[float]
    # Log argument (distinct topology values + 2) -> coefficient of ln(argument), per pod.
    coefficients: dict[int, list[int]]
    # Per constraint: topology value -> input indices in the order the ranker sorted them.
    topology_orders: list[dict[str, list[int]]] = field(default_factory=list)

    @property
    def terms(self) -> list[dict[int, int]]:
        """Per pod: log argument -> coefficient (the exact form of its rank)."""
        count = len(self.ranks)
        return [
            {argument: column[index] for argument, column in self.coefficients.items() if column[index]}
            for index in range(count)
        ]


def spread_constraints_ranking(
    facts: Sequence[PodFacts],
    constraints: Sequence[SpreadConstraint],
    node_labels: NodeLabels,
    keys: KruiseKeys | None = None,
) -> SpreadRanking:
    """`NewSpreadConstraintsRanker(pods, constraints, nodes)` with its intermediate orders.

    `node_labels` maps node name -> labels for the nodes the controller can read;
    a pod whose node is missing from it is skipped, as upstream skips nodes it
    cannot fetch. `keys` are the pods' precomputed `KruiseKeys`, if any.
    """
    count = len(facts)
    nodes: list[str] = []
    pods_on_node: dict[str, list[int]] = {}
    for index, pod in enumerate(facts):
        name = pod.node_name
        if not name:
            continue
        members = pods_on_node.get(name)
        if members is None:
            if name not in node_labels:
                continue
            nodes.append(name)
            members = pods_on_node[name] = []
        members.append(index)

    parts = keys if keys is not None else KruiseKeys(facts)
    identities, duplicated = _identities(facts)
    plain_keys = parts.keys()
    same_node = _same_node_ranks(facts, plain_keys, (identities, duplicated))
    ranked_keys = parts.keys(same_node)

    coefficients: dict[int, list[int]] = {}
    topology_orders: list[dict[str, list[int]]] = []
    for constraint in constraints:
        allowed = constraint.limited_values or None
        topologies: dict[str, list[int]] = {}
        for name in nodes:
            value = node_labels[name].get(constraint.topology_key)
            if value is None or (allowed is not None and value not in allowed):
                continue
            members = topologies.get(value)
            if members is None:
                topologies[value] = list(pods_on_node[name])
            else:
                members.extend(pods_on_node[name])
        argument = len(topologies) + 2
        column = coefficients.get(argument)
        if column is None:
            column = coefficients[argument] = [0] * count
        sort_keys = plain_keys if constraint.topology_key == HOSTNAME_LABEL else ranked_keys
        for members in topologies.values():
            members.sort(key=sort_keys.__getitem__)
            size = len(members)
            for position, index in enumerate(members):
                column[index] += size - position
        topology_orders.append(topologies)

    if duplicated:
        for argument, column in coefficients.items():
            coefficients[argument] = [int(value) for value in _shared(identities, column, accumulate=True)]
    # One canonical evaluation order (ascending log argument), so equal coefficients
    # always give bit-identical floats.
    ranks = [0.0] * count
    for argument in sorted(coefficients):
        weight = math.log(argument)
        ranks = [
            rank + coefficient * weight
            for rank, coefficient in zip(ranks, coefficients[argument], strict=True)
        ]
    return SpreadRanking(ranks, coefficients, topology_orders)
