"""Property tests: the orders Spreadgate computes obey the upstream rules.

The specification is not the product: `tests/scaledown_oracle.py` restates each upstream rule
on its own from docs/design-scaledown.md (Kubernetes' `ActivePodsWithRanks`, Kruise's CloneSet
comparator). The orders come from precomputed integer keys and one `sorted()`. These properties
check, over generated pods:

* Each rule on its own: two pods that differ only in what one rule reads are ordered as that
  rule says (or tie when the rule is gated off).
* The order is total: every pod exactly once; the keys order every pair one way, or tie.
* Kruise: `key(a) < key(b)` exactly when the restated `Less(a, b)`: a total preorder identical
  to the rules.
* Kubernetes: with unique UIDs, whenever the restated pairwise decisions admit an order at all
  (no cycle, see `kubernetes.py`), the computed order respects every one of them; equal keys
  only for pods the rules call equal, UIDs unique or not. Victims of a scale-down are a valid
  prefix: no survivor goes before a victim.
* Results do not depend on input order: every pod gets the same key whatever the order of the
  input, and only pods with equal keys swap places (they keep input order, as documented).
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter
from datetime import datetime

import pytest
import scaledown_oracle as upstream
from hypothesis import given, settings
from hypothesis import strategies as st
from scaledown_times import NOW, NOW_NS

from py_engine.scaledown import (
    DEFAULT_GATES as DEFAULT,
)
from py_engine.scaledown import (
    CloneSetSpec,
    FeatureGates,
    K8sOrder,
    KruiseOrder,
    PodFacts,
    SpreadConstraint,
    cloneset_deletion_order,
    cloneset_victims,
    get_pods_to_delete,
    parse_deletion_cost,
    related_pod_ranks,
    same_node_ranks,
    scale_down_passes,
    spread_constraints_ranking,
)
from py_engine.scaledown.kubernetes import uid_codes
from py_engine.scaledown.timekeys import go_log2_bucket, log2_bucket

SECOND = 1_000_000_000


def oracle_pod(pod: PodFacts) -> upstream.Pod:
    """The same pod as the oracle's plain data (a field-by-field copy, no rule applied)."""
    return upstream.Pod(
        name=pod.name,
        uid=pod.uid,
        node=pod.node_name,
        phase=pod.phase,
        ready=pod.ready,
        ready_time=pod.ready_time,
        restarts=pod.restarts,
        created=pod.created,
        cost=pod.cost,
        terminating=pod.terminating,
    )


def decide(
    a: PodFacts,
    b: PodFacts,
    rank_a: int = 0,
    rank_b: int = 0,
    *,
    now: datetime | None = None,
    gates: FeatureGates = DEFAULT,
) -> tuple[int, str]:
    """The Kubernetes rules restated (tests/scaledown_oracle.py) for one pair."""
    ctx = upstream.Context(
        rank_a=rank_a,
        rank_b=rank_b,
        now=None if now is None else NOW_NS,
        deletion_cost=gates.pod_deletion_cost,
        logarithmic=gates.logarithmic_scale_down,
    )
    assert now is None or now == NOW
    return upstream.compare(oracle_pod(a), oracle_pod(b), ctx)


def kruise_decide(
    a: PodFacts, b: PodFacts, rank_a: float, rank_b: float, available_a: bool | None, available_b: bool | None
) -> tuple[int, str]:
    """The Kruise rules restated (tests/scaledown_oracle.py) for one pair."""
    return upstream.compare(
        oracle_pod(a),
        oracle_pod(b),
        upstream.kruise_context(rank_a, rank_b, available_a, available_b),
        upstream.CLONESET_RULES,
    )


HOUR = 3600 * SECOND
# Ages chosen to share and to straddle log2 buckets, plus the zero time and the future.
AGES = [
    None,
    0,
    -10 * SECOND,
    1,
    SECOND,
    2 * SECOND,
    4398 * SECOND,
    4399 * SECOND,
    5 * HOUR,
    6 * HOUR,
    8 * HOUR,
]

