"""Revision data, Go's JSON encoding, the history hash, collisions, rollback and cleanup."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ud_testkit import stored_revision as stored
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller import gojson
from py_engine.uniteddeployment.controller.gojson import (
    EncodingError,
    fnv1_32,
    go_json,
    history_hash,
    safe_encode,
)
from py_engine.uniteddeployment.controller.revisions import plan_revisions, revision_data, revision_name

pytestmark = pytest.mark.timeout(30)


def model(image: str = "nginx", **spec: Any) -> UnitedDeployment:
    obj = ud_object(2, [{"name": "a"}])
    obj["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
        image
    )
    obj["spec"].update(spec)
    return UnitedDeployment.from_object(obj)


def test_go_encoding() -> None:
    assert (
        go_json({"b": [1, 2.0, 0.5, 1e21, 1e-7], "a": "<&>", "c": None, "d": True})
        == '{"a":"\\u003c\\u0026\\u003e","b":[1,2,0.5,1e+21,1e-7],"c":null,"d":true}'
    )
    assert go_json("é\u2028") == '"é\\u2028"'
    with pytest.raises(EncodingError):
        go_json(float("nan"))


def test_go_encoding_of_plain_trees() -> None:
    """Trees without floats take the C encoder (issue 28): the same bytes Go writes."""
    tree = {"z": {"y": [True, False, None, "a<b>&c"]}, "\u00e9": 1, "a": -3, "b": (1, "\u2029")}
    assert (
        go_json(tree)
        == '{"a":-3,"b":[1,"\\u2029"],"z":{"y":[true,false,null,"a\\u003cb\\u003e\\u0026c"]},"\u00e9":1}'
    )
    assert go_json("\n\t\u0001") == '"\\n\\t\\u0001"'
    assert go_json({"n": 2**53 - 1}) == '{"n":9007199254740991}'
    assert go_json({"n": 2**53 + 1}) == '{"n":9007199254740992}'  # float64, as Go decodes it
    assert go_json({"n": -(2**53) - 1}) == '{"n":-9007199254740992}'
    assert go_json({1: "x", "a": [0.5]}) == '{"1":"x","a":[0.5]}'
    assert go_json([]) == "[]" and go_json({}) == "{}"
    with pytest.raises(EncodingError):
        go_json({"a": [object()]})


json_trees = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_trees)
def test_the_c_encoder_and_the_value_by_value_encoder_agree(tree: Any) -> None:
    try:
        slow = gojson._encode(tree)
    except EncodingError:
        with pytest.raises(EncodingError):
            go_json(tree)
        return
    assert go_json(tree) == slow


def test_a_new_revision_does_not_share_the_template() -> None:
    ud = model()
    plan = plan_revisions(ud, [])
    (created,) = plan.create
    created["data"]["spec"]["template"]["deploymentTemplate"]["spec"]["replicas"] = 99
    assert "replicas" not in ud.raw["spec"]["template"]["deploymentTemplate"]["spec"]


def test_fnv1_and_safe_encoding() -> None:
    assert fnv1_32(b"") == 0x811C9DC5
    assert fnv1_32(b"a") == 0x050C5D7E  # FNV-1, not FNV-1a (0xE40C292C)
    assert safe_encode("0123456789") == "456789bcdf"
    assert history_hash(b"x", 0) != history_hash(b"x", 1)


def test_revision_data_is_the_template_replaced_whole() -> None:
    data = revision_data(model())
    assert data["spec"]["template"]["$patch"] == "replace"
    assert "deploymentTemplate" in data["spec"]["template"]


def test_only_the_template_is_versioned() -> None:
    assert revision_name(model(), 0) == revision_name(model(replicas=7, revisionHistoryLimit=3), 0)
    assert revision_name(model(), 0) != revision_name(model("nginx:2"), 0)
    name, digest = revision_name(model(), 0)
    assert name == f"web-{digest}" and set(digest) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_new_template_creates_the_next_revision_with_template_labels() -> None:
    old = model("v1")
    result = plan_revisions(model("v2"), [stored(old, 1)])
    assert [r["revision"] for r in result.create] == [2]
    assert result.create[0]["metadata"]["labels"]["app"] == "web"
    assert (
        result.create[0]["metadata"]["labels"]["controller.kubernetes.io/hash"]
        == result.updated.split("-", 1)[1]
    )
    assert result.current == result.updated  # no stored currentRevision


def test_equal_newest_is_reused_and_equal_older_is_renumbered() -> None:
    v1, v2 = model("v1"), model("v2")
    history = [stored(v1, 1), stored(v2, 2)]
    same = plan_revisions(v2, history)
    assert (same.create, same.update, same.updated) == ((), (), revision_name(v2, 0)[0])
    back = plan_revisions(v1, history)
    assert back.create == () and [r["revision"] for r in back.update] == [3]
    assert back.updated == revision_name(v1, 0)[0]


def test_name_collision_with_other_data_bumps_the_collision_count() -> None:
    ud = model("v2")
    clash = stored(model("v1"), 1, name=revision_name(ud, 0)[0])
    result = plan_revisions(ud, [clash])
    assert result.collision_count == 1 and result.updated == revision_name(ud, 1)[0]


def test_cleanup_keeps_live_revisions_and_the_limit() -> None:
    versions = [model(f"v{i}") for i in range(5)]
    history = [stored(v, i + 1) for i, v in enumerate(versions)]
    obj = copy.deepcopy(versions[4].raw)
    obj["spec"]["revisionHistoryLimit"] = 2
    obj["status"] = {"currentRevision": revision_name(versions[0], 0)[0]}
    result = plan_revisions(UnitedDeployment.from_object(obj), history)
    deleted = [r["metadata"]["name"] for r in result.delete]
    assert deleted == [revision_name(versions[1], 0)[0], revision_name(versions[2], 0)[0]]
    assert result.current == revision_name(versions[0], 0)[0]
