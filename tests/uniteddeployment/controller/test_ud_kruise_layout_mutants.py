"""Kruise's CloneSet layouts at v1alpha1 and v1beta1: what mutation testing (run U1) found unpinned.

(The layout tests in `runtime/test_united_cloneset_layout.py` are left out of the package's
mutation runs, which skip `runtime/`.) The expected objects are written out literally from
Kruise's conversion rule: v1beta1 keeps `partition`, `maxUnavailable`, `maxSurge`, `paused`,
`priorityStrategy`, `scatterStrategy` and `inPlaceUpdateStrategy` in
`updateStrategy.rollingUpdate`, with `type: RollingUpdate|OnDelete` and the pod update policy
(`ReCreate`, `InPlaceIfPossible`, `InPlaceOnly`) in `rollingUpdate.podUpdatePolicy`; v1alpha1
keeps those knobs directly in `updateStrategy`, whose `type` is the policy (or `OnDelete`); the
PVC flag is `scaleStrategy.enablePVCReuse` at v1beta1 and its negation `disablePVCReuse` at
v1alpha1. Results never share nested values with their input.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.uniteddeployment.controller.kruise_layout import (
    convert_spec,
    is_cloneset,
    rolling_update,
    to_version,
    version_of,
)

pytestmark = pytest.mark.timeout(30)

ALPHA_GV = "apps.kruise.io/v1alpha1"
BETA_GV = "apps.kruise.io/v1beta1"


@pytest.mark.parametrize(
    ("api_version", "version"),
    [
        (ALPHA_GV, "v1alpha1"),
        (BETA_GV, "v1beta1"),
        ("v1alpha1", "v1alpha1"),  # a bare version: the part after the last slash is the whole text
        ("a/b/v1alpha1", "v1alpha1"),
        ("v1alpha1/x", "v1beta1"),
        (None, "v1beta1"),
        (7, "v1beta1"),
    ],
)
def test_the_version_is_read_after_the_last_slash(api_version: Any, version: str) -> None:
    obj = {"kind": "CloneSet"} if api_version is None else {"kind": "CloneSet", "apiVersion": api_version}
    assert version_of(obj) == version


def test_rolling_update_is_the_strategy_itself_at_v1alpha1() -> None:
    strategy = {"type": "InPlaceIfPossible", "partition": 2, "rollingUpdate": {"partition": 9}}
    assert rolling_update({"apiVersion": ALPHA_GV, "spec": {"updateStrategy": strategy}}) == strategy
    assert rolling_update({"apiVersion": BETA_GV, "spec": {"updateStrategy": strategy}}) == {"partition": 9}


def knobs() -> dict[str, Any]:
    """The rolling-update knobs (but `partition`) of the strategies below, fresh at each call."""
    return {
        "maxUnavailable": "10%",
        "maxSurge": 2,
        "paused": True,
        "priorityStrategy": {"weightPriority": [{"weight": 5}]},
        "scatterStrategy": [{"key": "zone", "value": "a"}],
        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
    }


BETA_STRATEGY: dict[str, Any] = {
    "type": "RollingUpdate",
    "extra": {"kept": [1]},
    "rollingUpdate": {
        "podUpdatePolicy": "InPlaceOnly",
        "partition": 1,
        **knobs(),
        "notAKnob": "dropped",
    },
}
ALPHA_STRATEGY: dict[str, Any] = {
    "extra": {"kept": [1]},
    "partition": 1,
    **knobs(),
    "type": "InPlaceOnly",
}


def test_a_v1beta1_strategy_moves_every_knob_to_the_top_at_v1alpha1() -> None:
    before = copy.deepcopy(BETA_STRATEGY)
    spec = {"replicas": 3, "updateStrategy": BETA_STRATEGY}
    out = convert_spec(spec, "v1alpha1")
    assert out == {"replicas": 3, "updateStrategy": ALPHA_STRATEGY}
    assert before == BETA_STRATEGY
    strategy = out["updateStrategy"]
    for key in ("extra", "priorityStrategy", "scatterStrategy", "inPlaceUpdateStrategy"):
        nested = BETA_STRATEGY.get(key, BETA_STRATEGY["rollingUpdate"].get(key))
        assert strategy[key] is not nested
    strategy["extra"]["kept"].append(2)
    strategy["inPlaceUpdateStrategy"]["gracePeriodSeconds"] = 0
    strategy["priorityStrategy"]["weightPriority"].append({"weight": 1})
    assert before == BETA_STRATEGY


def test_a_v1alpha1_strategy_moves_every_knob_into_rolling_update_at_v1beta1() -> None:
    alpha = {**copy.deepcopy(ALPHA_STRATEGY), "rollingUpdate": {"partition": 9, "other": {"deep": [1]}}}
    before = copy.deepcopy(alpha)
    out = convert_spec({"updateStrategy": alpha}, "v1beta1")
    assert out == {
        "updateStrategy": {
            "extra": {"kept": [1]},
            "type": "RollingUpdate",
            "rollingUpdate": {
                "partition": 1,  # the top-level knob wins over the one already in rollingUpdate
                "other": {"deep": [1]},
                **knobs(),
                "podUpdatePolicy": "InPlaceOnly",
            },
        }
    }
    strategy = out["updateStrategy"]
    strategy["extra"]["kept"].append(2)
    strategy["rollingUpdate"]["other"]["deep"].append(2)
    strategy["rollingUpdate"]["priorityStrategy"]["weightPriority"].append({})
    assert alpha == before


@pytest.mark.parametrize(
    ("beta", "alpha"),
    [
        ({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "Bogus"}}, {"type": "ReCreate"}),
        ({"type": "RollingUpdate"}, {"type": "ReCreate"}),
        ({"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}, {"type": "InPlaceIfPossible"}),
        ({"rollingUpdate": {"partition": 2}}, {"partition": 2}),
        (
            {"type": "OnDelete", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 2}},
            {"type": "OnDelete", "partition": 2},
        ),
        ({"type": "InPlaceOnly", "partition": 3}, {"type": "InPlaceOnly", "partition": 3}),
        ({}, {}),
    ],
)
def test_the_v1alpha1_type_is_the_pod_update_policy_or_the_type_given(
    beta: dict[str, Any], alpha: dict[str, Any]
) -> None:
    assert convert_spec({"updateStrategy": beta}, "v1alpha1") == {"updateStrategy": alpha}


@pytest.mark.parametrize(
    ("alpha", "beta"),
    [
        ({"type": "ReCreate"}, {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate"}}),
        ({"type": "OnDelete", "partition": 1}, {"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
        ({"type": "RollingUpdate"}, {"type": "RollingUpdate"}),
        (
            {"type": "OnDelete", "rollingUpdate": {}},
            {"type": "OnDelete"},
        ),  # nothing to roll: no rollingUpdate
        ({}, {}),
    ],
)
def test_the_v1beta1_type_is_rolling_update_for_a_pod_update_policy(
    alpha: dict[str, Any], beta: dict[str, Any]
) -> None:
    assert convert_spec({"updateStrategy": alpha}, "v1beta1") == {"updateStrategy": beta}


ENABLE, DISABLE = "enablePVCReuse", "disablePVCReuse"
"""v1beta1's name of the PVC reuse flag, and v1alpha1's negated one."""


@pytest.mark.parametrize(
    ("scale", "version", "expected"),
    [
        ({ENABLE: True, "podsToDelete": ["p1"]}, "v1alpha1", {"podsToDelete": ["p1"], DISABLE: False}),
        ({ENABLE: False}, "v1alpha1", {DISABLE: True}),
        ({DISABLE: True, "maxUnavailable": 1}, "v1alpha1", {DISABLE: True, "maxUnavailable": 1}),
        ({DISABLE: True, "podsToDelete": ["p1"]}, "v1beta1", {"podsToDelete": ["p1"], ENABLE: False}),
        ({DISABLE: False}, "v1beta1", {ENABLE: True}),
        ({ENABLE: True, "maxUnavailable": 1}, "v1beta1", {ENABLE: True, "maxUnavailable": 1}),
        ({"maxUnavailable": 1}, "v1alpha1", {"maxUnavailable": 1}),
        ({"maxUnavailable": 1}, "v1beta1", {"maxUnavailable": 1}),
    ],
)
def test_the_pvc_reuse_flag_is_negated_into_the_versions_name(
    scale: dict[str, Any], version: str, expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(scale)
    out = convert_spec({"replicas": 1, "scaleStrategy": scale}, version)
    assert out == {"replicas": 1, "scaleStrategy": expected}
    if "podsToDelete" in out["scaleStrategy"]:
        out["scaleStrategy"]["podsToDelete"].append("p2")
    assert scale == before


def test_the_scale_strategy_shares_nothing_with_its_input() -> None:
    scale = {"podsToDelete": ["p1"], "extra": {"deep": [1]}}
    out = convert_spec({"scaleStrategy": scale}, "v1beta1")["scaleStrategy"]
    assert out == scale
    out["extra"]["deep"].append(2)
    assert scale == {"podsToDelete": ["p1"], "extra": {"deep": [1]}}


def test_a_spec_without_strategies_is_kept_and_odd_strategies_are_left_alone() -> None:
    assert convert_spec({"replicas": 2}, "v1alpha1") == {"replicas": 2}
    odd = {"updateStrategy": "OnDelete", "scaleStrategy": ["x"]}
    assert convert_spec(odd, "v1beta1") == odd


def test_to_version_rewrites_a_clonesets_spec_for_the_version_written() -> None:
    beta = {
        "apiVersion": BETA_GV,
        "kind": "CloneSet",
        "metadata": {"name": "web-a"},
        "spec": {
            "replicas": 2,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
            "scaleStrategy": {"enablePVCReuse": True},
        },
    }
    assert to_version(beta, ALPHA_GV) == {
        "apiVersion": ALPHA_GV,
        "kind": "CloneSet",
        "metadata": {"name": "web-a"},
        "spec": {
            "replicas": 2,
            "updateStrategy": {"type": "ReCreate", "partition": 1},
            "scaleStrategy": {"disablePVCReuse": False},
        },
    }
    assert to_version(beta, BETA_GV) == beta


def test_to_version_only_sets_the_api_version_of_anything_else() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"updateStrategy": {"type": "InPlaceOnly"}, "scaleStrategy": {"enablePVCReuse": True}},
    }
    assert to_version(deployment, "apps/v2") == {**deployment, "apiVersion": "apps/v2"}
    foreign = {**deployment, "kind": "CloneSet", "apiVersion": "example.com/v1alpha1"}
    assert to_version(foreign, "example.com/v1alpha1") == foreign
    assert to_version({"kind": "CloneSet", "spec": "x"}, ALPHA_GV) == {
        "kind": "CloneSet",
        "spec": "x",
        "apiVersion": ALPHA_GV,
    }


@pytest.mark.parametrize(
    ("api_version", "kind", "cloneset"),
    [
        (BETA_GV, "CloneSet", True),
        ("apps.kruise.io/v1/extra", "CloneSet", True),  # the group is what comes before the first slash
        ("apps/v1", "CloneSet", False),
        (BETA_GV, "StatefulSet", False),
        (None, "CloneSet", False),
    ],
)
def test_a_cloneset_is_a_kruise_group_clonesets(api_version: Any, kind: str, cloneset: bool) -> None:
    assert is_cloneset({"apiVersion": api_version, "kind": kind}) is cloneset
