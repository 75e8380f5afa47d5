"""`K8sOrder`'s integer sort keys and `uid_codes`, against the rules they pack.

`K8sOrder` (py_engine/scaledown/kubernetes.py) does not compare pairs: it packs rules
1-8 of `ActivePodsWithRanks` (docs/design-scaledown.md §1.3-1.4) into one integer per
pod, with log2-age buckets when `LogarithmicScaleDown` is on and a reference time is
given. Each test below puts pods on a boundary of one packed field (an age of 0 or
1 ns, an age just below 2**50 ns, a restart count next to the ready time, a negative
rank, a zero time) and expects the order the upstream rule gives, worked out by hand
and written out literally. Where upstream leaves the order open (copies of one pod,
i.e. repeated UIDs, in one bucket), the expected order is the model's documented
choice (module docstring, `_number_uid_positions`, `_tie_break`). Written for issue 29
(survivors of run SD1R in `kubernetes.py`).
"""

from __future__ import annotations

from typing import Any

import pytest
from scaledown_times import BASE, HOUR, NOW, NOW_NS, SECOND

from py_engine.scaledown import K8sOrder, PodFacts, active_pods_order
from py_engine.scaledown.gates import FeatureGates
from py_engine.scaledown.kubernetes import uid_codes
from py_engine.scaledown.ordering import LAST

GATES_OFF = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=False)
MICROSECOND = 1_000


def pod(name: str, **fields: Any) -> PodFacts:
    """BASE (Running, Ready 5 h ago, created 9 h ago, on n1) named `name`; its UID is `name` unless given."""
    return BASE._replace(name=name, **{"uid": name, **fields})


def not_ready(name: str, **fields: Any) -> PodFacts:
    """A Running pod that is not Ready: rule 6 never applies, rules 7-8 decide among such pods."""
    return pod(name, ready=False, ready_time=None, **fields)


def names(facts: list[PodFacts], order: list[int]) -> list[str]:
    return [facts[index].name for index in order]


def bucketed(facts: list[PodFacts], ranks: list[int] | None = None) -> list[str]:
    """Names in `K8sOrder` order with both gates on (the default) and NOW as reference."""
    return names(facts, K8sOrder(facts, ranks, now=NOW).order)


# --------------------------------------------------------------------------- empty input


def test_no_pods_give_an_empty_order_in_every_mode() -> None:
    for gates in (FeatureGates(), GATES_OFF):
        for now in (None, NOW):
            order = K8sOrder([], now=now, gates=gates)
            assert order.order == []
            assert order.keys == []
            assert order.placements() == []
    assert K8sOrder([], [], now=NOW).order == []
    assert active_pods_order([]) == []


# --------------------------------------------------------------------------- uid_codes


def test_uid_codes_of_no_uids_and_of_empty_uids_need_no_bits() -> None:
    assert uid_codes([]) == ([], 0)
    assert uid_codes(["", ""]) == ([0, 0], 0)


def test_uid_codes_values_and_width() -> None:
    """The encoding the docstring states, worked out by hand.

    Bytes zero-padded to the longest UID, read big-endian, times (longest + 1), plus the
    UID's own byte length; "" is 0. The width is the bit length of the largest code a
    UID of the longest length can have (all bytes 0xFF), so every code fits in it.
    One byte: "a" = 0x61 -> 0x61 * 2 + 1 = 195; largest 0xFF * 2 + 1 = 511 -> 9 bits.
    Two bytes: "a" = 0x6100 -> 24832 * 3 + 1 = 74497, "ab" = 0x6162 -> 24930 * 3 + 2 =
    74792; largest 0xFFFF * 3 + 2 = 196607 -> 18 bits.
    """
    assert uid_codes(["a"]) == ([195], 9)
    assert uid_codes(["a", "", "ab"]) == ([74497, 0, 74792], 18)