times = st.sampled_from(AGES).map(lambda age: None if age is None else NOW_NS - age)
gates = st.builds(FeatureGates, pod_deletion_cost=st.booleans(), logarithmic_scale_down=st.booleans())

facts_strategy = st.builds(
    PodFacts,
    name=st.just(""),
    namespace=st.just("default"),
    uid=st.sampled_from(["", "a", "b", "c", "d", "e"]),
    node_name=st.sampled_from(["", "n1", "n2", "n3"]),
    phase=st.sampled_from(["Running", "Running", "Pending", "Unknown", ""]),
    terminating=st.just(False),
    ready=st.booleans(),
    ready_time=times,
    restarts=st.integers(0, 2),
    created=times,
    cost=st.sampled_from([0, 0, -1, 1]),
    lifecycle_state=st.sampled_from(["", "", "Normal", "PreparingUpdate"]),
    specified_delete=st.just(False),
    revision=st.just(None),
    in_place_update_ready=st.sampled_from([None, None, "True", "False"]),
)


# Pods that mostly tie on rules 1-5 and share log2 buckets, so the bucket/UID rule
# (and its cycles) is exercised often: ready 5 h, 6 h or 8 h ago is bucket 44,
# 4399 s and 8796 s are both bucket 42.
TIED_AGES = [5 * HOUR, 6 * HOUR, 8 * HOUR, 4399 * SECOND, 8796 * SECOND, None]
tied_facts = st.builds(
    PodFacts,
    name=st.just(""),
    namespace=st.just("default"),
    uid=st.just(""),
    node_name=st.sampled_from(["n1", "n1", "n2", ""]),
    phase=st.sampled_from(["Running", "Running", "Running", "Pending"]),
    terminating=st.just(False),
    ready=st.sampled_from([True, True, True, False]),
    ready_time=st.sampled_from(TIED_AGES).map(lambda age: None if age is None else NOW_NS - age),
    restarts=st.integers(0, 2),
    created=st.sampled_from(TIED_AGES).map(lambda age: None if age is None else NOW_NS - age),
    cost=st.sampled_from([0, 0, 0, 1]),
    lifecycle_state=st.just(""),
    specified_delete=st.just(False),
    revision=st.just(None),
    in_place_update_ready=st.just(None),
)


def named(pods: list[PodFacts]) -> list[PodFacts]:
    return [pod._replace(name=f"p{index}") for index, pod in enumerate(pods)]


pod_lists = st.lists(facts_strategy, min_size=1, max_size=12).map(named)
mixed_pod_lists = st.one_of(pod_lists, st.lists(tied_facts, min_size=2, max_size=10).map(named))
rank_lists = st.sampled_from(["same", "small"])


def draw_ranks(data: st.DataObject, size: int) -> list[int]:
    """Mostly equal ranks (as on one node), sometimes independent small ones."""
    if data.draw(rank_lists) == "same":
        return [data.draw(st.integers(0, 3))] * size
    return data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))


def _unique_uids(pods: list[PodFacts], data: st.DataObject) -> list[PodFacts]:
    """Give the pods distinct UIDs in a random order (UIDs are random in a cluster)."""
    labels = data.draw(st.permutations([f"{chr(97 + k)}" for k in range(len(pods))]))
    return [pod._replace(uid=label) for pod, label in zip(pods, labels, strict=True)]


def _has_cycle(edges: dict[int, set[int]]) -> bool:
    state: dict[int, int] = {}

    def visit(node: int) -> bool:
        state[node] = 1
        for following in edges.get(node, ()):
            if state.get(following) == 1 or (following not in state and visit(following)):
                return True
        state[node] = 2
        return False

    return any(node not in state and visit(node) for node in list(edges))


