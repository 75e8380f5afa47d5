"""The UnitedDeployment reproductions of issue 25, one test each, against OpenKruise's answer.

Each folder of `tests/uniteddeployment/controller/repros/` holds a snapshot (`state.json`) a
comparison with a model of Kruise's controller (commit 07169cf) disagreed on, and Kruise's
answer (`expected.json`):
replicas and partitions per subset, the subset's `Schedulable` condition (status, reason, and
whether it transitions in this sync), the status totals, reserved pods, pod relabels, the
workloads created, updated and deleted, and a refusal. The sync runs at `NOW`. The values are
asserted here; `expected.json` is compared as a whole as well, so the copy and the test agree.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from py_engine.semantics.timeutil import format_time, parse_time
from py_engine.uniteddeployment.controller.plan import Plan, plan
from py_engine.uniteddeployment.controller.state import state_from_objects

REPROS = Path(__file__).parent / "repros"
NOW = parse_time("2024-06-01T12:00:00Z")
RESERVED = "spreadgate.dev/united-deployment-reserved-pod"


def load(name: str, file: str = "state.json") -> list[dict[str, Any]]:
    return list(json.loads((REPROS / name / file).read_text())["items"])


def expected(name: str) -> dict[str, Any]:
    return dict(json.loads((REPROS / name / "expected.json").read_text()))


def run(name: str, file: str = "state.json", now: datetime = NOW) -> Plan:
    return plan(state_from_objects(load(name, file)), now)


def _subset(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["labels"]["spreadgate.dev/subset-name"])


def summary(result: Plan) -> dict[str, Any]:
    """The plan in the terms of `expected.json`."""
    status = result.status
    entries = {e["name"]: e for e in status.get("subsetStatuses") or []}
    schedulable: dict[str, Any] = {}
    for name in result.subsets:
        conditions = entries.get(name, {}).get("conditions") or []
        found = next((c for c in conditions if c["type"] == "Schedulable"), None)
        schedulable[name] = (
            None
            if found is None
            else [found["status"], found["reason"], found["lastTransitionTime"] == format_time(NOW)]
        )
    workloads = [o for o in result.update if o["kind"] not in ("Pod", "ControllerRevision")]
    return {
        "replicas": {n: s.replicas for n, s in result.subsets.items()},
        "partitions": {n: s.partition for n, s in result.subsets.items()},
        "schedulable": schedulable,
        "totals": {
            k: status.get(k, 0) for k in ("replicas", "readyReplicas", "updatedReplicas", "reservedPods")
        },
        "reservedPods": {n: entries[n].get("reservedPods", 0) for n in result.subsets},
        "relabel": {
            o["metadata"]["name"]: o["metadata"]["labels"][RESERVED]
            for o in result.update
            if o["kind"] == "Pod"
        },
        "creates": sorted(_subset(o) for o in result.create if o["kind"] != "ControllerRevision"),
        "updates": sorted(_subset(o) for o in workloads),
        "deletes": sorted(o["metadata"]["name"] for o in result.delete),
        "updated_rev": status.get("updatedRevision"),
    }


def assert_matches_kruise(name: str, got: dict[str, Any]) -> None:
    want = expected(name)
    for key in (
        "replicas",
        "partitions",
        "schedulable",
        "totals",
        "reservedPods",
        "relabel",
        "creates",
        "updated_rev",
    ):
        assert got[key] == want[key], key
    # Kruise's fifth trigger (still rolling) only re-runs PostUpdate: an idempotent write Spreadgate skips.
    assert got["updates"] == sorted(set(want["updates"]) - set(want["progress_only"]))
    duplicates = [name for group in want["dup_groups"] for name in group[1:]]
    assert got["deletes"] == sorted([*want["deletes"], *duplicates])


def test_cloneset_partitions_are_read_where_v1beta1_keeps_them() -> None:
    """Stored v1beta1 CloneSets hold `rollingUpdate.partition`: read there, nothing to rewrite."""
    result = run("ud-cloneset-partition", "state-v1beta1-stored.json")
    assert result.errors == () and not result.refused
    assert {n: (s.replicas, s.partition) for n, s in result.subsets.items()} == {"a": (2, 1), "b": (4, 0)}
    assert result.update == () and result.create == () and result.delete == ()


def test_cloneset_partitions_are_written_where_v1beta1_keeps_them() -> None:
    result = run("ud-cloneset-partition", "ud-only.json")
    created = {_subset(o): o for o in result.create if o["kind"] == "CloneSet"}
    assert {n: o["apiVersion"] for n, o in created.items()} == {
        "a": "apps.kruise.io/v1beta1",
        "b": "apps.kruise.io/v1beta1",
    }
    assert {n: o["spec"]["updateStrategy"] for n, o in created.items()} == {
        "a": {"rollingUpdate": {"partition": 1}},
        "b": {"rollingUpdate": {"partition": 0}},
    }


def test_a_duplicate_workloads_pods_are_not_counted_for_the_kept_one() -> None:
    """r2-a-y duplicates subset a; its reserved pending pod is its own, not r2-a-x's."""
    got = summary(run("ud-duplicate-pods"))
    assert got["replicas"] == {"a": 4}
    assert got["schedulable"] == {"a": ["True", "reschedule", True]}
    assert got["reservedPods"] == {"a": 0}
    assert got["totals"] == {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2, "reservedPods": 0}
    assert got["deletes"] == ["r2-a-y"] and got["updates"] == ["a"]
    assert_matches_kruise("ud-duplicate-pods", got)