def test_uid_codes_put_a_prefix_before_any_longer_uid() -> None:
    """Go compares strings byte-wise: a prefix sorts first, even before a control byte."""
    uids = ["a ", "a\x1f", "a", "a\x01", "a\x00"]
    codes, bits = uid_codes(uids)
    by_code = [uid for _, uid in sorted(zip(codes, uids, strict=True))]
    assert by_code == ["a", "a\x00", "a\x01", "a\x1f", "a "]
    assert all(0 < code < 2**bits for code in codes)


def test_the_bucket_uid_tie_break_uses_byte_order() -> None:
    """Same ready bucket (5 h and 5 h + 1 s ago): the smaller UID first, "a" before "a\\x01"."""
    facts = [
        pod("second", uid="a\x01", ready_time=NOW_NS - 5 * HOUR),
        pod("first", uid="a", ready_time=NOW_NS - 5 * HOUR - SECOND),
    ]
    assert bucketed(facts) == ["first", "second"]


# --------------------------------------------------------------------------- ranks


def test_without_ranks_every_pod_ranks_zero() -> None:
    facts = [pod("old"), pod("new", created=NOW_NS - HOUR)]
    order = K8sOrder(facts, now=NOW)
    assert list(order.ranks) == [0, 0]
    assert [(p.item, p.rank, p.criterion) for p in order.placements()] == [
        (1, 0.0, "creation-time"),
        (0, 0.0, LAST),
    ]


def test_negative_ranks_stay_below_the_deletion_cost() -> None:
    """Rule 4 before rule 5: the cheaper pod first, whatever the ranks (Go's ranks are any ints)."""
    cheap, dear = pod("cheap", cost=0), pod("dear", cost=1)
    assert bucketed([dear, cheap], [1, -1]) == ["cheap", "dear"]
    assert bucketed([cheap, dear], [-1, 1]) == ["cheap", "dear"]
    # Equal costs: the higher rank first, negative ranks included.
    assert bucketed([cheap, cheap._replace(name="other")], [-3, -1]) == ["other", "cheap"]


# --------------------------------------------------------------------------- log2 buckets

# docs/design-scaledown.md §1.4: bucket = int64(math.Log2(float64(age_ns))), an age <= 0 is
# bucket -1; the younger bucket first; in one bucket the smaller UID first.


@pytest.mark.parametrize("field", ["ready_time", "created"])
def test_age_zero_is_a_younger_bucket_than_age_one_nanosecond(field: str) -> None:
    """Age 0 ns: bucket -1; age 1 ns: bucket 0. The younger bucket goes first, whatever the UIDs."""
    make = pod if field == "ready_time" else not_ready
    now_pod = make("now", uid="b", **{field: NOW_NS})
    older = make("older", uid="a", **{field: NOW_NS - 1})
    assert bucketed([older, now_pod]) == ["now", "older"]
    assert bucketed([now_pod, older]) == ["now", "older"]


@pytest.mark.parametrize("field", ["ready_time", "created"])
def test_ages_next_to_two_to_the_fiftieth_nanoseconds(field: str) -> None:
    """Go: Log2(float64(2**50 - 1)) is 50.0 (the float rounds up), Log2(2**50) = 50, Log2(2**51) = 51.

    So ages 2**50 - 1 and 2**50 share bucket 50 (the smaller UID first: "k" before "m"),
    and age 2**51 (bucket 51) comes after both although its UID "a" is the smallest.
    """
    make = pod if field == "ready_time" else not_ready
    just_below = make("just-below", uid="m", **{field: NOW_NS - (2**50 - 1)})
    power = make("power", uid="k", **{field: NOW_NS - 2**50})
    next_bucket = make("next-bucket", uid="a", **{field: NOW_NS - 2**51})
    expected = ["power", "just-below", "next-bucket"]
    assert bucketed([just_below, power, next_bucket]) == expected
    assert bucketed([next_bucket, just_below, power]) == expected


def test_a_zero_creation_time_goes_before_one_at_the_reference_time() -> None:
    """Rule 8 with a zero time: `afterOrZero` (no buckets), the zero time first, whatever the UIDs."""
    zero = not_ready("zero", uid="z", created=None)
    now_pod = not_ready("now", uid="a", created=NOW_NS)
    assert bucketed([now_pod, zero]) == ["zero", "now"]
    assert bucketed([zero, now_pod]) == ["zero", "now"]