def _upstream_edges(
    pods: list[PodFacts], ranks: list[int], now: datetime | None, gate_values: FeatureGates
) -> dict[int, set[int]]:
    edges: dict[int, set[int]] = {index: set() for index in range(len(pods))}
    for i in range(len(pods)):
        for j in range(len(pods)):
            if i != j and decide(pods[i], pods[j], ranks[i], ranks[j], now=now, gates=gate_values)[0] < 0:
                edges[i].add(j)
    return edges


@settings(deadline=None, max_examples=400)
@given(pods=mixed_pod_lists, data=st.data(), gate_values=gates, with_now=st.sampled_from([True, True, False]))
def test_k8s_order_respects_every_upstream_decision(
    pods: list[PodFacts], data: st.DataObject, gate_values: FeatureGates, with_now: bool
) -> None:
    pods = _unique_uids(pods, data)
    ranks = draw_ranks(data, len(pods))
    now = NOW if with_now else None
    order = K8sOrder(pods, ranks, now=now, gates=gate_values)
    assert sorted(order.order) == list(range(len(pods)))
    edges = _upstream_edges(pods, ranks, now, gate_values)
    if _has_cycle(edges):
        # Upstream's decisions admit no order; the model's choice is documented.
        assert gate_values.logarithmic_scale_down and now is not None
        return
    position = {index: place for place, index in enumerate(order.order)}
    for i, later in edges.items():
        for j in later:
            assert position[i] < position[j], (pods[i], pods[j])
    for first, second in zip(order.order, order.order[1:], strict=False):
        verdict, criterion = decide(
            pods[first], pods[second], ranks[first], ranks[second], now=now, gates=gate_values
        )
        if verdict < 0:
            assert order.criterion(first, second) == criterion


# One rule-6 group: same node, Running, no cost, one rank; ready and creation
# times mostly in bucket 44 (5 h, 6 h, 8 h ago), so UIDs, restarts and creation
# decide (the not-ready pods reach rule 8's buckets).
bucket_group = st.lists(
    st.builds(
        PodFacts,
        name=st.just(""),
        namespace=st.just("default"),
        uid=st.just(""),
        node_name=st.just("n1"),
        phase=st.just("Running"),
        terminating=st.just(False),
        ready=st.sampled_from([True, True, False]),
        ready_time=st.sampled_from([5 * HOUR, 6 * HOUR, 8 * HOUR]).map(lambda age: NOW_NS - age),
        restarts=st.integers(0, 2),
        created=st.sampled_from([5 * HOUR, 6 * HOUR, 8 * HOUR, 20 * HOUR, None]).map(
            lambda age: None if age is None else NOW_NS - age
        ),
        cost=st.just(0),
        lifecycle_state=st.just(""),
        specified_delete=st.just(False),
        revision=st.just(None),
        in_place_update_ready=st.just(None),
    ),
    min_size=2,
    max_size=7,
).map(named)


@settings(deadline=None, max_examples=300)
@given(pods=bucket_group, data=st.data())
def test_k8s_bucket_group_order_respects_upstream_when_it_can(
    pods: list[PodFacts], data: st.DataObject
) -> None:
    """Inside one bucket group: every upstream decision is kept unless they form a cycle."""
    pods = _unique_uids(pods, data)
    ranks = [1] * len(pods)
    order = K8sOrder(pods, ranks, now=NOW)
    edges = _upstream_edges(pods, ranks, NOW, DEFAULT)
    if _has_cycle(edges):
        return
    position = {index: place for place, index in enumerate(order.order)}
    for i, later in edges.items():
        for j in later:
            assert position[i] < position[j], (pods[i], pods[j])


