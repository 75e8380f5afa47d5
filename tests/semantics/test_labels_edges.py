"""Edges of label selectors (py_engine/semantics/labels.py) that mutation testing found unpinned:
every error's exact message, the bounds of keys and values, the string form of every operator,
and the small readers beside the selectors."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.semantics.labels import (
    Requirement,
    Selector,
    SelectorError,
    everything,
    format_label_selector,
    labels_of,
    nothing,
    parse_selector,
    selector_from_label_selector,
    union_keys,
    validate_label_key,
    validate_label_value,
)

pytestmark = pytest.mark.timeout(30)

NAME_RULE = (
    "must be 63 characters or less, begin and end with an alphanumeric character "
    "and contain only [-_.a-zA-Z0-9]"
)


def refused(call: Any, argument: Any, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        call(argument)
    assert str(caught.value) == message


# ------------------------------------------------------------- keys and values


def test_key_bounds_and_messages() -> None:
    validate_label_key("a" * 63)
    validate_label_key("a" * 253 + "/" + "b" * 63)
    validate_label_key("example.com/app_x-1.y")
    refused(validate_label_key, "", "label key must not be empty")
    refused(validate_label_key, "/a", "invalid label key '/a': prefix must be a DNS subdomain")
    refused(
        validate_label_key,
        "Example.com/a",
        "invalid label key 'Example.com/a': prefix must be a DNS subdomain",
    )
    long_prefix = "a" * 254 + "/b"
    refused(
        validate_label_key, long_prefix, f"invalid label key {long_prefix!r}: prefix must be a DNS subdomain"
    )
    refused(validate_label_key, "a.com/", f"invalid label key 'a.com/': name part {NAME_RULE}")
    refused(validate_label_key, "a" * 64, f"invalid label key {'a' * 64!r}: name part {NAME_RULE}")
    refused(validate_label_key, "-a", f"invalid label key '-a': name part {NAME_RULE}")


def test_value_bounds_and_messages() -> None:
    validate_label_value("")
    validate_label_value("a" * 63)
    validate_label_value("A-b_c.9")
    refused(validate_label_value, "a" * 64, f"invalid label value {'a' * 64!r}: {NAME_RULE}")
    refused(validate_label_value, "a-", f"invalid label value 'a-': {NAME_RULE}")


# ------------------------------------------------------------------ string form


@pytest.mark.parametrize(
    ("requirement", "text"),
    [
        (Requirement("a", "exists"), "a"),
        (Requirement("a", "!"), "!a"),
        (Requirement("a", "=", frozenset({"x"})), "a=x"),
        (Requirement("a", "!=", frozenset({"x"})), "a!=x"),
        (Requirement("a", "gt", frozenset({"3"})), "a>3"),
        (Requirement("a", "lt", frozenset({"3"})), "a<3"),
        (Requirement("a", "in", frozenset({"y", "x"})), "a in (x,y)"),
        (Requirement("a", "notin", frozenset({"y", "x"})), "a notin (x,y)"),
    ],
)
def test_every_operator_has_its_string_form_and_parses_back(requirement: Requirement, text: str) -> None:
    assert requirement.to_string() == text
    assert parse_selector(text).requirements == (requirement,)


def test_a_selector_is_its_requirements_joined_by_commas() -> None:
    selector = parse_selector("a=x, !b ,c in (z)")
    assert str(selector) == selector.to_string() == "a=x,!b,c in (z)"
    assert format_label_selector({"matchLabels": {"b": "2", "a": "1"}}) == "a=1,b=2"  # keys sorted


def test_only_the_empty_selector_is_empty() -> None:
    assert everything().empty() and Selector().empty()
    assert not nothing().empty()
    assert not parse_selector("a").empty()


def test_numeric_comparisons_need_a_numeric_label() -> None:
    greater = parse_selector("rank>3")
    assert greater.matches({"rank": "4"}) and not greater.matches({"rank": "3"})
    assert not greater.matches({"rank": "x"}) and not greater.matches({}) and not greater.matches({"rank": 9})  # type: ignore[dict-item]
    lower = parse_selector("rank<3")
    assert lower.matches({"rank": "-1"}) and not lower.matches({"rank": "3"}) and not lower.matches({})


# ----------------------------------------------------------- parse: the errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("!", "unable to parse selector '!': '!' must be followed by a key"),
        ("!,a", "unable to parse selector '!,a': '!' must be followed by a key"),
        ("!(", "unable to parse selector '!(': '!' must be followed by a key"),
        ("=web", "unable to parse selector '=web': unexpected '='"),
        (")", "unable to parse selector ')': unexpected ')'"),
        ("app=(", "unable to parse requirement in selector 'app=(': expected a value"),
        ("rank>", "unable to parse requirement in selector 'rank>': expected a value"),
        ("rank><", "unable to parse requirement in selector 'rank><': expected a value"),
        ("rank>abc", "selector 'rank>abc': > needs an integer, got 'abc'"),
        ("rank<1.5", "selector 'rank<1.5': < needs an integer, got '1.5'"),
        ("app in a", "unable to parse selector 'app in a': expected '(' after 'in'"),
        ("app notin", "unable to parse selector 'app notin': expected '(' after 'notin'"),
        ("app in (a", "unable to parse selector 'app in (a': missing ')'"),
        ("app in ()", "selector 'app in ()': in needs at least one value"),
        ("app notin (,)", "selector 'app notin (,)': notin needs at least one value"),
        ("app in (a,=)", "unable to parse requirement in selector 'app in (a,=)': expected a value"),
        ("app foo", "unable to parse selector 'app foo': unexpected 'foo' after key 'app'"),
        ("app=web)", "unable to parse selector 'app=web)': expected ',' but found ')'"),
        ("app=web,", "unable to parse selector 'app=web,': trailing ','"),
        ("app=-x", "invalid label value '-x': " + NAME_RULE),
        ("app in (-x)", "invalid label value '-x': " + NAME_RULE),
        ("!-x", "invalid label key '-x': name part " + NAME_RULE),
    ],
)
def test_parse_errors_say_what_is_wrong(text: str, message: str) -> None:
    refused(parse_selector, text, message)


def test_parse_accepts_every_spelling() -> None:
    assert parse_selector("a==x").requirements == (Requirement("a", "=", frozenset({"x"})),)
    assert parse_selector("a=,b").requirements == (
        Requirement("a", "=", frozenset({""})),
        Requirement("b", "exists"),
    )
    assert parse_selector("a in (x,,y)").requirements == (Requirement("a", "in", frozenset({"x", "y"})),)
    assert parse_selector("!a,b!=c").requirements == (
        Requirement("a", "!"),
        Requirement("b", "!=", frozenset({"c"})),
    )
    assert parse_selector("a   ").requirements == (Requirement("a", "exists"),)
    assert parse_selector(" \t ").empty() and parse_selector(None).empty()


# ------------------------------------------------------- LabelSelector objects


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (["a"], "label selector must be an object, got list"),
        ({"matchLabels": []}, "matchLabels must be an object"),
        ({"matchLabels": {"a": 1}}, "matchLabels['a'] must be a string"),
        ({"matchLabels": {"a": "-x"}}, "invalid label value '-x': " + NAME_RULE),
        ({"matchExpressions": {}}, "matchExpressions must be a list"),
        ({"matchExpressions": [1]}, "each matchExpression must be an object"),
        ({"matchExpressions": [{"key": 5, "operator": "Exists"}]}, "matchExpression key must be a string"),
        (
            {"matchExpressions": [{"key": "-a", "operator": "Exists"}]},
            "invalid label key '-a': name part " + NAME_RULE,
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            "'Gt' is not a valid label selector operator",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]},
            "matchExpression values must be a list of strings",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", 1]}]},
            "matchExpression values must be a list of strings",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn"}]},
            "values: Required value: must be specified when `operator` is 'NotIn'",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]},
            "values: Forbidden: may not be specified when `operator` is 'DoesNotExist'",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x"]}]},
            "invalid label value '-x': " + NAME_RULE,
        ),
    ],
)
def test_label_selector_errors_say_what_is_wrong(selector: Any, message: str) -> None:
    refused(selector_from_label_selector, selector, message)


def test_null_parts_of_a_label_selector_select_everything() -> None:
    assert selector_from_label_selector({"matchLabels": None, "matchExpressions": None}).empty()
    assert selector_from_label_selector(
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": None}]}
    ).requirements == (Requirement("a", "exists"),)


# ------------------------------------------------------------------ readers


def test_labels_of_reads_metadata_labels_or_nothing() -> None:
    assert labels_of({"metadata": {"labels": {"a": "1"}}}) == {"a": "1"}
    odd: list[dict[str, Any]] = [
        {},
        {"metadata": None},
        {"metadata": "x"},
        {"metadata": {"labels": ["a"]}},
        {"metadata": {}},
    ]
    for obj in odd:
        assert labels_of(obj) == {}


def test_union_keys_collects_every_key_mentioned() -> None:
    assert union_keys([parse_selector("a=1,!b"), parse_selector("c in (x)"), everything(), nothing()]) == {
        "a",
        "b",
        "c",
    }


@pytest.mark.parametrize("token", ["(", ")", ",", "=", "==", "!=", "!", ">", "<"])
def test_no_operator_or_bracket_is_taken_for_a_value(token: str) -> None:
    refused(
        parse_selector,
        f"rank>{token}",
        f"unable to parse requirement in selector 'rank>{token}': expected a value",
    )


@pytest.mark.parametrize("token", ["(", ")", ",", "=", "==", "!=", "!"])
def test_no_operator_or_bracket_is_taken_for_a_key_after_not(token: str) -> None:
    refused(
        parse_selector, f"! {token}", f"unable to parse selector '! {token}': '!' must be followed by a key"
    )


@pytest.mark.parametrize("token", ["(", ")", ",", "=", "==", "!=", ">", "<"])
def test_no_operator_or_bracket_is_taken_for_a_key(token: str) -> None:
    refused(parse_selector, f"{token} a", f"unable to parse selector '{token} a': unexpected {token!r}")


def test_set_and_numeric_requirements_may_be_followed_by_another() -> None:
    assert parse_selector("a in (x),b").requirements == (
        Requirement("a", "in", frozenset({"x"})),
        Requirement("b", "exists"),
    )
    assert parse_selector("a>3,b<2").requirements == (
        Requirement("a", "gt", frozenset({"3"})),
        Requirement("b", "lt", frozenset({"2"})),
    )
