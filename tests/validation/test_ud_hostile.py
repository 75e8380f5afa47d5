"""Hostile UnitedDeployments never make the policy raise: any field of a valid example
replaced by arbitrary JSON (wrong types, nesting, unicode) yields violations or none,
never an evaluation error, through the same call the webhook and CLI make."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_engine.policy import PolicyEngine, create_engine
from py_engine.validation.uniteddeployment import build_ud_review_input, validate_uniteddeployment

EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"
BASES = [
    d
    for p in sorted(EXAMPLES.glob("ud-*.yaml"))
    for d in yaml.safe_load_all(p.read_text())
    if d and d.get("kind") == "UnitedDeployment"
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _replace(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """`obj` with the value at `path` replaced; unchanged when an earlier replacement removed the path."""
    out = copy.deepcopy(obj)
    node: Any = out
    for key in path[:-1]:
        if not _has(node, key):
            return out
        node = node[key]
    if _has(node, path[-1]):
        node[path[-1]] = value
    return out


def _has(node: Any, key: Any) -> bool:
    return (isinstance(node, dict) and isinstance(key, str) and key in node) or (
        isinstance(node, list) and isinstance(key, int) and key < len(node)
    )


@st.composite
def hostile_uds(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    base = draw(st.sampled_from(BASES))
    paths = [p for p in _paths(base) if p[0] != "kind" and p[0] != "apiVersion"]
    broken = base
    for _ in range(draw(st.integers(1, 3))):
        broken = _replace(broken, draw(st.sampled_from(paths)), draw(json_values))
    return broken, base


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return create_engine()


@pytest.mark.timeout(300)
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=hostile_uds())
def test_hostile_fields_never_raise(
    engine: PolicyEngine, case: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    broken, old = case
    for policy_input in (
        build_ud_review_input(broken),
        build_ud_review_input(broken, operation="UPDATE", old=old),
        build_ud_review_input(old, operation="UPDATE", old=broken),
    ):
        violations = validate_uniteddeployment(engine, policy_input)
        assert all(v.message.startswith(v.field + ": ") for v in violations)


@pytest.mark.timeout(120)
def test_base_objects_are_valid(engine: PolicyEngine) -> None:
    assert len(BASES) >= 2
    for base in BASES:
        assert validate_uniteddeployment(engine, build_ud_review_input(base)) == []
