"""Exact outcomes of feature-gate parsing and node reading (issue 29: mutation survivors).

Oracles are literal: the spellings Go's `strconv.ParseBool` accepts, the error
messages the CLI prints for each malformed input, and the node map expected for
each accepted document shape.
"""

from __future__ import annotations

import pytest

from py_engine.scaledown import (
    FeatureGateError,
    FeatureGates,
    NodeFormatError,
    gates_from_mapping,
    parse_feature_gates,
    read_nodes,
)
from py_engine.scaledown.gates import parse_bool

KNOWN = "LogarithmicScaleDown, PodDeletionCost"


@pytest.mark.parametrize(
    ("text", "expected"),
    [(t, True) for t in ("1", "t", "T", "TRUE", "true", "True")]
    + [(f, False) for f in ("0", "f", "F", "FALSE", "false", "False")],
)
def test_parse_bool_accepts_go_spellings(text: str, expected: bool) -> None:
    assert parse_bool(text) is expected


def test_gates_from_mapping_unknown_name_message() -> None:
    with pytest.raises(FeatureGateError) as caught:
        gates_from_mapping({"Nope": True})
    assert str(caught.value) == f"unrecognized feature gate: 'Nope' (known: {KNOWN})"


def test_gates_from_mapping_non_bool_message() -> None:
    with pytest.raises(FeatureGateError) as caught:
        gates_from_mapping({"PodDeletionCost": "yes"})  # type: ignore[dict-item]
    assert str(caught.value) == "feature gate PodDeletionCost must be true or false, got 'yes'"


def test_parse_feature_gates_unknown_name_message() -> None:
    with pytest.raises(FeatureGateError) as caught:
        parse_feature_gates("Bogus=true")
    assert str(caught.value) == f"unrecognized feature gate: 'Bogus' (known: {KNOWN})"


def test_parse_feature_gates_empty_items_are_skipped_not_the_end() -> None:
    gates = parse_feature_gates(" , ,PodDeletionCost=false,,LogarithmicScaleDown=0")
    assert gates == FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=False)


def test_parse_feature_gates_keeps_base_for_unnamed_gates() -> None:
    base = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=True)
    assert parse_feature_gates("", base) == base
    assert parse_feature_gates("LogarithmicScaleDown=false", base) == FeatureGates(False, False)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"kind": "Pod"}, "expected a NodeList or a JSON array of nodes"),
        ({}, "expected a NodeList or a JSON array of nodes"),
        ("nodes", "expected a NodeList or a JSON array of nodes, got str"),
        ({"items": 3}, "expected a NodeList or a JSON array of nodes, got int"),
        ([{"kind": "Node"}], "node item 0: missing metadata"),
        ([{"metadata": {"name": "a"}}, {"metadata": []}], "node item 1: missing metadata"),
        ([{"metadata": {"name": 5}}], "node item 0: metadata.name is missing or not a string"),
        ([{"metadata": {"name": ""}}], "node item 0: metadata.name is missing or not a string"),
        ([{"metadata": {}}], "node item 0: metadata.name is missing or not a string"),
        ([7], "node item 0: expected a node object"),
        ([{"kind": "Pod", "metadata": {"name": "a"}}], "node item 0: kind is 'Pod', expected a Node"),
        (
            [{"metadata": {"name": "a", "labels": {"k": 1}}}],
            "node 'a': metadata.labels must map strings to strings",
        ),
    ],
)
def test_read_nodes_rejects_with_exact_message(document: object, message: str) -> None:
    with pytest.raises(NodeFormatError) as caught:
        read_nodes(document)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"items": None}, {}),
        ({"kind": "NodeList", "items": []}, {}),
        ({"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}, {"n1": {"zone": "a"}}),
        (
            {
                "items": [
                    {"metadata": {"name": "n1"}},
                    {"kind": "Node", "metadata": {"name": "n2", "labels": None}},
                ]
            },
            {"n1": {}, "n2": {}},
        ),
    ],
)
def test_read_nodes_accepted_shapes(document: object, expected: dict[str, dict[str, str]]) -> None:
    assert read_nodes(document) == expected