@settings(deadline=None, max_examples=300)
@given(pods=mixed_pod_lists, data=st.data(), gate_values=gates, with_now=st.booleans())
def test_k8s_equal_keys_only_for_upstream_equal_pods(
    pods: list[PodFacts], data: st.DataObject, gate_values: FeatureGates, with_now: bool
) -> None:
    if data.draw(st.booleans()):
        pods = [pod._replace(uid=data.draw(st.sampled_from(["", "a", "b"]))) for pod in pods]
    ranks = draw_ranks(data, len(pods))
    now = NOW if with_now else None
    order = K8sOrder(pods, ranks, now=now, gates=gate_values)
    for i in range(len(pods)):
        for j in range(i + 1, len(pods)):
            if order.keys[i] == order.keys[j]:
                assert decide(pods[i], pods[j], ranks[i], ranks[j], now=now, gates=gate_values)[0] == 0
    if not (gate_values.logarithmic_scale_down and now is not None):
        # Without buckets upstream is a strict weak order: the keys are exactly the comparator.
        for i in range(len(pods)):
            for j in range(len(pods)):
                verdict, _ = decide(pods[i], pods[j], ranks[i], ranks[j], now=now, gates=gate_values)
                assert (order.keys[i] < order.keys[j]) == (verdict < 0)


def test_cycles_do_occur_and_get_the_documented_order() -> None:
    """Three pods of one bucket; x and y share a ready time, z does not.

    Upstream: x < y (restarts), y < z (UID "a" < "b"), z < x (UID "b" < "c"): a
    cycle. The model lays the group out in UID positions (y, z, x) and lets the
    two pods sharing a ready time fill theirs (first and third) in restart order.
    """
    ready = NOW_NS - 5 * HOUR

    def pod(name: str, uid: str, ready_time: int, restarts: int) -> PodFacts:
        return PodFacts(
            name,
            "",
            uid,
            "n",
            "Running",
            False,
            True,
            ready_time,
            restarts,
            NOW_NS - 99 * HOUR,
            0,
            "",
            False,
            None,
            None,
        )

    x = pod("x", "c", ready, 5)
    y = pod("y", "a", ready, 0)
    z = pod("z", "b", ready - HOUR, 0)
    assert decide(x, y, now=NOW)[0] < 0 and decide(y, z, now=NOW)[0] < 0 and decide(z, x, now=NOW)[0] < 0
    for arrangement in ([x, y, z], [z, y, x], [y, x, z]):
        order = K8sOrder(arrangement, [1, 1, 1], now=NOW).order
        assert [arrangement[i].name for i in order] == ["x", "z", "y"]


@settings(deadline=None, max_examples=200)
@given(pods=mixed_pod_lists, data=st.data(), gate_values=gates)
def test_k8s_order_does_not_depend_on_input_order(
    pods: list[PodFacts], data: st.DataObject, gate_values: FeatureGates
) -> None:
    if data.draw(st.booleans()):
        pods = _unique_uids(pods, data)
    ranks = draw_ranks(data, len(pods))
    permutation = data.draw(st.permutations(range(len(pods))))
    first = K8sOrder(pods, ranks, now=NOW, gates=gate_values)
    shuffled = [pods[i] for i in permutation]
    second = K8sOrder(shuffled, [ranks[i] for i in permutation], now=NOW, gates=gate_values)
    key_of = {pod.name: key for pod, key in zip(pods, first.keys, strict=True)}
    assert {pod.name: key for pod, key in zip(shuffled, second.keys, strict=True)} == key_of
    names_first = [pods[i].name for i in first.order]
    names_second = [shuffled[i].name for i in second.order]
    assert [key_of[name] for name in names_first] == [key_of[name] for name in names_second]
    unique = {name for name, count in Counter(key_of.values()).items() if count == 1}
    unique_names = {name for name, key in key_of.items() if key in unique}
    assert [n for n in names_first if n in unique_names] == [n for n in names_second if n in unique_names]
    # Equal keys keep input order (stable sort).
    for left, right in zip(second.order, second.order[1:], strict=False):
        if second.keys[left] == second.keys[right]:
            assert left < right


