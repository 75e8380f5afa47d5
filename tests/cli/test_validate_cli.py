"""`spreadgate validate`: examples, exit codes, and bad input without tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_kit import error_on_file

from py_engine.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples"
INVALID = sorted((EXAMPLES / "invalid").glob("*.yaml"))


def test_valid_examples_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", *map(str, sorted(EXAMPLES.glob("*.yaml")))])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count(": valid") == 6  # 4 WorkloadSpreads, 2 UnitedDeployments


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_each_invalid_example_breaks_its_rule(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(path)])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 1
    # One broken rule per spread (the two-spreads example reports each spread once).
    names = [line.split(": ")[1] for line in out]
    assert len(names) == len(set(names)), out
    for line in out:
        file, _name, field, _ = line.split(": ", 3)
        assert file == str(path)
        assert field.startswith(("spec.", "metadata."))


def test_output_json(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code = main(["validate", "-o", "json", str(EXAMPLES / "invalid" / "subset-name-empty.yaml")])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report[0]["name"] == "bad-name"
    assert report[0]["violations"][0].startswith("spec.subsets[1].name: ")


def test_custom_workload_flag_allows_custom_kind(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "invalid" / "target-custom-kind.yaml")
    assert main(["validate", "--custom-workload", "game.kruise.io/GameServerSet", path]) == 0
    assert main(["validate", "--custom-workload", "nonsense", path]) == 2
    assert "GROUP/KIND" in capsys.readouterr().err


def test_patch_checked_against_target_in_same_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        (EXAMPLES / "elastic-pool.yaml")
        .read_text()
        .replace("- name: main\n              resources", "- name: sidecar\n              resources")
    )
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    assert main(["validate", str(manifest)]) == 1
    assert "is not a container of the workload's pod template" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"kind: [unclosed\n", "not valid YAML or JSON"),
        (b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", "no WorkloadSpread"),
        (b"\x00\x01binary\xff", "binary data"),
        (b"#" * (9 * 1024 * 1024), "larger than"),
    ],
    ids=["not-yaml", "wrong-kind", "binary", "10MB"],
)
def test_bad_input_exit_2_with_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    err = error_on_file(tmp_path, capsys, "input.yaml", content, "validate")
    assert message in err
    assert "Traceback" not in err


def test_missing_fields_are_violations_not_crashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bare.yaml"
    path.write_text("apiVersion: spreadgate.dev/v1alpha1\nkind: WorkloadSpread\nmetadata: {name: bare}\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "spec.targetRef: Required value" in out
    assert "spec.subsets: Required value" in out


def test_hostile_types_are_violations_not_crashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(
        "apiVersion: spreadgate.dev/v1alpha1\nkind: WorkloadSpread\nmetadata: {name: h, annotations: 5}\n"
        "spec:\n  targetRef: [1]\n  subsets:\n    - 7\n"
        "    - {name: [x], tolerations: 3, requiredNodeSelectorTerm:"
        " {matchExpressions: [5]}, patch: {metadata: {labels: 1}, spec: {containers: [3]}}}\n"
        "  scheduleStrategy: {type: 5, adaptive: {rescheduleCriticalSeconds: x}}\n"
        "  targetFilter: {selector: 3}\n"
    )
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "spec.subsets[0].name" in out
    assert "spec.scheduleStrategy.type" in out


def test_console_script_runs_from_stdin() -> None:
    script = Path(sys.executable).parent / "spreadgate"
    manifest = (EXAMPLES / "zones-20-20-60.yaml").read_bytes()
    result = subprocess.run(
        [str(script), "validate", "-"], input=manifest, capture_output=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert b"<stdin>: api-zones: valid" in result.stdout
