"""The admission path's JSON helpers: json_copy shares nothing mutable; diff round-trips through jsonpatch."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.jsondiff import diff, escape, json_equal

POD: dict[str, Any] = {
    "metadata": {"name": "p", "labels": {"app": "web", "x": "1"}, "annotations": {"a/b": "c"}},
    "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [{"key": "k"}], "flag": 1},
}


def test_json_copy_is_equal_and_shares_no_container() -> None:
    copied = json_copy(POD)
    assert copied == POD
    assert (
        copied["metadata"] is not POD["metadata"]
        and copied["spec"]["containers"][0] is not POD["spec"]["containers"][0]
    )
    copied["metadata"]["labels"]["new"] = "v"
    assert "new" not in POD["metadata"]["labels"]


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["metadata"]["annotations"].update({"s/d~": "v"}),
        lambda p: p["spec"]["tolerations"].append({"key": "z"}),
        lambda p: p["spec"].update({"affinity": {"nodeAffinity": {}}}),
        lambda p: p["spec"].update({"flag": True}),  # 1 == True in Python, not in JSON
        lambda p: p["metadata"]["labels"].pop("x"),
        lambda p: p["spec"]["containers"][0].update({"image": "j"}),
        lambda p: p["spec"].update({"tolerations": []}),
    ],
)
def test_diff_round_trips(change: Any) -> None:
    mutated = copy.deepcopy(POD)
    change(mutated)
    operations = diff(POD, mutated)
    assert operations
    patched = jsonpatch.apply_patch(POD, operations)
    assert json_equal(patched, mutated)


def test_diff_of_equal_documents_is_empty_and_appends_are_adds() -> None:
    assert diff(POD, copy.deepcopy(POD)) == []
    mutated = copy.deepcopy(POD)
    mutated["spec"]["tolerations"].append({"key": "z"})
    assert diff(POD, mutated) == [{"op": "add", "path": "/spec/tolerations/1", "value": {"key": "z"}}]
    assert escape("a~b/c") == "a~0b~1c"


def test_json_equal_tells_numbers_and_booleans_apart_and_ignores_member_order() -> None:
    assert not json_equal(1, True) and not json_equal({"a": 1}, {"a": 1.0}) and not json_equal([0], [False])
    assert json_equal({"a": [1, {"b": None}], "c": "x"}, {"c": "x", "a": [1, {"b": None}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal({"a": 1}, {"b": 1})
    shared = {"deep": [1, 2, 3]}
    assert json_equal({"s": shared, "n": 1}, {"s": shared, "n": 1})


def test_diff_skips_shared_members_and_replaces_a_number_that_became_a_boolean() -> None:
    mutated = dict(POD, spec=dict(POD["spec"], flag=True))  # shallow: every other member is shared
    assert diff(POD, mutated) == [{"op": "replace", "path": "/spec/flag", "value": True}]
    assert diff(POD, dict(POD, metadata=dict(POD["metadata"]))) == []


def test_an_object_that_became_an_array_or_back_is_replaced_whole() -> None:
    assert diff({"spec": {"a": 1}}, {"spec": [1]}) == [{"op": "replace", "path": "/spec", "value": [1]}]
    assert diff({"spec": ["a"]}, {"spec": {"a": 1}}) == [
        {"op": "replace", "path": "/spec", "value": {"a": 1}}
    ]


def test_equal_scalars_that_are_distinct_objects_are_equal() -> None:
    built = "".join(["we", "b"])  # a new string, not the interned literal
    assert json_equal(built, "web")
    assert json_equal(float("1.5"), 1.5) and json_equal(int("12345678901"), 12345678901)
    assert not json_equal("web", "weB") and not json_equal(2, 3)
