"""The owner-indexed `PodList` lists exactly what the per-spread scan lists, in the same order."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.workloadspread.controller.podlisting import PodList, _owned_by, owner_uids

OWNERS = ["u1", "u2", "u3", "u4"]


def pod(index: int, owners: list[str]) -> dict[str, Any]:
    return {"metadata": {"name": f"p{index}", "ownerReferences": [{"uid": u, "kind": "ReplicaSet"} for u in owners]}}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(OWNERS), max_size=3), max_size=40),
       st.sets(st.sampled_from([*OWNERS, "absent"]), max_size=3))
def test_index_equals_the_scan_in_list_order(owner_lists: list[list[str]], uids: set[str]) -> None:
    pods = [pod(i, owners) for i, owners in enumerate(owner_lists)]
    scanned = [p for p in pods if owner_uids(p) & uids]
    indexed = PodList(pods)
    assert _owned_by(indexed, uids) == scanned
    assert _owned_by(indexed, uids) == scanned  # the second lookup reuses the index
    assert _owned_by(pods, uids) == scanned  # a plain list still scans


def test_a_pod_with_two_references_to_the_same_owner_is_listed_once() -> None:
    pods = PodList([pod(0, ["u1", "u1"]), pod(1, ["u2"]), pod(2, ["u1", "u2"])])
    assert [p["metadata"]["name"] for p in pods.owned_by({"u1", "u2"})] == ["p0", "p1", "p2"]
    assert [p["metadata"]["name"] for p in pods.owned_by({"u1"})] == ["p0", "p2"]


def test_malformed_references_are_ignored_like_the_scan() -> None:
    rng = random.Random(3)
    odd: list[Any] = [None, "x", {"uid": ""}, {"name": "n"}, {"uid": "u1"}]
    pods = [{"metadata": {"name": f"p{i}", "ownerReferences": [rng.choice(odd)]}} for i in range(30)]
    pods.append({"metadata": {"name": "q", "ownerReferences": "not-a-list"}})
    assert PodList(pods).owned_by({"u1"}) == [p for p in pods if owner_uids(p) & {"u1"}]
