"""maxReplicas parsing and ceiling resolution, against Kruise's worked examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from py_engine.model import MaxReplicas, ModelError, parse_max_replicas


@pytest.mark.parametrize(
    ("raw", "replicas", "cap"),
    [
        (5, 99, 5),
        ("100%", 5, 5),
        ("80%", 5, 4),
        ("50%", 14, 7),
        ("50%", 18, 9),
        ("20%", 10, 2),
        ("30%", 10, 3),
        ("50%", 10, 5),
        ("30%", 5, 2),
        ("34%", 10, 4),
        ("0%", 10, 0),
        ("10%", 0, 0),
    ],
)
def test_resolution_rounds_up(raw: object, replicas: int, cap: int) -> None:
    parsed = parse_max_replicas(raw)
    assert parsed is not None
    assert parsed.resolve(replicas) == cap


def test_unlimited_and_round_trip() -> None:
    assert parse_max_replicas(None) is None
    assert MaxReplicas(20, percent=True).to_json() == "20%"
    assert MaxReplicas(3).to_json() == 3


@pytest.mark.parametrize("raw", [-1, "5", "0.2%", "50.2%", "-1%", True, [], 2.5])
def test_malformed_caps_are_rejected_with_field(raw: object) -> None:
    with pytest.raises(ModelError) as excinfo:
        parse_max_replicas(raw, "spec.subsets[0].maxReplicas")
    assert excinfo.value.field == "spec.subsets[0].maxReplicas"


@given(st.integers(0, 100), st.integers(0, 100_000))
def test_percent_cap_is_smallest_integer_at_least_the_share(pct: int, replicas: int) -> None:
    cap = MaxReplicas(pct, percent=True).resolve(replicas)
    assert cap * 100 >= pct * replicas
    assert (cap - 1) * 100 < pct * replicas or cap == 0


# ------------------------------------------- what mutation testing found unpinned (docs/testing.md)


def test_zero_and_whole_floats_are_counts() -> None:
    assert parse_max_replicas(0) == MaxReplicas(0)
    assert parse_max_replicas(0.0) == MaxReplicas(0)
    parsed = parse_max_replicas(2.0)
    assert parsed == MaxReplicas(2) and isinstance(parsed.value, int)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (-1, "maxReplicas: must not be negative, got -1"),
        ("20 %", "maxReplicas: '20 %' is not a whole percentage like \"20%\""),
        ([3], "maxReplicas: must be an integer or a percentage string, not [3]"),
        (True, "maxReplicas: must be an integer or a percentage string, not True"),
        (-2.0, "maxReplicas: must be an integer or a percentage string, not -2.0"),
    ],
)
def test_errors_name_the_field_and_the_value(raw: object, message: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_max_replicas(raw)
    assert str(caught.value) == message