def test_a_zero_ready_time_goes_before_one_at_the_reference_time() -> None:
    """Rule 6 with a zero time: `afterOrZero`, the zero time first; restarts (rule 7) never looked at.

    Hand-written pods without UIDs (both "").
    """
    zero = pod("zero", uid="", ready_time=None, restarts=0)
    now_pod = pod("now", uid="", ready_time=NOW_NS, restarts=3)
    assert bucketed([now_pod, zero]) == ["zero", "now"]
    assert bucketed([zero, now_pod]) == ["zero", "now"]


def test_pods_with_equal_creation_times_keep_their_input_order() -> None:
    """Rule 8 does not fire on equal instants, so `p0` and `p1` are equal on every rule.

    The other pods share their creation bucket (9 h and 9 h + 1 s ago) but differ in
    restarts (`p2`) or phase (`p3`); none of that may turn `p0`/`p1` into a UID-ordered pair.
    Upstream: `p3` (Pending) first, then `p2` (more restarts), then `p0`, `p1` as given.
    """
    created = NOW_NS - 9 * HOUR
    facts = [
        not_ready("p0", uid="b", created=created),
        not_ready("p1", uid="a", created=created),
        not_ready("p2", uid="c", created=created - SECOND, restarts=1),
        not_ready("p3", uid="d", created=created - SECOND, phase="Pending"),
    ]
    assert bucketed(facts) == ["p3", "p2", "p0", "p1"]
    assert bucketed([facts[1], facts[0], facts[3], facts[2]]) == ["p3", "p2", "p1", "p0"]


# --------------------------------------------------------------------------- restarts next to the ready time


@pytest.mark.parametrize("restarts", [1, 2])
def test_restarts_never_spill_into_the_ready_time(restarts: int) -> None:
    """Exact times (no reference time, or the gate off): rule 6 before rule 7.

    `late` was ready 1 ns after `early`, which has the restarts and is much newer:
    `late` goes first.
    """
    late = pod("late", ready_time=NOW_NS - 5 * HOUR, restarts=0, created=NOW_NS - 9 * HOUR)
    early = pod("early", ready_time=NOW_NS - 5 * HOUR - 1, restarts=restarts, created=NOW_NS - HOUR)
    for facts in ([late, early], [early, late]):
        assert names(facts, K8sOrder(facts).order) == ["late", "early"]
        assert names(facts, K8sOrder(facts, now=NOW, gates=GATES_OFF).order) == ["late", "early"]
        assert names(facts, active_pods_order(facts)) == ["late", "early"]


# --------------------------------------------------------------------------- components and criteria


def test_components_compare_in_the_order_of_the_rules() -> None:
    """`components` are "compared left to right": the pod deleted first has the smaller tuple."""
    facts = [
        pod("ranked"),
        pod("unranked"),
        pod("restarted", restarts=4),
        pod("calm", restarts=1),
    ]
    order = K8sOrder(facts, [3, 1, 0, 0], now=NOW)
    assert order.components(0) < order.components(1)
    assert order.components(2) < order.components(3)
    assert order.criterion(0, 1) == "rank"
    assert order.criterion(2, 3) == "restarts"


def test_same_ready_time_pods_ordered_by_creation_uid_say_so() -> None:
    """`x` and `y` share a ready time; `z` is ready 1 s earlier (same bucket).

    Upstream: x vs y fall through to rule 8; creation times differ in one bucket, so
    the smaller UID ("a", `y`) goes first: criterion "creation-time-uid". x vs z: ready
    times differ in one bucket, the UID decides ("b" < "c"): "ready-time-uid".
    """
    ready = NOW_NS - 5 * HOUR
    facts = [
        pod("x", uid="b", ready_time=ready, created=NOW_NS - 9 * HOUR),
        pod("y", uid="a", ready_time=ready, created=NOW_NS - 9 * HOUR - SECOND),
        pod("z", uid="c", ready_time=ready - SECOND, created=NOW_NS - 9 * HOUR),
    ]
    placements = K8sOrder(facts, now=NOW).placements()
    assert [(facts[p.item].name, p.criterion) for p in placements] == [
        ("y", "creation-time-uid"),
        ("x", "ready-time-uid"),
        ("z", LAST),
    ]


