"""Label selectors: string syntax, LabelSelector dicts, Kubernetes matching semantics."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from py_engine.semantics.labels import (
    SelectorError,
    format_label_selector,
    matches_label_selector,
    parse_selector,
    selector_from_label_selector,
)

LABELS = {"app": "web", "tier": "front", "env": "prod", "rank": "5"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("missing!=x", True),  # != matches an absent key
        ("app!=web", False),
        ("tier in (front,back)", True),
        ("tier in (back)", False),
        ("missing in (a)", False),
        ("tier notin (back)", True),
        ("missing notin (a)", True),  # notin matches an absent key
        ("tier notin (front)", False),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier in (front),!canary", True),
        ("app=web,tier in (front),env=dev", False),
        ("rank>3", True),
        ("rank<3", False),
        ("  app = web , env  ", True),
    ],
)
def test_string_selector_matching(text: str, expected: bool) -> None:
    assert parse_selector(text).matches(LABELS) is expected


def test_empty_value_selects_empty_label() -> None:
    sel = parse_selector("app=")
    assert sel.matches({"app": ""})
    assert not sel.matches({"app": "x"})
    assert not sel.matches({})


@pytest.mark.parametrize(
    "bad",
    [
        "app=web,",
        "app in (a",
        "in (a)",
        "app in ()",
        "=web",
        "app=we b",
        "app=-bad-",
        "!",
        "app notin a",
        "a,,b",
        "app=web)",
        "Bad Key=1",
        "x/=1",
        "rank>abc",
    ],
)
def test_string_selector_errors(bad: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(bad)


def test_label_selector_dict() -> None:
    sel = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["front", "mid"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "Exists"},
            {"key": "zone", "operator": "NotIn", "values": ["z1"]},
        ],
    }
    assert matches_label_selector(sel, LABELS)
    assert not matches_label_selector(sel, {**LABELS, "canary": "1"})
    assert not matches_label_selector(sel, {**LABELS, "tier": "back"})
    assert not matches_label_selector(sel, {k: v for k, v in LABELS.items() if k != "env"})


def test_nil_selects_nothing_and_empty_selects_everything() -> None:
    assert not matches_label_selector(None, LABELS)
    assert matches_label_selector({}, LABELS)
    assert matches_label_selector({}, None)


@pytest.mark.parametrize(
    "bad",
    [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
        {"matchLabels": {"a": 1}},
        {"matchLabels": {"bad key": "x"}},
        {"matchLabels": []},
    ],
)
def test_label_selector_dict_errors(bad: dict[str, object]) -> None:
    with pytest.raises(SelectorError):
        selector_from_label_selector(bad)


def test_format_round_trips() -> None:
    sel = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "NotIn", "values": ["b", "a"]},
            {"key": "x", "operator": "DoesNotExist"},
        ],
    }
    text = format_label_selector(sel)
    assert text == "app=web,tier notin (a,b),!x"
    reparsed = parse_selector(text)
    for labels in (LABELS, {"app": "web", "tier": "a"}, {"app": "web", "x": "1"}, {}):
        assert reparsed.matches(labels) == matches_label_selector(sel, labels)


_key = st.sampled_from(["a", "b", "c", "example.com/d"])
_val = st.sampled_from(["", "x", "y", "z1"])


@given(st.dictionaries(_key, _val), st.dictionaries(_key, _val.filter(bool), max_size=3))
def test_match_labels_equals_subset_check(labels: dict[str, str], wanted: dict[str, str]) -> None:
    expected = all(labels.get(k) == v for k, v in wanted.items())
    assert matches_label_selector({"matchLabels": wanted}, labels) is expected
    assert parse_selector(format_label_selector({"matchLabels": wanted})).matches(labels) is expected


def test_label_values_that_are_not_strings_equal_nothing() -> None:
    from py_engine.semantics.labels import matches_label_selector

    hostile: Any = {"app": ["web"], "tier": {"x": 1}}
    assert not matches_label_selector({"matchLabels": {"app": "web"}}, hostile)
    assert matches_label_selector(
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, hostile
    )
    assert matches_label_selector({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, hostile)
