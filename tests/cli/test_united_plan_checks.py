"""`spreadgate united plan` asks what the controller asks before planning (issues 24 and 25).

Issue 25: on the playground an Adaptive UnitedDeployment with no fitting node showed DESIRED 6
CURRENT 0 with every condition True, while `united plan` over the same snapshot printed 4/2. The
offline plan now applies the controller's node fit when the snapshot holds nodes (and says when it
holds none), and reports the replicas that fit nowhere in the `ReplicasAllocated` condition. Issue
24: a subset patch off the allowlist refuses the plan, as it stops the controller.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.kube_objects import container_spec, united_deployment
from py_engine.cli import main

pytestmark = pytest.mark.timeout(60)

NOW = "2026-06-01T12:00:00Z"
POOL = "node.spreadgate.dev/pool"


def _term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": POOL, "operator": "In", "values": [pool]}]}


def _ud(patch: dict[str, Any] | None = None, adaptive: bool = True) -> dict[str, Any]:
    subsets: list[dict[str, Any]] = [
        {"name": "a", "maxReplicas": 4, "nodeSelectorTerm": _term("a")},
        {"name": "b", "nodeSelectorTerm": _term("b")},
    ]
    if patch is not None:
        subsets[0]["patch"] = patch
    topology: dict[str, Any] = {"subsets": subsets}
    if adaptive:
        topology["scheduleStrategy"] = {"type": "Adaptive"}
    pod_spec = container_spec("main", "nginx:1")
    pod_spec["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    ud = united_deployment("web", [], replicas=6, pod_spec=pod_spec, uid="u1", generation=1)
    ud["spec"]["topology"] = topology
    return ud


def _node(name: str, pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {POOL: pool}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], items: list[dict[str, Any]], *extra: str
) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    code = main(["united", "plan", "--state", str(path), "--now", NOW, "-o", "json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_no_fitting_node_offline_gives_what_the_controller_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, err = _plan(tmp_path, capsys, [_ud(), _node("c-1", "c")])
    assert code == 0, err
    assert {n: s["replicas"] for n, s in report["subsets"].items()} == {"a": 0, "b": 0}
    assert report["nodeFit"]["checked"] is True and report["nodeFit"]["noNodeFit"] == ["a", "b"]
    assert report["nodeFit"]["unplaced"] == 6
    allocated = next(c for c in report["status"]["conditions"] if c["type"] == "ReplicasAllocated")
    assert allocated["status"] == "False" and allocated["reason"] == "NoFittingNode"
    assert allocated["message"] == "6 of 6 replicas cannot be placed: no node fits a pod of subsets a, b"


def test_a_subset_without_a_node_passes_its_share_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, _ = _plan(tmp_path, capsys, [_ud(), _node("b-1", "b")])
    assert code == 0
    assert {n: s["replicas"] for n, s in report["subsets"].items()} == {"a": 0, "b": 6}
    assert report["nodeFit"]["noNodeFit"] == ["a"] and report["nodeFit"]["unplaced"] == 0
    assert "ReplicasAllocated" not in {c["type"] for c in report["status"]["conditions"]}


def test_a_snapshot_without_nodes_says_node_fit_was_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, _ = _plan(tmp_path, capsys, [_ud()])
    assert code == 0
    assert report["nodeFit"]["checked"] is False and "holds no nodes" in report["nodeFit"]["note"]
    assert {n: s["replicas"] for n, s in report["subsets"].items()} == {"a": 4, "b": 2}


def test_the_table_names_the_node_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [_ud(), _node("c-1", "c")]}))
    assert main(["united", "plan", "--state", str(path), "--now", NOW]) == 0
    assert "node fit: checked against 1 nodes; no node fits a pod of a, b" in capsys.readouterr().out


def test_a_patch_off_the_allowlist_refuses_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forbidden = {"spec": {"serviceAccountName": "admin-sa"}}
    code, report, err = _plan(tmp_path, capsys, [_ud(forbidden, adaptive=False)])
    assert code == 1 and report["create"] == [] and "serviceAccountName" in err
    code, report, err = _plan(
        tmp_path, capsys, [_ud(forbidden, adaptive=False)], "--allow-patch-field", "spec.serviceAccountName"
    )
    assert code == 0, err