# --------------------------------------------------------------------------- copies of a pod (repeated UIDs)

# Upstream: two pods with the same UID in one bucket are equal (the comparison ends on the
# UID), so it leaves their order open. The model (kubernetes.py module docstring,
# `_number_uid_positions`, `_tie_break`) orders such copies by rules 7-8, then by exact
# creation time, namespace and name, so that the result does not depend on input order.


def test_copies_sharing_a_ready_time_are_ordered_by_name_in_any_input_order() -> None:
    """`q` and `p`: copies (UID "u") ready at the same instant; `w` ready 1 s earlier (same bucket).

    Upstream: the copies before `w` ("u" < "w"); between the copies nothing. The model:
    by name, `p` before `q`.
    """
    ready = NOW_NS - 5 * HOUR
    q = pod("q", uid="u", ready_time=ready)
    p = pod("p", uid="u", ready_time=ready)
    w = pod("w", ready_time=ready - SECOND)
    assert bucketed([q, p, w]) == ["p", "q", "w"]
    assert bucketed([p, q, w]) == ["p", "q", "w"]
    assert bucketed([w, q, p]) == ["p", "q", "w"]


def test_copies_are_numbered_in_every_group_that_has_them() -> None:
    """Two rule-6 groups (deletion cost 0 and 1), each with two pods sharing a ready time.

    The first group's UIDs are distinct ("a", "b", "c"); the second holds the copies `q`
    and `p` (UID "u"). Every group with copies must be numbered, not only the first one.
    """
    ready = NOW_NS - 5 * HOUR
    facts = [
        pod("x1", uid="a", ready_time=ready),
        pod("x2", uid="b", ready_time=ready),
        pod("x3", uid="c", ready_time=ready - SECOND),
        pod("q", uid="u", ready_time=ready, cost=1),
        pod("p", uid="u", ready_time=ready, cost=1),
        pod("w", uid="w", ready_time=ready - SECOND, cost=1),
    ]
    assert bucketed(facts) == ["x1", "x2", "x3", "p", "q", "w"]


def test_copies_at_different_ready_times_go_by_restarts() -> None:
    """`calm` and `restarted`: copies (UID "u") ready 1 s apart; `v` shares `calm`'s ready time.

    Upstream: `restarted` before `v` (same bucket, "u" < "v"); `calm` ties with `v` on
    rules 6-8 and with `restarted` on the UID, so it may go anywhere before or after.
    The model orders the copies by rule 7, more restarts first: `restarted` first.
    """
    ready = NOW_NS - 5 * HOUR
    facts = [
        pod("calm", uid="u", ready_time=ready),
        pod("restarted", uid="u", ready_time=ready - SECOND, restarts=3),
        pod("v", uid="v", ready_time=ready),
    ]
    assert bucketed(facts) == ["restarted", "calm", "v"]
    assert bucketed(facts[::-1]) == ["restarted", "calm", "v"]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (NOW_NS - 9 * HOUR - MICROSECOND, NOW_NS - 9 * HOUR),
        (0, 1),  # the Unix epoch itself (not Go's zero time) and 1 ns later
    ],
    ids=["one-microsecond-apart", "at-the-epoch"],
)
def test_identical_copies_but_the_creation_instant_keep_one_order(older: int, newer: int) -> None:
    """Copies with the same UID, name, ready time and restarts, created in one bucket but at
    different instants: the model's tie-break (exact creation time) puts the older first,
    in either input order."""
    ready = NOW_NS - 5 * HOUR
    first = pod("copy", uid="u", ready_time=ready, created=older)
    second = pod("copy", uid="u", ready_time=ready, created=newer)
    other = pod("w", ready_time=ready - SECOND)
    for facts in ([second, first, other], [first, second, other]):
        order = K8sOrder(facts, now=NOW).order
        assert [facts[index].created for index in order] == [older, newer, other.created]