@settings(deadline=None, max_examples=300)
@given(pods=pod_lists, data=st.data())
def test_kruise_keys_are_exactly_the_comparator(pods: list[PodFacts], data: st.DataObject) -> None:
    size = len(pods)
    ranks = data.draw(
        st.one_of(
            st.none(),
            st.lists(
                st.sampled_from([0.0, 1.0, 2.5, math.log(5), 2 * math.log(5)]), min_size=size, max_size=size
            ),
            st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=size, max_size=size),
        )
    )
    available = data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=size, max_size=size)))
    order = KruiseOrder(pods, ranks, available)
    for i in range(size):
        for j in range(size):
            verdict, criterion = kruise_decide(
                pods[i],
                pods[j],
                ranks[i] if ranks else 0.0,
                ranks[j] if ranks else 0.0,
                available[i] if available else None,
                available[j] if available else None,
            )
            assert (order.keys[i] < order.keys[j]) == (verdict < 0)
            assert (order.keys[i] == order.keys[j]) == (verdict == 0)
            if i != j:
                assert order.criterion(i, j) == criterion
    position = {index: place for place, index in enumerate(order.order)}
    permutation = data.draw(st.permutations(range(size)))
    again = KruiseOrder(
        [pods[i] for i in permutation],
        [ranks[i] for i in permutation] if ranks else None,
        [available[i] for i in permutation] if available else None,
    )
    assert [order.keys[permutation[i]] for i in again.order] == [order.keys[i] for i in order.order]
    assert len(position) == size


@settings(deadline=None, max_examples=100)
@given(pods=mixed_pod_lists, data=st.data(), gate_values=gates)
def test_placements_explain_each_adjacent_pair(
    pods: list[PodFacts], data: st.DataObject, gate_values: FeatureGates
) -> None:
    ranks = draw_ranks(data, len(pods))
    order = K8sOrder(pods, ranks, now=NOW, gates=gate_values)
    placements = order.placements()
    assert [p.item for p in placements] == order.order
    assert [p.rank for p in placements] == [float(ranks[i]) for i in order.order]
    assert placements[-1].criterion == "last"
    for placement, following in itertools.pairwise(placements):
        equal = order.keys[placement.item] == order.keys[following.item]
        assert (placement.criterion == "equal") == equal
    limit = data.draw(st.integers(0, len(pods)))
    assert order.placements(limit) == placements[:limit]


def _no_cycle(pods: list[PodFacts], ranks: list[int]) -> bool:
    return not _has_cycle(_upstream_edges(pods, ranks, NOW, DEFAULT))


@settings(deadline=None, max_examples=100)
@given(pods=pod_lists, data=st.data())
def test_pods_to_delete_are_a_valid_first_diff_of_the_upstream_order(
    pods: list[PodFacts], data: st.DataObject
) -> None:
    pods = _unique_uids(pods, data)
    diff = data.draw(st.integers(0, len(pods)))
    chosen = get_pods_to_delete(pods, pods, diff, now=NOW)
    assert len(chosen) == len(set(chosen)) == diff
    if diff == len(pods):
        assert chosen == list(range(len(pods)))  # upstream does not sort then: lister order
        return
    facts = [oracle_pod(pod) for pod in pods]
    ranks = upstream.replicaset_ranks(facts, facts)
    if _no_cycle(pods, ranks):
        assert upstream.victims_are_first(facts, ranks, set(chosen), NOW_NS) == []


