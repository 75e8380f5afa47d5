"""Subset choice (py_engine/workloadspread/admission/choose.py) asserted whole: the ordinal read from
a StatefulSet pod's name at the int32 boundary, and the engine-less eligibility, subset by subset.

Expected values are written out from docs/design-workloadspread.md §2.1.2-§2.1.3: a
`Schedulable` condition whose status is exactly "False" excludes a subset; an ordinal is the
decimal suffix of `<parent>-<digits>`, read as a 32-bit signed integer (-1 when it has none or
does not fit), and the first eligible subset whose running cap sum exceeds it is chosen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from admission_builders import NOW, pod, spread, subset

from py_engine.model import WorkloadSpread
from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.placement.inventory import NodeInventory
from py_engine.policy import PolicyEngine, create_engine
from py_engine.workloadspread.admission.caches import AdmissionCaches
from py_engine.workloadspread.admission.choose import (
    UNSCHEDULABLE_REASON,
    Eligibility,
    choose_by_ordinal,
    eligibility,
    pod_ordinal,
    schedulable,
)
from py_engine.workloadspread.admission.context import AdmissionContext, no_lookup

pytestmark = pytest.mark.timeout(10)

CTX = AdmissionContext(now=datetime(2026, 1, 1, tzinfo=UTC), lookup=no_lookup)


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [
        ("web-0", 0),
        ("web-12", 12),
        ("db-a-7", 7),
        ("web-2147483647", 2147483647),  # the largest int32 still parses
        ("web-2147483648", -1),  # one more does not (Go's ParseInt(..., 10, 32) fails)
        ("web", -1),
        ("web-", -1),
        ("web-1a", -1),
    ],
)
def test_the_ordinal_is_the_decimal_suffix_read_as_an_int32(name: str, ordinal: int) -> None:
    assert pod_ordinal(name) == ordinal


def test_the_largest_int32_ordinal_is_beyond_even_an_unlimited_subset() -> None:
    """Unlimited is 2^31-1: ordinal 2147483647 is not below it, so no subset; a name whose ordinal
    does not parse reads -1 and goes to the first subset."""
    view = WorkloadSpread.from_object(
        spread([subset("a", 5), subset("b")], target=("apps/v1", "StatefulSet", "web"))
    )
    both = Eligibility(frozenset({"a", "b"}))
    assert choose_by_ordinal(view, "web-2147483647", both) is None
    assert choose_by_ordinal(view, "web-2147483646", both) == "b"
    assert choose_by_ordinal(view, "web-2147483648", both) == "a"
    assert choose_by_ordinal(view, "web-4", both) == "a"
    assert choose_by_ordinal(view, "web-5", both) == "b"


def _unschedulable(status: str = "False", kind: str = "Schedulable") -> list[dict[str, str]]:
    return [{"type": kind, "status": status, "reason": "PodUnschedulable"}]


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        (_unschedulable(), False),
        ([{"type": "Ready", "status": "True"}, *_unschedulable()], False),
        (_unschedulable("True"), True),
        (_unschedulable("false"), True),  # condition statuses are "True"/"False"/"Unknown", exactly
        (_unschedulable("Unknown"), True),
        (_unschedulable(kind="Ready"), True),  # another condition's False says nothing
        ([], True),
    ],
)
def test_only_a_schedulable_false_condition_makes_a_subset_unschedulable(
    conditions: list[dict[str, str]], expected: bool
) -> None:
    assert schedulable({"name": "a", "conditions": conditions}) is expected
    assert schedulable({"name": "a"}) is True


def test_without_an_engine_eligibility_is_the_schedulable_check_subset_by_subset() -> None:
    view = WorkloadSpread.from_object(spread([subset("a", 2), subset("b", 2), subset("c"), subset("d", 1)]))
    statuses = [
        {"name": "a", "conditions": _unschedulable(kind="Ready")},
        {"name": "b", "conditions": _unschedulable()},
        # no entry for "c": schedulable
        {"name": "d", "conditions": _unschedulable("True")},
        {"name": "gone", "conditions": _unschedulable()},
    ]
    got = eligibility({"metadata": {"name": "p"}}, view, statuses, CTX)
    assert got == Eligibility(frozenset({"a", "c", "d"}), {"b": (UNSCHEDULABLE_REASON,)})
    assert type(got.names) is frozenset
    assert UNSCHEDULABLE_REASON == (
        "Schedulable condition is False (pods could not be scheduled there recently)"
    )


# ------------------------------------------------------------ with the policy engine and nodes

ZONE = "topology.kubernetes.io/zone"
HUNGRY = pod(spec={"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]})


def _nodes(cpu_z1: float) -> NodeInventory:
    return NodeInventory(
        [
            {
                "name": name,
                "labels": {ZONE: zone},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": cpu, "memory": 8 * 2**30, "pods": 10},
            }
            for name, zone, cpu in (("n-a", "z1", cpu_z1), ("n-b", "z2", 4.0))
        ]
    )


def _adaptive_view() -> WorkloadSpread:
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n-b"]}]}
    return WorkloadSpread.from_object(
        spread(
            [
                subset("a", 5, zone="z1"),
                subset("b", zone="z2"),
                subset("c", 5, requiredNodeSelectorTerm=by_name),
            ],
            scheduleStrategy={"type": "Adaptive"},
        )
    )


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


@pytest.mark.parametrize("remembered", [False, True])
def test_node_fit_reads_the_subset_zone_labels_and_node_names(engine: PolicyEngine, remembered: bool) -> None:
    """Zone z1's only node has 0.5 CPU free, z2's has 4: a pod asking 1 CPU fits b (zone z2) and c
    (node n-b by name), not a. With room in z1 too, every subset fits. The same with the node
    classes remembered by a `NodeClassCache` (one entry per inventory and label keys)."""
    classes = NodeClassCache() if remembered else None
    ctx = AdmissionContext(now=NOW, lookup=no_lookup, engine=engine, nodes=_nodes(0.5), node_classes=classes)
    full = eligibility(HUNGRY, _adaptive_view(), [], ctx)
    assert (full.names, set(full.rejected)) == (frozenset({"b", "c"}), {"a"})
    roomy = eligibility(HUNGRY, _adaptive_view(), [], dataclasses.replace(ctx, nodes=_nodes(2.0)))
    assert (roomy.names, dict(roomy.rejected)) == (frozenset({"a", "b", "c"}), {})
    if classes is not None:
        assert len(classes) == 2


def test_nodes_are_ignored_without_simulation(engine: PolicyEngine) -> None:
    obj = _adaptive_view().raw
    obj["spec"]["scheduleStrategy"] = {"type": "Adaptive", "adaptive": {"disableSimulationSchedule": True}}
    ctx = AdmissionContext(now=NOW, lookup=no_lookup, engine=engine, nodes=_nodes(0.5))
    got = eligibility(HUNGRY, WorkloadSpread.from_object(obj), [], ctx)
    assert (got.names, dict(got.rejected)) == (frozenset({"a", "b", "c"}), {})


def test_a_node_inventory_version_keys_the_decision_cache(engine: PolicyEngine) -> None:
    """With a decision cache, the runtime's caches and an inventory that has a version, the key is
    built from parts: the spread's subsets come from `AdmissionCaches.subset_inputs` (built once,
    then reused) and the inventory counts by its version."""
    cache, caches = EligibilityCache(8), AdmissionCaches()
    ctx = AdmissionContext(
        now=NOW,
        lookup=no_lookup,
        engine=engine,
        nodes=_nodes(0.5),
        decision_cache=cache,
        caches=caches,
    )
    view = _adaptive_view()
    decisions = [eligibility(HUNGRY, view, [], ctx) for _ in range(3)]
    assert [d.names for d in decisions] == [frozenset({"b", "c"})] * 3
    assert (cache.misses, cache.hits) == (1, 2)
    assert (caches.subset_inputs.misses, caches.subset_inputs.hits) == (1, 2)
    other = eligibility(HUNGRY, view, [], dataclasses.replace(ctx, nodes=_nodes(2.0)))
    assert other.names == frozenset({"a", "b", "c"})
    assert (cache.misses, cache.hits) == (2, 2)
    assert (caches.subset_inputs.misses, caches.subset_inputs.hits) == (1, 3)


def test_the_pods_own_node_selector_labels_are_kept_for_node_fit(engine: PolicyEngine) -> None:
    """The pod asks for `disk: ssd`; only n-a (zone z1) has it. So only a fits; were the pod's own
    label keys dropped from the node classes, no node would show the label and nothing would fit."""
    nodes = NodeInventory(
        [
            {
                "name": "n-a",
                "labels": {ZONE: "z1", "disk": "ssd"},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": 2.0, "memory": 8 * 2**30, "pods": 10},
            },
            {
                "name": "n-b",
                "labels": {ZONE: "z2"},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": 4.0, "memory": 8 * 2**30, "pods": 10},
            },
        ]
    )
    the_pod = pod(spec={**HUNGRY["spec"], "nodeSelector": {"disk": "ssd"}})
    ctx = AdmissionContext(now=NOW, lookup=no_lookup, engine=engine, nodes=nodes)
    got = eligibility(the_pod, _adaptive_view(), [], ctx)
    assert (got.names, set(got.rejected)) == (frozenset({"a"}), {"b", "c"})
