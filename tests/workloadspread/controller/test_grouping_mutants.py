"""Grouping pods into subsets and adopting the unannotated ones (docs/design-workloadspread.md §2.5.1).

Quotas: a subset's quota is its cap minus the pods already annotated into it (this spread's
annotation only), minus the pods adopted into it earlier in the same pass; a subset with
quota left scores one point more, so ties go to the subset with room.
"""

from __future__ import annotations

from typing import Any

from mutant_support import MATCHED, spread_view

from py_engine.model.workloadspread import WorkloadSpread
from py_engine.workloadspread.controller.grouping import Adoption, group_pods

NODES = {"n1": {"metadata": {"name": "n1", "labels": {"zone": "z"}}}}


def spread(subsets: list[dict[str, Any]]) -> WorkloadSpread:
    return spread_view(subsets)


def pod(
    name: str, *, matched: str | None = None, node: str | None = "n1", hash_: str = "h1"
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {"pod-template-hash": hash_}}
    if matched is not None:
        meta["annotations"] = {MATCHED: matched}
    spec: dict[str, Any] = {"nodeName": node} if node else {}
    return {"metadata": meta, "spec": spec}


def ours(subset: str) -> str:
    return f'{{"name":"ws","subset":"{subset}"}}'


def test_a_full_subset_loses_the_tie_to_one_with_room() -> None:
    ws = spread([{"name": "a", "maxReplicas": 1}, {"name": "b"}])
    grouping = group_pods(ws, [pod("old", matched=ours("a")), pod("new")], NODES, 10, versioned=False)
    assert grouping.subset_of == {"old": "a", "new": "b"}


def test_only_this_spreads_pods_use_up_the_quota() -> None:
    ws = spread([{"name": "a", "maxReplicas": 1}, {"name": "b"}])
    other = '{"name":"other","subset":"a"}'
    grouping = group_pods(ws, [pod("foreign", matched=other), pod("new")], NODES, 10, versioned=False)
    # the foreign pod is adopted first (a has room), so the next one goes to b
    assert grouping.subset_of == {"foreign": "a", "new": "b"}
    grouping = group_pods(ws, [pod("new")], NODES, 10, versioned=False)
    assert grouping.subset_of == {"new": "a"}


def test_each_annotated_pod_uses_one_place_of_the_quota() -> None:
    ws = spread([{"name": "a", "maxReplicas": 2}, {"name": "b"}])
    grouping = group_pods(ws, [pod("old", matched=ours("a")), pod("new")], NODES, 10, versioned=False)
    assert grouping.subset_of == {"old": "a", "new": "a"}
    grouping = group_pods(
        ws,
        [pod("old1", matched=ours("a")), pod("old2", matched=ours("a")), pod("new")],
        NODES,
        10,
        versioned=False,
    )
    assert grouping.subset_of["new"] == "b"


def test_each_adopted_pod_uses_one_place_of_the_quota() -> None:
    ws = spread([{"name": "a", "maxReplicas": 1}, {"name": "b"}])
    grouping = group_pods(ws, [pod("p1"), pod("p2")], NODES, 10, versioned=False)
    assert grouping.subset_of == {"p1": "a", "p2": "b"}
    ws2 = spread([{"name": "a", "maxReplicas": 2}, {"name": "b"}])
    grouping = group_pods(ws2, [pod("p1"), pod("p2"), pod("p3")], NODES, 10, versioned=False)
    assert grouping.subset_of == {"p1": "a", "p2": "a", "p3": "b"}


def test_adoptions_name_their_subset_and_the_listed_pods_carry_the_patch() -> None:
    ws = spread([{"name": "a"}])
    grouping = group_pods(ws, [pod("p1"), pod("p2", matched=ours("a"))], NODES, 10, versioned=False)
    assert grouping.adoptions == [Adoption("p1", "a", {"metadata": {"annotations": {MATCHED: ours("a")}}})]
    assert [p["metadata"]["annotations"][MATCHED] for p in grouping.pods] == [ours("a"), ours("a")]
    assert grouping.aggregate("a") == grouping.pods


def test_pods_are_bucketed_by_their_template_hash_when_versioned() -> None:
    ws = spread([{"name": "a"}])
    pods = [pod("p1", matched=ours("a"), hash_="h1"), pod("p2", matched=ours("a"), hash_="h2")]
    grouping = group_pods(ws, pods, NODES, 10, versioned=True)
    assert grouping.version_of == {"p1": "h1", "p2": "h2"}
    assert sorted(grouping.buckets) == ["h1", "h2"]


def test_a_pod_with_a_malformed_spec_falls_in_no_subset() -> None:
    ws = spread([{"name": "a"}])
    broken: dict[str, Any] = {"metadata": {"name": "p1"}, "spec": None}
    listed: dict[str, Any] = {"metadata": {"name": "p2"}, "spec": ["x"]}
    grouping = group_pods(ws, [broken, listed], NODES, 10, versioned=False)
    assert grouping.subset_of == {"p1": None, "p2": None}
    assert grouping.adoptions == []
