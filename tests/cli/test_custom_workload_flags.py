"""`--custom-workload` on `spreadgate reconcile` and `spreadgate controller`: one flag, one parser
(py_engine/model/workloads.py), the same acceptance and the same one-line errors as the webhook's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.kube_objects import placed_pod
from py_engine.cli import main

NOW = "2024-06-01T12:00:00Z"
FLAG = "game.kruise.io/GameServerSet=spec.replicas"


def state(tmp_path: Path, *extra: dict[str, Any], cap: str = "50%") -> str:
    """A spread over a GameServerSet of 4 replicas and its three pods (two in subset a, one in b)."""
    owner = {
        "apiVersion": "game.kruise.io/v1alpha1",
        "kind": "GameServerSet",
        "name": "gss",
        "uid": "gss-uid",
        "controller": True,
    }
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "default", "generation": 1},
            "spec": {
                "targetRef": {
                    "apiVersion": "game.kruise.io/v1alpha1",
                    "kind": "GameServerSet",
                    "name": "gss",
                },
                "subsets": [{"name": "a", "maxReplicas": cap}, {"name": "b"}],
            },
        },
        {
            "apiVersion": "game.kruise.io/v1alpha1",
            "kind": "GameServerSet",
            "metadata": {"name": "gss", "namespace": "default", "uid": "gss-uid"},
            "spec": {"replicas": 4},
        },
    ]
    for name, subset in (("gss-0", "a"), ("gss-1", "a"), ("gss-2", "b")):
        pod = placed_pod(name, owner, subset, spec={"nodeName": "n1"}, status={"phase": "Running"})
        pod["metadata"]["creationTimestamp"] = NOW
        objects.append(pod)
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all([*objects, *extra]))
    return str(path)


def reconcile(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["reconcile", "--now", NOW, "-o", "json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else None, captured.err


def test_reconcile_reads_a_custom_kind_given_with_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = state(tmp_path)
    code, report, err = reconcile(capsys, "--state", path)
    assert code == 0 and report is not None, err
    assert report["targetProblem"]["reason"] == "KindNotAllowed"

    code, report, err = reconcile(capsys, "--state", path, "--custom-workload", FLAG)
    assert code == 0 and report is not None, err
    assert report["targetProblem"] is None
    subsets = {s["name"]: (s["replicas"], s["missingReplicas"]) for s in report["status"]["subsetStatuses"]}
    assert subsets == {"a": (2, 0), "b": (1, -1)}  # 50% of the 4 replicas read at spec.replicas


def test_the_flag_comes_before_the_configmap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kruise-configuration", "namespace": "kruise-system"},
        "data": {
            "WorkloadSpread_Watch_Custom_Workload_WhiteList": json.dumps(
                {"workloads": [{"Group": "game.kruise.io", "Kind": "GameServerSet", "replicasPath": ""}]}
            )
        },
    }
    path = state(tmp_path, configmap, cap="100%")
    code, report, err = reconcile(capsys, "--state", path)
    assert code == 0 and report is not None, err
    # The ConfigMap's empty replicasPath counts 0 replicas: a cap of 0, nothing missing.
    assert report["targetProblem"] is None and report["status"]["subsetStatuses"][0]["missingReplicas"] == 0
    code, report, err = reconcile(capsys, "--state", path, "--custom-workload", FLAG)
    assert code == 0 and report is not None, err
    assert report["status"]["subsetStatuses"][0]["missingReplicas"] == 2  # 100% of 4, 2 pods in a


@pytest.mark.parametrize("command", ["reconcile", "controller"])
@pytest.mark.parametrize("value", ["nonsense", "game.kruise.io/"])
def test_a_bad_flag_is_one_line_and_exit_2(
    command: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--state", state(tmp_path)] if command == "reconcile" else ["--once"]
    assert main([command, *args, "--custom-workload", value]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"spreadgate {command}: error: --custom-workload {value!r} "
        "must look like GROUP/KIND[=REPLICAS_PATH]\n"
    )


def test_a_malformed_whitelist_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kruise-configuration"},
        "data": {"WorkloadSpread_Watch_Custom_Workload_WhiteList": '{"workloads":[{"Group":"g"}]}'},
    }
    code, _, err = reconcile(capsys, "--state", state(tmp_path, configmap))
    assert code == 2
    assert err == (
        "spreadgate reconcile: error: ConfigMap kruise-configuration: "
        "WorkloadSpread_Watch_Custom_Workload_WhiteList: workloads[0] needs a string Kind\n"
    )
