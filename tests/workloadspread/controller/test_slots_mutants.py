"""The in-subset slot encoding at its limits (module docstring of `slots.py`), with literal values.

Limits stated there: levels 1..10,000, domain indices 0..999, int32 annotation values; a
domain's index follows the majority of its pods' costs, a domain beyond the 1,000th gets no
index (its pods keep the band's lowest value).
"""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.slots import (
    Slot,
    assign_slots,
    domain_orders,
    encode,
    parse_cost,
    pod_domain,
    topology_key,
)

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def any_band(band: int) -> bool:
    return band == 1


# --- encode / parse_cost ---


def test_encode_at_the_limits() -> None:
    # band 1: [10_000_000, 19_999_999]; slot = 9_999_999 - ((level - 1) * 1000 + domain)
    assert encode(1, Slot(1, 0)) == 19_999_999
    assert encode(1, Slot(10_000, 0)) == 10_000_999
    assert encode(1, Slot(1, 999)) == 19_999_000
    assert encode(1, Slot(10_000, 999)) == 10_000_000
    # beyond the limits: the band's lowest value
    assert encode(1, Slot(10_001, 0)) == 10_000_000
    assert encode(1, Slot(1, 1000)) == 10_000_000
    assert encode(1, Slot(0, 5)) == 10_000_000
    assert encode(1, Slot(3, -1)) == 10_000_000
    assert encode(2, None) == 20_000_000


def test_parse_cost_accepts_exactly_int32() -> None:
    assert parse_cost("2147483647") == 2147483647
    assert parse_cost("-2147483648") == -2147483648
    assert parse_cost("2147483648") is None
    assert parse_cost("-2147483649") is None
    assert parse_cost(" 12 ") == 12
    assert parse_cost("1.5") is None
    assert parse_cost(None) is None


# --- pod_domain ---


def test_pod_domain_of_unscheduled_and_unlabelled_pods() -> None:
    nodes = {"n1": {"metadata": {"name": "n1", "labels": {ZONE: "z1"}}}, "n2": {"metadata": {"name": "n2"}}}
    unscheduled: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    assert pod_domain(unscheduled, HOSTNAME, nodes) == ""
    assert pod_domain(unscheduled, ZONE, nodes) == ""
    on_n1 = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}}
    on_n2 = {"metadata": {"name": "p"}, "spec": {"nodeName": "n2"}}
    assert pod_domain(on_n1, ZONE, nodes) == "z1"
    # no hostname label: the node itself is the hostname domain
    assert pod_domain(on_n1, HOSTNAME, nodes) == "n1"
    assert pod_domain(on_n2, HOSTNAME, nodes) == "n2"
    # no zone label: the shared "" domain
    assert pod_domain(on_n2, ZONE, nodes) == ""
    on_unknown = {"metadata": {"name": "p"}, "spec": {"nodeName": "gone"}}
    assert pod_domain(on_unknown, ZONE, nodes) == ""
    assert pod_domain(on_unknown, HOSTNAME, nodes) == "gone"


# --- errors carry their cause ---


def test_a_malformed_template_is_named_in_the_error() -> None:
    workload = {"spec": {"template": {"spec": {"topologySpreadConstraints": "zone"}}}}
    with pytest.raises(ReconcileError, match="topologySpreadConstraints must be a list"):
        topology_key(workload)


def test_a_malformed_pod_is_named_in_the_error() -> None:
    with pytest.raises(ReconcileError, match=r"metadata\.name is missing or not a string"):
        domain_orders([{"metadata": {"name": 5}}], HOSTNAME, {})


# --- domain indices ---


def test_a_domain_keeps_the_index_its_pods_costs_carry() -> None:
    existing = {"p1": encode(1, Slot(1, 5)), "p2": encode(1, Slot(2, 5))}
    assert assign_slots({"z": ["p1", "p2"]}, existing, any_band) == {"p1": Slot(1, 5), "p2": Slot(2, 5)}


def test_a_domain_takes_the_index_most_of_its_pods_carry() -> None:
    existing = {"p1": encode(1, Slot(1, 7)), "p2": encode(1, Slot(2, 4)), "p3": encode(1, Slot(3, 4))}
    slots = assign_slots({"z": ["p1", "p2", "p3"]}, existing, any_band)
    assert {s.domain for s in slots.values() if s is not None} == {4}
    assert slots == {"p2": Slot(2, 4), "p3": Slot(3, 4), "p1": Slot(1, 4)}


def test_a_new_domain_takes_the_lowest_index_not_kept_by_another() -> None:
    existing = {"b1": encode(1, Slot(1, 0)), "a1": None}
    slots = assign_slots({"a": ["a1"], "b": ["b1"]}, existing, any_band)
    assert slots == {"a1": Slot(1, 1), "b1": Slot(1, 0)}


def test_two_domains_claiming_one_index_the_larger_keeps_it() -> None:
    existing = {"a1": encode(1, Slot(1, 3)), "b1": encode(1, Slot(1, 3)), "b2": encode(1, Slot(2, 3))}
    slots = assign_slots({"a": ["a1"], "b": ["b1", "b2"]}, existing, any_band)
    assert slots == {"a1": Slot(1, 0), "b1": Slot(1, 3), "b2": Slot(2, 3)}


def test_the_domain_beyond_the_thousandth_gets_no_slot_and_the_others_still_do() -> None:
    names = [f"d{i:04d}" for i in range(1001)]
    # the last domain in name order (the one without an index) comes first in the mapping
    domains = {name: [f"{name}-p"] for name in reversed(names)}
    slots = assign_slots(domains, {}, any_band)
    assert len(slots) == 1001
    assert slots["d1000-p"] is None
    assert slots["d0000-p"] == Slot(1, 0)
    assert slots["d0999-p"] == Slot(1, 999)


# --- levels at the limit ---


def test_a_domain_of_ten_thousand_and_one_pods_has_levels_up_to_ten_thousand() -> None:
    names = [f"p{i:05d}" for i in range(10_001)]
    # the most valuable pod already sits at level 10,000 (the highest that decodes)
    existing: dict[str, int | None] = {names[0]: encode(1, Slot(10_000, 0))}
    slots = assign_slots({"z": names}, existing, any_band)
    assert slots[names[0]] == Slot(10_000, 0)
    assert slots[names[1]] == Slot(1, 0)
    assert slots[names[9_999]] == Slot(9_999, 0)
    # the 10,001st level does not fit: the band's lowest value
    assert slots[names[10_000]] is None
    assert sum(1 for s in slots.values() if s is None) == 1
