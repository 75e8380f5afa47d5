"""maxReplicas parsing and ceiling resolution, against Kruise's worked examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from py_engine.model import MaxReplicas, ModelError, parse_max_replicas


@pytest.mark.parametrize(
    ("raw", "replicas", "cap"),
    [(5, 99, 5), ("100%", 5, 5), ("80%", 5, 4), ("50%", 14, 7), ("50%", 18, 9), ("20%", 10, 2),
     ("30%", 10, 3), ("50%", 10, 5), ("30%", 5, 2), ("34%", 10, 4), ("0%", 10, 0), ("10%", 0, 0)],
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