@settings(deadline=None, max_examples=100)
@given(pods=pod_lists, data=st.data())
def test_scale_down_passes_rerank_between_syncs(pods: list[PodFacts], data: st.DataObject) -> None:
    pods = [pod._replace(uid=f"u{index}") for index, pod in enumerate(pods)]
    count = data.draw(st.integers(0, len(pods)))
    burst = data.draw(st.integers(1, 4))
    passes = scale_down_passes(pods, pods, count, now=NOW, burst=burst)
    victims = [p.item for chosen in passes for p in chosen]
    assert len(victims) == len(set(victims)) == count
    # Each sync deletes at most `burst`, and its victims come first among what is left, ranked
    # by what is left (the victims of earlier syncs no longer count on their nodes).
    remaining = list(range(len(pods)))
    left = count
    for chosen in passes:
        assert len(chosen) == min(left, burst)
        facts = [oracle_pod(pods[i]) for i in remaining]
        ranks = upstream.replicaset_ranks(facts, facts)
        picked = {remaining.index(p.item) for p in chosen}
        if len(picked) < len(remaining) and _no_cycle([pods[i] for i in remaining], ranks):
            assert upstream.victims_are_first(facts, ranks, picked, NOW_NS) == []
        remaining = [i for i in remaining if i not in {p.item for p in chosen}]
        left -= len(chosen)
    assert left == 0


@settings(deadline=None, max_examples=150)
@given(pods=pod_lists)
def test_same_node_ranks_count_down_on_each_node(pods: list[PodFacts]) -> None:
    pods = [pod._replace(uid=f"u{index}") for index, pod in enumerate(pods)]
    ranks = same_node_ranks(pods)
    by_node: dict[str, list[int]] = {}
    for index, pod in enumerate(pods):
        if pod.node_name:
            by_node.setdefault(pod.node_name, []).append(index)
        else:
            assert ranks[index] == 0
    for members in by_node.values():
        assert sorted(ranks[i] for i in members) == [float(k) for k in range(len(members))]
        # Along the ranks (highest first), no pod goes before one ranked higher under the Kruise
        # rules (no ranker, no availability): the kept pod, rank 0, is one the rules delete last.
        for i in members:
            for j in members:
                if ranks[i] > ranks[j]:
                    assert kruise_decide(pods[j], pods[i], 0.0, 0.0, None, None)[0] >= 0, (pods[i], pods[j])


@settings(deadline=None, max_examples=150)
@given(
    pods=pod_lists, zones=st.dictionaries(st.sampled_from(["n1", "n2", "n3"]), st.sampled_from(["z1", "z2"]))
)
def test_spread_ranks_are_positions_within_each_topology(pods: list[PodFacts], zones: dict[str, str]) -> None:
    pods = [pod._replace(uid=f"u{index}") for index, pod in enumerate(pods)]
    nodes = {name: ({"zone": zone} if zone else {}) for name, zone in zones.items()}
    nodes.setdefault("n3", {})  # known but unlabelled unless drawn
    ranking = spread_constraints_ranking(pods, (SpreadConstraint("zone"),), nodes)
    topologies: dict[str, list[int]] = {}
    for index, pod in enumerate(pods):
        zone = nodes.get(pod.node_name, {}).get("zone")
        if zone is None:
            assert ranking.ranks[index] == 0.0
            assert ranking.terms[index] == {}
        else:
            topologies.setdefault(zone, []).append(index)
    weight = math.log(len(topologies) + 2)
    for members in topologies.values():
        coefficients = sorted(ranking.terms[i][len(topologies) + 2] for i in members)
        assert coefficients == list(range(1, len(members) + 1))
        for i in members:
            assert ranking.ranks[i] == ranking.terms[i][len(topologies) + 2] * weight


@settings(deadline=None, max_examples=100)
@given(pods=pod_lists, data=st.data())
def test_cloneset_victims_are_a_prefix_of_the_order(pods: list[PodFacts], data: st.DataObject) -> None:
    pods = [
        pod._replace(uid=f"u{index}", revision=data.draw(st.sampled_from(["r1", "r2"])))
        for index, pod in enumerate(pods)
    ]
    spec = CloneSetSpec(update_revision=data.draw(st.sampled_from([None, "r2", "x-r2"])))
    order = [p.item for p in cloneset_deletion_order(pods, spec, None, NOW)]
    assert sorted(order) == list(range(len(pods)))
    count = data.draw(st.integers(0, len(pods)))
    victims = [p.item for p in cloneset_victims(pods, spec, count, None, NOW)]
    assert len(victims) == count
    assert set(victims) == set(order[:count])
    # Old-revision pods go before update-revision pods.
    if spec.update_revision is not None:
        updated = [pod.revision == "r2" for pod in (pods[i] for i in order)]
        assert updated == sorted(updated)


