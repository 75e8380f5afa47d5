"""Pod facts shared by the webhook and the controller."""

from __future__ import annotations

import json
from typing import Any

import pytest

from py_engine.model.pods import MatchedSpread, controller_owner, is_pod_active, matched_spread, pod_version


def pod(
    annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"metadata": {"name": "p", "annotations": annotations or {}, "labels": labels or {}, **extra}}


def test_annotation_round_trip_and_key_order() -> None:
    matched = MatchedSpread("ws", "a", "1234")
    assert matched.to_annotation() == '{"name":"ws","subset":"a","uid":"1234"}'
    assert MatchedSpread("ws", "a").to_annotation() == '{"name":"ws","subset":"a"}'
    assert matched_spread(pod({"spreadgate.dev/matched-workloadspread": matched.to_annotation()})) == matched


def test_kruise_key_and_capitalised_json_keys_are_read() -> None:
    value = json.dumps({"Name": "ws", "Subset": "b"})
    assert matched_spread(pod({"apps.kruise.io/matched-workloadspread": value})) == MatchedSpread("ws", "b")


def test_spreadgate_key_wins_over_kruise_key() -> None:
    annotations = {
        "spreadgate.dev/matched-workloadspread": '{"name":"ours","subset":"a"}',
        "apps.kruise.io/matched-workloadspread": '{"name":"theirs","subset":"b"}',
    }
    assert matched_spread(pod(annotations)) == MatchedSpread("ours", "a")


@pytest.mark.parametrize("raw", ["not json", "[1]", '{"name": 5, "subset": "a"}', '{"subset": "a"}'])
def test_unparsable_annotations_are_none(raw: str) -> None:
    assert matched_spread(pod({"spreadgate.dev/matched-workloadspread": raw})) is None
    assert matched_spread({"metadata": None}) is None


def test_versions() -> None:
    assert pod_version(pod(labels={"pod-template-hash": "abc"}), versioned=True) == "abc"
    assert pod_version(pod(labels={"controller-revision-hash": "web-7d9f"}), versioned=True) == "7d9f"
    assert pod_version(pod(labels={"pod-template-hash": "abc"}), versioned=False) == "versionIgnored"
    assert pod_version(pod(), versioned=True) == "versionIgnored"


def test_activity_and_owner() -> None:
    assert is_pod_active(pod())
    assert not is_pod_active(pod(deletionTimestamp="2024-01-01T00:00:00Z"))
    assert not is_pod_active({"metadata": {}, "status": {"phase": "Succeeded"}})
    owned = pod(
        ownerReferences=[
            {"kind": "X", "controller": False},
            {"kind": "ReplicaSet", "name": "rs", "controller": True},
        ]
    )
    assert controller_owner(owned) == {"kind": "ReplicaSet", "name": "rs", "controller": True}
    assert controller_owner(pod()) is None


def test_a_failed_pod_is_inactive_and_odd_metadata_has_no_owner() -> None:
    assert not is_pod_active({"metadata": {}, "status": {"phase": "Failed"}})
    assert is_pod_active({"metadata": {}, "status": {"phase": "Running"}}) and is_pod_active({})
    assert controller_owner({"metadata": "x"}) is None and controller_owner({}) is None
    assert controller_owner({"metadata": {"ownerReferences": "x"}}) is None


def test_the_version_of_odd_labels() -> None:
    def versioned(labels: Any) -> str:
        return pod_version({"metadata": {"labels": labels}}, versioned=True)

    assert versioned({"pod-template-hash": "", "controller-revision-hash": "web-app-7d9f"}) == "7d9f"
    assert versioned({"controller-revision-hash": "abc"}) == "abc"
    assert (
        versioned({"controller-revision-hash": ""}) == versioned({"pod-template-hash": 5}) == "versionIgnored"
    )
    assert versioned("x") == "versionIgnored"
    assert pod_version({"metadata": "x"}, versioned=True) == "versionIgnored"


def test_an_annotation_with_a_uid_that_is_not_a_string_is_unreadable() -> None:
    bad_uid = json.dumps({"name": "ws", "subset": "a", "uid": 5})
    assert matched_spread(pod({"spreadgate.dev/matched-workloadspread": bad_uid})) is None
