"""`PodOwners` narrows which pods `ownership.owns_pod` is asked about (issue 28): it must find
exactly the pods a scan of every pod finds, and ask only about a workload's own candidates.

The oracle is the scan itself (`owns_pod` over every pod, the decider the index must agree
with), over generated snapshots that mix every way a pod can name its controller: by uid, by
name without a uid, through a ReplicaSet (hashed or not, names with many dashes), or by labels
alone, in two namespaces.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.uniteddeployment.controller import podowners
from py_engine.uniteddeployment.controller.ownership import owns_pod
from py_engine.uniteddeployment.controller.podowners import PodOwners, pods_of

pytestmark = pytest.mark.timeout(120)

JSON = dict[str, Any]
NAMES = ["web", "web-a", "web-a-b", "api", ""]
NAMESPACES = ["default", "other"]


def workload(kind: str, name: str | int | None, namespace: str, uid: str | None, match: JSON | None) -> JSON:
    meta: JSON = {"name": name, "namespace": namespace}
    if uid is not None:
        meta["uid"] = uid
    group = "apps/v1" if kind in ("Deployment", "StatefulSet") else "apps.kruise.io/v1alpha1"
    return {"apiVersion": group, "kind": kind, "metadata": meta, "spec": {"selector": match or {}}}


def pod(name: str, namespace: str, ref: JSON | None, labels: dict[str, Any]) -> JSON:
    meta: JSON = {"name": name, "namespace": namespace, "labels": labels}
    if ref is not None:
        meta["ownerReferences"] = [{**ref, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


refs = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["apps/v1", "apps.kruise.io/v1alpha1"]),
            "kind": st.sampled_from(["ReplicaSet", "Deployment", "StatefulSet", "CloneSet"]),
            "name": st.sampled_from([*NAMES, "web-5d8f", "web-a-5d8f", "-5d8f", "web-a-b-x-y", None, 5]),
        },
        optional={"uid": st.sampled_from(["u1", "u2", "", "u3"])},
    ),
)
label_sets = st.dictionaries(
    st.sampled_from(["app", "tier", "pod-template-hash"]),
    st.one_of(st.sampled_from(["web", "db", "5d8f", "x"]), st.integers(0, 2)),
    max_size=3,
)
pods_strategy = st.lists(
    st.builds(pod, st.sampled_from(["p1", "p2"]), st.sampled_from(NAMESPACES), refs, label_sets),
    max_size=25,
)
selectors = st.one_of(
    st.none(),
    st.fixed_dictionaries({"matchLabels": label_sets}),
    st.just({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}),
    st.just({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
)
workloads_strategy = st.builds(
    workload,
    st.sampled_from(["Deployment", "StatefulSet", "CloneSet"]),
    st.sampled_from([*NAMES, None, 5]),
    st.sampled_from(NAMESPACES),
    st.sampled_from([None, "", "u1", "u2"]),
    selectors,
)


@settings(max_examples=400, deadline=None)
@given(pods=pods_strategy, workloads=st.lists(workloads_strategy, min_size=1, max_size=4))
def test_the_index_finds_exactly_what_a_scan_of_every_pod_finds(
    pods: list[JSON], workloads: list[JSON]
) -> None:
    index = PodOwners(pods)
    for owner in workloads:
        assert index.of(owner) == tuple(p for p in pods if owns_pod(owner, p))


def test_the_cases_that_need_care() -> None:
    deployment = workload("Deployment", "web", "default", "u-web", {"matchLabels": {"app": "web"}})
    hashed = pod("h", "default", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f"}, {})
    hashed["metadata"]["labels"] = {"pod-template-hash": "5d8f"}
    unhashed = pod("u", "default", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-77"}, {})
    longer = pod("l", "default", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-a-77"}, {})
    by_uid = pod(
        "i", "default", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "u-web"}, {}
    )
    ownerless = pod("o", "default", None, {"app": "web"})
    elsewhere = pod("e", "other", None, {"app": "web"})
    everything = [hashed, unhashed, longer, by_uid, ownerless, elsewhere]
    assert [p["metadata"]["name"] for p in pods_of(deployment, everything)] == ["h", "u", "i", "o"]
    nameless = workload("Deployment", "", "default", None, None)
    dashed = pod("d", "default", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "-77"}, {})
    assert pods_of(nameless, [dashed, unhashed]) == (dashed,)
    numbered = workload("StatefulSet", 5, "default", None, None)  # names compared as they are
    by_number = pod("n", "default", {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": 5}, {})
    unnamed = workload("StatefulSet", None, "default", None, None)
    no_name = pod("x", "default", {"apiVersion": "apps/v1", "kind": "StatefulSet"}, {})
    assert pods_of(numbered, [by_number, no_name]) == (by_number,)
    assert pods_of(unnamed, [by_number, no_name]) == (no_name,)


def test_a_workload_is_asked_only_about_its_own_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five subset Deployments of 40 pods each, their pods controlled through ReplicaSets or
    ownerless: deciding one workload's pods asks the owner test about its 40, not all 200."""
    asked: list[str] = []
    decide = podowners.pod_owner_test

    def counting(owner: JSON) -> Any:
        owns = decide(owner)

        def counted(candidate: JSON) -> bool:
            asked.append(candidate["metadata"]["name"])
            return owns(candidate)

        return counted

    monkeypatch.setattr(podowners, "pod_owner_test", counting)
    subsets = [f"web-s{s}" for s in range(5)]
    pods = []
    for name in subsets:
        for i in range(20):
            rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{name}-5d8f", "uid": f"rs-{name}"}
            pods.append(pod(f"{name}-5d8f-{i}", "default", rs, {"app": "web", "subset": name}))
            pods.append(pod(f"{name}-orphan-{i}", "default", None, {"app": "web", "subset": name}))
    index = PodOwners(pods)
    owner = workload(
        "Deployment", "web-s2", "default", "u2", {"matchLabels": {"app": "web", "subset": "web-s2"}}
    )
    found = index.of(owner)
    assert len(found) == 40 and len(asked) == 40
    assert all(name.startswith("web-s2-") for name in asked)