def _reference_cost(value: str) -> int:
    """Go's rule restated: '-' then digits, '0', or a non-zero digit then digits; int32 range."""
    if not re.fullmatch(r"-[0-9]+|0|[1-9][0-9]*", value):
        return 0
    number = int(value)
    return number if -(2**31) <= number <= 2**31 - 1 else 0


@settings(deadline=None, max_examples=500)
@given(
    value=st.one_of(
        st.text(alphabet="0123456789+- x\u0663", max_size=12),
        st.integers(-(2**33), 2**33).map(str),
    )
)
def test_deletion_cost_parser_matches_the_go_rules(value: str) -> None:
    assert parse_deletion_cost(value) == _reference_cost(value)


@settings(deadline=None, max_examples=500)
@given(
    age=st.one_of(
        st.integers(-(2**10), 2**72),
        st.integers(1, 71).flatmap(lambda k: st.integers(-(2**12), 2**12).map(lambda d: max(1, 2**k + d))),
    )
)
def test_fast_log2_bucket_equals_gos_formula(age: int) -> None:
    assert log2_bucket(age) == go_log2_bucket(age)


@settings(deadline=None, max_examples=300)
@given(uids=st.lists(st.text(max_size=6), min_size=1, max_size=8))
def test_uid_codes_preserve_byte_order(uids: list[str]) -> None:
    codes, bits = uid_codes(uids)
    for a, code_a in zip(uids, codes, strict=True):
        assert code_a < 2**bits or code_a == 0
        for b, code_b in zip(uids, codes, strict=True):
            assert (code_a < code_b) == (a.encode() < b.encode())


def test_shuffled_large_input_keeps_the_same_keys() -> None:
    """A deterministic larger case (more than Go's 12-element insertion-sort limit)."""
    rng = random.Random(5)
    pods = named(
        [
            PodFacts(
                "",
                "default",
                f"uid-{rng.randrange(50):02d}",
                rng.choice(["n1", "n2", ""]),
                rng.choice(["Running", "Pending"]),
                False,
                rng.random() < 0.7,
                NOW_NS - rng.choice([SECOND, 5 * HOUR, 6 * HOUR]),
                rng.randrange(3),
                NOW_NS - rng.choice([HOUR, 2 * HOUR, 3 * HOUR]),
                rng.choice([0, 1]),
                "",
                False,
                None,
                None,
            )
            for _ in range(200)
        ]
    )
    ranks = related_pod_ranks(pods, pods)
    base = K8sOrder(pods, ranks, now=NOW)
    key_of = {pod.name: key for pod, key in zip(pods, base.keys, strict=True)}
    for seed in range(3):
        permutation = list(range(len(pods)))
        random.Random(seed).shuffle(permutation)
        shuffled = [pods[i] for i in permutation]
        again = K8sOrder(shuffled, [ranks[i] for i in permutation], now=NOW)
        assert [key_of[shuffled[i].name] for i in again.order] == [key_of[pods[i].name] for i in base.order]


# ------------------------------------------------------------------ each upstream rule on its own

BASE = PodFacts(
    "p",
    "default",
    "",
    "n1",
    "Running",
    False,
    True,
    NOW_NS - 5 * HOUR,
    0,
    NOW_NS - 9 * HOUR,
    0,
    "",
    False,
    None,
    None,
)


def _two(first: dict[str, object], second: dict[str, object]) -> list[PodFacts]:
    return [BASE._replace(name="a", uid="ua", **first), BASE._replace(name="b", uid="ub", **second)]  # type: ignore[arg-type]


