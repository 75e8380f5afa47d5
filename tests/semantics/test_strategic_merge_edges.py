"""Edges of strategic merge and JSON merge patch (py_engine/semantics/strategic_merge.py) that
mutation testing found unpinned: error messages and the paths in them, directives met in every
position, keys after a directive, values that are not what the schema expects, and copies that
share nothing with the patch."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.semantics.strategic_merge import (
    Field,
    StrategicMergeError,
    json_merge_patch,
    strategic_merge,
)

pytestmark = pytest.mark.timeout(30)

APP: dict[str, Any] = {
    "metadata": {"name": "p"},
    "spec": {
        "containers": [{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}],
        "affinity": {"nodeAffinity": {}},
        "priority": 5,
    },
}


def refused(patch: Any, message: str, original: Any = APP, schema: Any = "pod") -> None:
    with pytest.raises(StrategicMergeError) as caught:
        if schema == "pod":
            strategic_merge(original, patch)
        else:
            strategic_merge(original, patch, schema)
    assert str(caught.value) == message


# ------------------------------------------------------------------- messages


def test_what_is_not_an_object_is_refused_with_its_type() -> None:
    refused(["x"], "a strategic merge patch must be a JSON object, got list")
    refused({}, "the patched document must be a JSON object", original="text")


def test_unknown_directives_are_named_with_their_path() -> None:
    refused({"$patch": "explode"}, "<root>: unknown $patch directive 'explode'")
    refused({"spec": {"$patch": "explode"}}, "spec.: unknown $patch directive 'explode'")
    refused({"spec": {"affinity": {"$bad": 1}}}, "spec.affinity.$bad: unknown directive")
    refused({"spec": {"containers": [{"name": "app", "$bad": 1}]}}, "spec.containers.$bad: unknown directive")


def test_directive_values_that_are_not_lists_are_named_with_their_path() -> None:
    refused(
        {"spec": {"$setElementOrder/containers": "x"}}, "spec.$setElementOrder/containers: must be a list"
    )
    refused({"spec": {"$deleteFromPrimitiveList/x": 1}}, "spec.$deleteFromPrimitiveList/x: must be a list")
    refused({"metadata": {"$retainKeys": "name"}}, "metadata.$retainKeys: must be a list")


def test_merge_key_list_errors_name_the_list() -> None:
    refused(
        {"spec": {"containers": ["x"]}}, "spec.containers: list elements must be objects (merge key 'name')"
    )
    refused(
        {"spec": {"containers": [{"image": "i"}]}},
        "spec.containers: element does not contain declared merge key 'name'",
    )


# ----------------------------------------------------------------- directives


def test_patch_merge_is_the_default_spelled_out() -> None:
    out = strategic_merge(APP, {"spec": {"$patch": "merge", "nodeSelector": {"a": "b"}}})
    assert out["spec"]["nodeSelector"] == {"a": "b"} and out["spec"]["priority"] == 5


def test_patch_delete_at_the_root_empties_the_document() -> None:
    assert strategic_merge(APP, {"$patch": "delete"}) == {}


def test_patch_delete_removes_a_map_new_or_not_a_map() -> None:
    assert strategic_merge(APP, {"status": {"$patch": "delete"}}) == APP  # nothing to delete
    assert strategic_merge(APP, {"spec": {"priority": {"$patch": "delete"}}})["spec"].keys() == {
        "containers",
        "affinity",
    }


def test_a_deleted_map_inside_a_new_subtree_is_left_empty() -> None:
    out = strategic_merge({}, {"spec": {"a": {"b": {"$patch": "delete"}, "c": 1}}}, None)
    assert out == {"spec": {"a": {"b": {}, "c": 1}}}


def test_directive_elements_of_a_new_nested_list_are_dropped() -> None:
    out = strategic_merge(
        {}, {"spec": {"x": {"items": [{"$patch": "replace"}, {"a": 1}, {"$patch": "delete"}]}}}, None
    )
    assert out == {"spec": {"x": {"items": [{"a": 1}]}}}


def test_delete_elements_of_an_atomic_list_are_dropped() -> None:
    out = strategic_merge(APP, {"spec": {"tolerations": [{"key": "a"}, {"$patch": "delete"}]}})
    assert out["spec"]["tolerations"] == [{"key": "a"}]


def test_deleting_by_merge_key_removes_every_element_with_that_key() -> None:
    twice = {
        "spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}, {"name": "a", "image": "2"}]}
    }
    out = strategic_merge(twice, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})
    assert out["spec"]["containers"] == [{"name": "b"}]


def test_keys_after_a_directive_or_a_null_are_still_merged() -> None:
    out = strategic_merge(
        APP,
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
                "$deleteFromPrimitiveList/args": ["x"],
                "priority": 7,
            }
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["side", "app"] and out["spec"]["priority"] == 7
    new = strategic_merge({}, {"spec": {"$patch": "merge", "gone": None, "kept": 1, "$x": 2, "also": 3}})
    assert new == {"spec": {"kept": 1, "also": 3}}


def test_directives_on_field_names_with_slashes() -> None:
    original = {"a/b": [3, 1, 2], "c": {"d/e": ["x", "y"]}}
    out = strategic_merge(
        original,
        {"$setElementOrder/a/b": [2, 3], "a/b": [3, 1, 2], "c": {"$deleteFromPrimitiveList/d/e": ["x"]}},
        None,
    )
    assert out == {"a/b": [2, 3, 1], "c": {"d/e": ["y"]}}


# ------------------------------------------------------------- element order


def test_set_element_order_without_a_schema_or_a_merge_key_orders_whole_elements() -> None:
    original = {"items": [{"b": 2}, {"a": 1}, {"c": 3}]}
    out = strategic_merge(original, {"$setElementOrder/items": [{"a": 1}, {"b": 2}]}, None)
    assert out["items"] == [{"a": 1}, {"b": 2}, {"c": 3}]  # unnamed elements last, in their order
    out = strategic_merge(
        APP,
        {
            "spec": {
                "$setElementOrder/tolerations": [{"key": "b"}],
                "tolerations": [{"key": "a"}, {"key": "b"}, {"key": "c"}],
            }
        },
    )
    assert out["spec"]["tolerations"] == [{"key": "b"}, {"key": "a"}, {"key": "c"}]


# ---------------------------------------------------- odd values, custom schemas


def test_a_merge_key_list_over_a_value_that_is_not_a_list_starts_empty() -> None:
    out = strategic_merge({"spec": {"containers": "junk"}}, {"spec": {"containers": [{"name": "a"}]}})
    assert out["spec"]["containers"] == [{"name": "a"}]


def test_a_null_for_a_missing_key_is_nothing_to_do() -> None:
    assert strategic_merge(APP, {"spec": {"absent": None}}) == APP


def test_a_merge_field_without_a_merge_key_replaces() -> None:
    schema = {"items": Field("merge")}
    out = strategic_merge({"items": [{"x": 1}]}, {"items": [{"y": 2}]}, schema)
    assert out == {"items": [{"y": 2}]}


def test_set_elements_share_nothing_with_the_patch() -> None:
    patch: dict[str, Any] = {"s": [{"a": [1]}]}
    out = strategic_merge({"s": []}, patch, {"s": Field("set")})
    out["s"][0]["a"].append(2)
    assert patch == {"s": [{"a": [1]}]}


# ------------------------------------------------------------ JSON merge patch


def test_json_merge_patch_merges_maps_and_keeps_the_rest() -> None:
    original = {"a": {"b": 1, "c": 2}, "d": 3}
    assert json_merge_patch(original, {"a": {"c": None, "e": {"f": 4}}, "g": None}) == {
        "a": {"b": 1, "e": {"f": 4}},
        "d": 3,
    }
    assert json_merge_patch({"a": 5}, {"a": {"b": 1}}) == {"a": {"b": 1}}  # a scalar becomes a map
    assert original == {"a": {"b": 1, "c": 2}, "d": 3}


def test_json_merge_patch_over_a_non_object_starts_empty() -> None:
    assert json_merge_patch("text", {"a": 1}) == {"a": 1}
    assert json_merge_patch(None, {"a": {"b": None}}) == {"a": {}}


def test_json_merge_patch_that_is_not_an_object_replaces_with_a_copy() -> None:
    patch = [{"x": [1]}]
    out = json_merge_patch({"a": 1}, patch)
    assert out == [{"x": [1]}]
    out[0]["x"].append(2)
    assert patch == [{"x": [1]}]


def test_json_merge_patch_values_share_nothing_with_the_patch() -> None:
    patch: dict[str, Any] = {"a": [{"b": [1]}]}
    out = json_merge_patch({}, patch)
    out["a"][0]["b"].append(2)
    assert patch == {"a": [{"b": [1]}]}


def test_messages_keep_a_field_name_whole() -> None:
    schema = {"boxX": Field("merge", "name")}
    refused(
        {"boxX": ["x"]}, "boxX: list elements must be objects (merge key 'name')", original={}, schema=schema
    )
    refused(
        {"boxX": [{}]}, "boxX: element does not contain declared merge key 'name'", original={}, schema=schema
    )
