"""The in-subset deletion-cost encoding: distinct, in band, CloneSet topology order, stable.

The order is compared with `py_engine.scaledown`'s CloneSet model (the
SpreadConstraintsRanker over the subset's pods); stability is measured as the
number of pods whose cost changes when k pods come or go in a 1,000-pod subset
spread over 3 zones.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pod_kit import pod_object

from py_engine.model.constants import IN_SUBSET_SPREAD_ANNOTATION
from py_engine.scaledown import CloneSetSpec, cloneset_deletion_order, constraints_from_keys, read_pods
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.workloadspread.controller.reconcile import ClusterView, SyncResult, reconcile
from py_engine.workloadspread.controller.slots import (
    BAND_WIDTH,
    DOMAIN_SLOTS,
    LEVELS,
    Slot,
    assign_slots,
    decode,
    encode,
)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
ZONE = "topology.kubernetes.io/zone"
RS_UID = "rs-uid"


def node(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {ZONE: zone, "kubernetes.io/hostname": name}},
    }


def pod(name: str, node_name: str, subset: str, age_seconds: int) -> dict[str, Any]:
    created = (NOW - timedelta(seconds=age_seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return pod_object(
        name,
        {"nodeName": node_name, "containers": [{"name": "c", "image": "i"}]},
        {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": created}],
        },
        uid=f"uid-{name}",
        creationTimestamp=created,
        labels={"app": "web", "pod-template-hash": "h1"},
        annotations={"spreadgate.dev/matched-workloadspread": f'{{"name":"ws","subset":"{subset}"}}'},
        ownerReferences=[
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": RS_UID, "controller": True}
        ],
    )


def spread(subsets: list[dict[str, Any]], *, refined: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {
            "name": "ws",
            "namespace": "default",
            "generation": 1,
            "annotations": {IN_SUBSET_SPREAD_ANNOTATION: "true" if refined else "false"},
        },
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web"},
            "subsets": subsets,
        },
    }


def replicaset(replicas: int, *, zones: bool = True) -> dict[str, Any]:
    template_spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if zones:
        template_spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": RS_UID,
            "labels": {"pod-template-hash": "h1"},
        },
        "spec": {
            "replicas": replicas,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template_spec},
        },
    }


class Cluster:
    """Pods whose cost patches are applied after every sync, as the controller would."""

    def __init__(self, nodes: list[dict[str, Any]], subsets: list[dict[str, Any]]) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.spread = spread(subsets)
        self.pods: list[dict[str, Any]] = []

    def sync(self) -> SyncResult:
        view = ClusterView(workload=replicaset(len(self.pods)), pods=self.pods, nodes=self.nodes)
        result = reconcile(self.spread, view, NOW)
        for item in self.pods:
            value = result.cost_patches.get(item["metadata"]["name"])
            if value is not None:
                item["metadata"]["annotations"][DELETION_COST_ANNOTATION] = value
        return result


def three_zones(nodes_per_zone: int = 10) -> list[dict[str, Any]]:
    return [node(f"{zone}-{i}", zone) for zone in ("a", "b", "c") for i in range(nodes_per_zone)]


def populate(cluster: Cluster, count: int, rng: random.Random, subset: str = "s0", start: int = 0) -> None:
    names = sorted(cluster.nodes)
    for i in range(start, start + count):
        cluster.pods.append(pod(f"p{i:05d}", rng.choice(names), subset, age_seconds=100_000 - i))


def test_encoding_round_trips_and_orders_levels_before_domains() -> None:
    for band in (-214, -1, 1, 213):
        for slot in (Slot(1, 0), Slot(7, 3), Slot(LEVELS, DOMAIN_SLOTS - 1)):
            cost = encode(band, slot)
            assert -(2**31) <= cost <= 2**31 - 1
            assert decode(cost) == (band, slot)
    assert encode(2, Slot(2, 0)) < encode(2, Slot(1, 5)) < encode(2, Slot(1, 0))
    assert encode(1, Slot(1, 0)) < encode(2, Slot(LEVELS, DOMAIN_SLOTS - 1))
    assert encode(3, None) == 3 * BAND_WIDTH


def test_fresh_costs_are_distinct_in_band_and_in_cloneset_topology_order() -> None:
    rng = random.Random(7)
    nodes = three_zones(4)
    cluster = Cluster(nodes, [{"name": "s0"}, {"name": "s1"}])
    # Uneven zones and crowded nodes, so both rankers matter.
    for i in range(150):
        zone = rng.choices(["a", "b", "c"], weights=[5, 3, 2])[0]
        cluster.pods.append(
            pod(f"p{i:04d}", f"{zone}-{rng.choice([0, 0, 0, 1, 2, 3])}", "s0", age_seconds=1000)
        )
    result = cluster.sync()
    costs = {name: int(value) for name, value in result.costs.items()}
    assert len(costs) == 150 and len(set(costs.values())) == 150
    assert all(value // BAND_WIDTH == 2 for value in costs.values())  # reference 200: first of 2 subsets

    facts = [f._replace(cost=0) for f in read_pods(cluster.pods)]
    labels = {name: n["metadata"]["labels"] for name, n in cluster.nodes.items()}
    spec = CloneSetSpec(constraints=constraints_from_keys([ZONE]))
    cloneset = cloneset_deletion_order(facts, spec, labels, NOW)
    rank = {facts[p.item].name: p.rank for p in cloneset}
    ours = sorted(costs, key=costs.__getitem__)
    # Same sequence of ranks: the two orders differ only among pods of equal rank.
    assert [rank[name] for name in ours] == [p.rank for p in cloneset]
    # And inside each zone exactly the CloneSet's order.
    zone_of = {p["metadata"]["name"]: p["spec"]["nodeName"][0] for p in cluster.pods}
    for zone in "abc":
        assert [n for n in ours if zone_of[n] == zone] == [
            facts[p.item].name for p in cloneset if zone_of[facts[p.item].name] == zone
        ]


def test_hostname_is_the_domain_without_topology_constraints() -> None:
    nodes = three_zones(2)
    cluster = Cluster(nodes, [{"name": "s0"}])
    for i in range(12):
        cluster.pods.append(pod(f"p{i:02d}", "a-0" if i < 8 else "b-1", "s0", age_seconds=100 - i))
    view = ClusterView(workload=replicaset(12, zones=False), pods=cluster.pods, nodes=cluster.nodes)
    costs = {k: int(v) for k, v in reconcile(cluster.spread, view, NOW).costs.items()}
    order = sorted(costs, key=costs.__getitem__)
    # a-0 holds 8 pods, b-1 holds 4: the first four deletions all come from a-0.
    assert all(name < "p08" for name in order[:4])
    assert len(set(costs.values())) == 12


def test_costs_are_unique_across_versions_sharing_a_band() -> None:
    nodes = three_zones(1)
    old = [pod(f"old{i}", "a-0", "s1", 500) for i in range(3)]
    new = [pod(f"new{i}", "a-0", "s1", 10) for i in range(3)]
    for item in old:
        item["metadata"]["labels"]["pod-template-hash"] = "h0"
    cluster = Cluster(nodes, [{"name": "s0"}, {"name": "s1"}, {"name": "s2"}])
    cluster.pods = old + new
    result = cluster.sync()
    # s1 is the middle subset: band 2 for the latest version and, reversed, for the old one.
    assert {int(v) // BAND_WIDTH for v in result.costs.values()} == {2}
    assert len(set(result.costs.values())) == 6


def _subset_of_1000(rng: random.Random, cap: int | None = None) -> Cluster:
    subset: dict[str, Any] = {"name": "s0"} if cap is None else {"name": "s0", "maxReplicas": cap}
    cluster = Cluster(three_zones(10), [subset, {"name": "s1"}])
    populate(cluster, 1000, rng)
    first = cluster.sync()
    assert len(first.cost_patches) == 1000
    assert cluster.sync().cost_patches == {}  # applied: a second sync writes nothing
    return cluster


def _changed(before: dict[str, str], after: SyncResult) -> int:
    return sum(1 for name, value in after.costs.items() if before.get(name) != value)


def _costs(cluster: Cluster) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["metadata"]["annotations"][DELETION_COST_ANNOTATION] for p in cluster.pods
    }


@pytest.mark.parametrize("k", [1, 10, 50])
def test_scale_down_by_cost_order_rewrites_nothing(k: int) -> None:
    cluster = _subset_of_1000(random.Random(k))
    costs = _costs(cluster)
    victims = set(sorted(costs, key=lambda n: int(costs[n]))[:k])
    cluster.pods = [p for p in cluster.pods if p["metadata"]["name"] not in victims]
    assert cluster.sync().cost_patches == {}


@pytest.mark.parametrize("k", [1, 10, 50])
def test_removing_k_arbitrary_pods_moves_at_most_k(k: int) -> None:
    rng = random.Random(100 + k)
    cluster = _subset_of_1000(rng)
    before = _costs(cluster)
    gone = set(rng.sample(sorted(before), k))
    cluster.pods = [p for p in cluster.pods if p["metadata"]["name"] not in gone]
    result = cluster.sync()
    assert len(result.cost_patches) <= k
    assert _changed(before, result) <= k
    assert len(set(result.costs.values())) == 1000 - k
    assert cluster.sync().cost_patches == {}


@pytest.mark.parametrize("k", [1, 10, 50])
def test_adding_k_pods_writes_exactly_k(k: int) -> None:
    rng = random.Random(200 + k)
    cluster = _subset_of_1000(rng)
    before = _costs(cluster)
    populate(cluster, k, rng, start=5000)
    result = cluster.sync()
    assert set(result.cost_patches) == {f"p{i:05d}" for i in range(5000, 5000 + k)}
    assert _changed(before, result) == k
    assert len(set(result.costs.values())) == 1000 + k


def test_churn_keeps_zones_balanced_like_a_fresh_assignment() -> None:
    rng = random.Random(5)
    cluster = _subset_of_1000(rng)
    for round_ in range(5):
        names = sorted(p["metadata"]["name"] for p in cluster.pods)
        gone = set(rng.sample(names, 30))
        cluster.pods = [p for p in cluster.pods if p["metadata"]["name"] not in gone]
        populate(cluster, 30, rng, start=10_000 + 100 * round_)
        result = cluster.sync()
        assert len(result.cost_patches) <= 60
    # Levels stay dense per zone: the first deletions come from the largest zone.
    costs = {k: int(v) for k, v in _costs(cluster).items()}
    zone_of = {p["metadata"]["name"]: p["spec"]["nodeName"][0] for p in cluster.pods}
    sizes = {z: sum(1 for n in zone_of.values() if n == z) for z in "abc"}
    for name, value in costs.items():
        _, slot = decode(value)
        assert 1 <= slot.level <= sizes[zone_of[name]]
    largest = max(sizes, key=sizes.__getitem__)
    gap = sizes[largest] - sorted(sizes.values())[1]
    first = sorted(costs, key=costs.__getitem__)[:gap]
    assert {zone_of[n] for n in first} <= {largest}


@pytest.mark.parametrize("k", [1, 10, 40])
def test_capped_subset_adding_k_pods_changes_at_most_2k(k: int) -> None:
    rng = random.Random(300 + k)
    cluster = _subset_of_1000(rng, cap=950)
    before = _costs(cluster)
    assert sum(int(v) < 0 for v in before.values()) == 50
    populate(cluster, k, rng, start=7000)
    result = cluster.sync()
    assert sum(int(v) < 0 for v in result.costs.values()) == 50 + k
    assert _changed(before, result) <= 2 * k


def test_reference_mode_writes_reference_values() -> None:
    cluster = Cluster(three_zones(1), [{"name": "s0"}, {"name": "s1"}])
    cluster.spread = spread([{"name": "s0"}, {"name": "s1"}], refined=False)
    populate(cluster, 5, random.Random(1))
    result = cluster.sync()
    assert not result.refined_costs
    assert set(result.costs.values()) == {"200"}


def test_assign_slots_keeps_valid_slots_and_reassigns_duplicates() -> None:
    ok = lambda band: band == 1  # noqa: E731
    existing = {"x": encode(1, Slot(1, 0)), "y": encode(1, Slot(1, 0)), "z": encode(1, Slot(2, 0))}
    slots = assign_slots({"zone": ["x", "y", "z"]}, existing, ok)
    assert slots["x"] == Slot(1, 0) and slots["z"] == Slot(2, 0)
    assert slots["y"] == Slot(3, 0)
    # A cost from another band range (reference mode's 100) is not a slot.
    fresh = assign_slots({"zone": ["x"]}, {"x": 100}, ok)
    assert fresh["x"] == Slot(1, 0)