RULE_CASES = [
    # (rule, fields of the pod that must go first, fields of the other one)
    ("scheduled", {"node_name": ""}, {"node_name": "n1"}),
    ("phase", {"phase": "Pending"}, {"phase": "Running"}),
    ("phase", {"phase": "Unknown"}, {"phase": "Running"}),
    ("phase", {"phase": "Succeeded"}, {"phase": "Unknown"}),  # unknown phases rank with Pending
    ("ready", {"ready": False}, {"ready": True}),
    ("deletion-cost", {"cost": -1}, {"cost": 0}),
    ("ready-time", {"ready_time": NOW_NS - 2 * HOUR}, {"ready_time": NOW_NS - 5 * HOUR}),  # younger bucket
    ("ready-time", {"ready_time": None}, {"ready_time": NOW_NS - 5 * HOUR}),  # zero time first
    ("restarts", {"restarts": 2}, {"restarts": 1}),
    ("creation-time", {"created": NOW_NS - 2 * HOUR}, {"created": NOW_NS - 9 * HOUR}),
]


@pytest.mark.parametrize(
    ("rule", "first", "second"), RULE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(RULE_CASES)]
)
@pytest.mark.parametrize("swap", [False, True])
def test_each_replicaset_rule_on_its_own(
    rule: str, first: dict[str, object], second: dict[str, object], swap: bool
) -> None:
    """Two pods alike in all but what one rule reads: the rule alone decides, whatever the input order."""
    pods = _two(first, second)
    assert decide(pods[0], pods[1], now=NOW) == (-1, rule)  # the restated rule, as a sanity check
    if swap:
        pods.reverse()
    order = K8sOrder(pods, [1, 1], now=NOW)
    assert [pods[i].name for i in order.order] == ["a", "b"]
    assert order.criterion(order.order[0], order.order[1]) == rule


def test_the_rank_rule_on_its_own_and_the_gates() -> None:
    pods = _two({}, {})
    assert [pods[i].name for i in K8sOrder(pods, [1, 3], now=NOW).order] == ["b", "a"]  # higher rank first
    cheap = _two({"cost": 5}, {"cost": -5})
    assert [cheap[i].name for i in K8sOrder(cheap, [1, 1], now=NOW).order] == ["b", "a"]
    off = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=True)
    # With the gate off the cost is not read: the next rules decide (here nothing does: a tie, input order).
    assert (
        K8sOrder(cheap, [1, 1], now=NOW, gates=off).keys[0]
        == K8sOrder(cheap, [1, 1], now=NOW, gates=off).keys[1]
    )
    # Same log2 bucket (5 h and 6 h ago): the UID decides and ends the comparison (restarts unread).
    bucketed = _two(
        {"ready_time": NOW_NS - 6 * HOUR, "restarts": 0}, {"ready_time": NOW_NS - 5 * HOUR, "restarts": 9}
    )
    assert [bucketed[i].name for i in K8sOrder(bucketed, [1, 1], now=NOW).order] == ["a", "b"]
    linear = FeatureGates(pod_deletion_cost=True, logarithmic_scale_down=False)
    assert [bucketed[i].name for i in K8sOrder(bucketed, [1, 1], now=NOW, gates=linear).order] == ["b", "a"]


@settings(deadline=None, max_examples=80)
@given(pods=mixed_pod_lists, data=st.data(), gate_values=gates)
def test_the_order_is_total(pods: list[PodFacts], data: st.DataObject, gate_values: FeatureGates) -> None:
    ranks = draw_ranks(data, len(pods))
    order = K8sOrder(pods, ranks, now=NOW, gates=gate_values)
    assert sorted(order.order) == list(range(len(pods)))
    assert [order.keys[i] for i in order.order] == sorted(order.keys)
    kruise = KruiseOrder(pods)
    assert sorted(kruise.order) == list(range(len(pods)))
    assert [kruise.keys[i] for i in kruise.order] == sorted(kruise.keys)
