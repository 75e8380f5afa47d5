"""`spreadgate united plan`: the example snapshots, JSON keys and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from py_engine.cli import main

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples" / "united"
NOW = "2026-06-01T12:00:00Z"
KEYS = {"subsets", "create", "update", "delete", "release", "status", "errors", "nodeFit"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["united", "plan", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_onprem_then_serverless_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "--state", str(EXAMPLES / "onprem-then-serverless.yaml"), "--now", NOW, "-o", "json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == KEYS
    assert report["subsets"] == {
        "on-prem": {"replicas": 4, "partition": 0},
        "serverless": {"replicas": 2, "partition": 0},
    }
    created = [o for o in report["create"] if o["kind"] == "Deployment"]
    assert [o["metadata"]["generateName"] for o in created] == ["web-serverless-"]
    assert created[0]["spec"]["template"]["metadata"]["labels"]["cost-class"] == "serverless"
    assert report["update"] == [] and report["delete"] == [] and report["errors"] == []
    assert report["status"]["replicas"] == 4 and report["status"]["observedGeneration"] == 3


def test_cpu_platforms_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--state", str(EXAMPLES / "cpu-platforms.yaml"), "--now", NOW, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert {n: s["replicas"] for n, s in report["subsets"].items()} == {"intel": 6, "amd": 3, "arm": 2}
    arm = next(o for o in report["create"] if o.get("metadata", {}).get("generateName") == "api-arm-")
    container = arm["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "700m", "memory": "768Mi"}
    assert container["image"].endswith("api:2.4.0")


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--state", str(EXAMPLES / "cpu-platforms.yaml"), "--now", NOW)
    assert code == 0
    assert out.splitlines()[0].split() == ["SUBSET", "REPLICAS", "PARTITION", "READY", "SCHEDULABLE"]
    assert "create: Deployment api-intel-<generated>" in out


def test_refused_allocation_exits_1_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = yaml.safe_load((EXAMPLES / "cpu-platforms.yaml").read_text().split("\n---\n")[0])
    state["spec"]["topology"]["subsets"][2]["replicas"] = 5  # 6 + 3 + 5 > 11
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    code, out, err = run(capsys, "--state", str(path), "--now", NOW, "-o", "json")
    assert code == 1
    report = json.loads(out)
    assert report["subsets"] == {} and report["create"] == []
    assert "is greater than UnitedDeployment replica (11)" in report["errors"][0]
    assert "refused" in err


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(
        "sys.stdin", io.TextIOWrapper(io.BytesIO((EXAMPLES / "cpu-platforms.yaml").read_bytes()))
    )
    code, out, _ = run(capsys, "--state", "-", "--now", NOW, "-o", "json")
    assert code == 0 and set(json.loads(out)) == KEYS


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not yaml: [", "not valid YAML"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "no UnitedDeployment"),
        (
            "apiVersion: spreadgate.dev/v1beta1\nkind: UnitedDeployment\n"
            "metadata: {name: u}\nspec: {replicas: -1}\n",
            "spec.replicas",
        ),
    ],
)
def test_unreadable_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "state.yaml"
    path.write_text(content)
    code, out, err = run(capsys, "--state", str(path), "--now", NOW)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_now_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--state", str(EXAMPLES / "cpu-platforms.yaml"), "--now", "yesterday")
    assert code == 2 and "--now" in err


def test_adaptive_spot_fallback_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "--state", str(EXAMPLES / "adaptive-spot-fallback.yaml"), "--now", NOW, "-o", "json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert {n: s["replicas"] for n, s in report["subsets"].items()} == {"spot": 2, "on-demand": 2}
    spot = report["status"]["subsetStatuses"][0]
    assert spot["conditions"][0]["status"] == "False"
    assert [o["metadata"]["name"] for o in report["update"]] == ["batch-spot-q8w4z"]
    assert report["update"][0]["spec"]["replicas"] == 2


def test_name_chooses_among_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = yaml.safe_load((EXAMPLES / "cpu-platforms.yaml").read_text().split("\n---\n")[0])
    second = {**first, "metadata": {**first["metadata"], "name": "api2"}}
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all([first, second]))
    code, _, err = run(capsys, "--state", str(path), "--now", NOW)
    assert code == 2 and "--name" in err
    code, out, _ = run(capsys, "--state", str(path), "--now", NOW, "--name", "api2", "-o", "json")
    assert code == 0 and "api2-intel-" in out
