"""`depth_exceeds` (py_engine/semantics/nesting.py): how deep arrays and objects nest, a scalar
being 0 and `{}` 1, counted without recursion."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.semantics.nesting import MAX_REVIEW_DEPTH, depth_exceeds

pytestmark = pytest.mark.timeout(30)


def nested(levels: int, *, innermost: Any = None, use_list: bool = False) -> Any:
    value: Any = innermost
    for _ in range(levels):
        value = [value] if use_list else {"k": value}
    return value


@pytest.mark.parametrize("use_list", [False, True])
@pytest.mark.parametrize("levels", [1, 2, 7, 64])
def test_a_document_exactly_at_the_limit_does_not_exceed_it(levels: int, use_list: bool) -> None:
    document = nested(levels, use_list=use_list)
    assert not depth_exceeds(document, levels)
    assert depth_exceeds(document, levels - 1)


def test_scalars_are_depth_zero_and_empty_containers_depth_one() -> None:
    for scalar in (None, 0, "text", 1.5, True):
        assert not depth_exceeds(scalar, 0)
    assert not depth_exceeds({}, 1) and depth_exceeds({}, 0)
    assert not depth_exceeds([], 1) and depth_exceeds([], 0)
    assert not depth_exceeds({"a": 1, "b": "x", "c": None}, 1)  # scalars inside add no level


def test_the_deepest_branch_counts_wherever_it_sits() -> None:
    deep_last = {"a": 1, "b": [{"c": [1]}], "z": nested(5)}
    assert not depth_exceeds(deep_last, 6) and depth_exceeds(deep_last, 5)
    deep_first = [nested(5, use_list=True), {"x": 1}, 3]
    assert not depth_exceeds(deep_first, 6) and depth_exceeds(deep_first, 5)
    mixed: dict[str, Any] = {"a": [{"b": [{"c": {}}]}]}  # dict, list, dict, list, dict, dict: 6 levels
    assert not depth_exceeds(mixed, 6) and depth_exceeds(mixed, 5)


def test_far_deeper_than_recursion_allows_is_measured() -> None:
    assert depth_exceeds(nested(5000), MAX_REVIEW_DEPTH)
    assert not depth_exceeds(nested(5000), 5000)


def test_the_review_limit_is_64_levels() -> None:
    assert MAX_REVIEW_DEPTH == 64
