"""`spreadgate reconcile` on the example snapshot and on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_kit import run_cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "manifests" / "examples" / "reconcile" / "state.yaml"
NOW = "2024-06-01T12:00:00Z"
PREFIX = "web-6d8f9c7b5-"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "reconcile", *args)


def test_json_output_of_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--state", str(EXAMPLE), "--now", NOW, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {
        "status",
        "podSubset",
        "podDeletionCost",
        "podsToDelete",
        "requeueAfterSeconds",
        "events",
        "targetProblem",
    }
    assert report["targetProblem"] is None
    subsets = {e["name"]: e for e in report["status"]["subsetStatuses"]}
    assert (subsets["on-demand"]["replicas"], subsets["on-demand"]["missingReplicas"]) == (6, 0)
    assert subsets["on-demand"]["conditions"][0]["status"] == "False"
    assert (subsets["spot"]["replicas"], subsets["spot"]["missingReplicas"]) == (2, -1)
    assert report["status"]["observedGeneration"] == 3
    assert report["podSubset"][PREFIX + "legacy"] == "spot"
    assert report["podsToDelete"] == [PREFIX + "p7g2f"]
    assert report["requeueAfterSeconds"] == 20
    costs = {name: int(value) for name, value in report["podDeletionCost"].items()}
    # Bands of the reference: on-demand kept 200, spot 100, on-demand surplus -100 (x 10^5 refined).
    assert set(sorted(costs, key=costs.__getitem__)[:2]) == {PREFIX + "p7g2f", PREFIX + "x1b5d"}
    assert all(v // 10_000_000 in (2, 1, -1) for v in costs.values())
    assert len(set(costs.values())) == len(costs) == 8


def test_table_output_of_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--state", str(EXAMPLE), "--now", NOW)
    assert code == 0
    assert "on-demand  6" in out and "spot       2" in out
    assert "adopted, cost patched" in out
    assert f"pods to delete: {PREFIX}p7g2f" in out
    assert "requeue after: 20s" in out
    assert "status: changed, would be written" in out


def test_reference_mode_in_a_kruise_snapshot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace("spreadgate.dev/v1alpha1", "apps.kruise.io/v1alpha1")
    text = text.replace("spreadgate.dev/matched-workloadspread", "apps.kruise.io/matched-workloadspread")
    text = text.replace(
        "spreadgate.dev/recovery-window-seconds: '600'", "spreadgate.dev/in-subset-spread: 'false'"
    )
    state = tmp_path / "kruise.yaml"
    state.write_text(text)
    code, out, err = run(capsys, "--state", str(state), "--now", NOW, "-o", "json")
    assert code == 0, err
    costs = json.loads(out)["podDeletionCost"]
    assert costs[PREFIX + "k2x7p"] == "200" and costs[PREFIX + "legacy"] == "100"
    assert costs[PREFIX + "x1b5d"] == "-100" and costs[PREFIX + "p7g2f"] == "-100"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: [", "not valid YAML or JSON"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "no WorkloadSpread"),
        (
            "apiVersion: spreadgate.dev/v1alpha1\nkind: WorkloadSpread\nmetadata: {name: w}\n"
            "spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}, subsets: []}\n",
            "at least one subset",
        ),
    ],
)
def test_bad_state_exits_2_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(content)
    code, out, err = run(capsys, "--state", str(state), "--now", NOW)
    assert code == 2 and out == ""
    assert err.startswith("spreadgate reconcile: error: ") and message in err
    assert "Traceback" not in err


def test_bad_now_and_missing_file_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--state", str(EXAMPLE), "--now", "yesterday")
    assert code == 2 and "--now" in err
    code, _, err = run(capsys, "--state", str(tmp_path / "absent.yaml"))
    assert code == 2 and "no such file" in err


def test_deployment_without_its_latest_replicaset_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    documents = list(yaml.safe_load_all(EXAMPLE.read_text()))
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(documents))
    code, _, err = run(capsys, "--state", str(state), "--now", NOW)
    assert code == 2 and "latest ReplicaSet" in err


def test_a_missing_target_is_reported_in_json_and_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [
        d
        for d in yaml.safe_load_all(EXAMPLE.read_text())
        if d and d.get("kind") not in ("Deployment", "ReplicaSet")
    ]
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(docs))
    code, out, err = run(capsys, "--state", str(state), "--now", NOW, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["targetProblem"]["reason"] == "WorkloadNotFound"
    assert "does not exist" in report["targetProblem"]["message"]
    assert [c["type"] for c in report["status"]["conditions"]] == ["TargetNotFound"]
    assert ("Warning", "TargetNotFound") in [(e["type"], e["reason"]) for e in report["events"]]
    code, out, _ = run(capsys, "--state", str(state), "--now", NOW)
    assert code == 0
    assert out.startswith("target: WorkloadNotFound: target Deployment")