def test_a_refused_allocation_still_deletes_duplicates() -> None:
    result = run("ud-refusal-writes")
    assert result.refused
    assert result.errors == (
        "Specified subset replicas is ineffective: specified subsets' replica (3) is "
        "greater than UnitedDeployment replica (2)",
    )
    assert [o["metadata"]["name"] for o in result.delete] == ["r5-a-y"]
    assert result.create == () and result.update == () and not result.status_changed
    assert expected("ud-refusal-writes")["refused"] in result.errors[0]


def test_a_terminating_reserved_pod_still_counts_as_reserved() -> None:
    """Kruise keeps counting a reserved-labelled pod until it is gone: b gets a substitute."""
    got = summary(run("ud-inactive-reserved"))
    assert got["replicas"] == {"a": 2, "b": 1}
    assert got["schedulable"]["a"] == ["False", "reschedule", True]
    assert got["reservedPods"] == {"a": 1, "b": 0}
    assert got["totals"] == {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "reservedPods": 1}
    assert got["relabel"] == {}
    assert_matches_kruise("ud-inactive-reserved", got)


def test_max_unavailable_is_not_a_reason_to_update() -> None:
    """Subset a is unschedulable with the right size: Kruise leaves its workload alone."""
    got = summary(run("ud-maxunavailable-eager"))
    assert got["updates"] == [] and got["creates"] == ["b"]
    assert got["schedulable"]["a"] == ["False", "reschedule", False]  # unchanged: the stored time stays
    assert_matches_kruise("ud-maxunavailable-eager", got)


def test_a_subset_condition_whose_reason_changes_transitions_now() -> None:
    """Stored False/created at 11:50; this sync False/reschedule: a new transition time."""
    result = run("ud-condition-ltt")
    got = summary(result)
    assert got["schedulable"]["a"] == ["False", "reschedule", True]
    entry = next(e for e in result.status["subsetStatuses"] if e["name"] == "a")
    assert entry["conditions"][0]["lastTransitionTime"] == "2024-06-01T12:00:00Z"
    assert_matches_kruise("ud-condition-ltt", got)


def test_old_revision_pods_time_out_from_the_updated_condition_whatever_its_status() -> None:
    """UnitedDeploymentUpdated has been True since 11:58; a pod on another revision is reserved
    30 s (rescheduleCriticalSeconds) later, as in Kruise."""
    got = summary(run("ud-update-timeout-condition-true"))
    assert got["relabel"] == {"r6-a-x-1": "true"}
    assert got["replicas"] == {"a": 2, "b": 1}
    assert got["reservedPods"] == {"a": 1, "b": 0}
    assert_matches_kruise("ud-update-timeout-condition-true", got)


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in REPROS.iterdir()
        if (p / "expected.json").exists() and expected(p.name).get("refused") is None
    ),
)
def test_every_reproduction_matches_kruise(name: str) -> None:
    assert_matches_kruise(name, summary(run(name)))
