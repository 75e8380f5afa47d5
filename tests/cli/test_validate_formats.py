"""`spreadgate validate -o junit|github`: CI reports with field paths and line numbers."""

from __future__ import annotations

import io
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from py_engine.cli import main
from py_engine.cli.validate_formats import field_line, line_finder, path_segments

REPO = Path(__file__).resolve().parents[2]
OVER_100 = REPO / "manifests" / "examples" / "invalid" / "percent-sum-over-100.yaml"
VALID = REPO / "manifests" / "examples" / "elastic-pool.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["validate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_path_segments_keep_dotted_keys_in_brackets() -> None:
    assert path_segments("spec.subsets[1].patch.metadata.labels[app.kubernetes.io/name]") == [
        "spec",
        "subsets",
        "1",
        "patch",
        "metadata",
        "labels",
        "app.kubernetes.io/name",
    ]
    assert path_segments("") == []


def test_junit_has_one_case_per_object_and_a_failure_per_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "-o", "junit", str(OVER_100), str(VALID))
    assert code == 1
    root = ET.fromstring(out)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["WorkloadSpread over-100", "WorkloadSpread web-elastic"]
    assert root.get("tests") == "2" and root.get("failures") == "1" and root.get("errors") == "0"
    [failure] = cases[0].findall("failure")
    assert failure.get("type") == "spec.subsets[1].maxReplicas"
    assert str(failure.get("message")).startswith("spec.subsets[1].maxReplicas: Invalid value")
    assert f"{OVER_100}:9: over-100:" in str(failure.text)  # the line of subset b's maxReplicas
    assert cases[1].findall("failure") == []


def test_junit_reports_an_unreadable_file_as_an_error_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "-o", "junit", str(VALID), str(tmp_path / "missing.yaml"))
    assert code == 2 and "no such file" in err
    root = ET.fromstring(out)
    [error] = root.findall("./testsuite/testcase/error")
    assert error.get("message") == "no such file" and root.get("errors") == "1"


def test_github_commands_point_at_file_and_line_and_escape_the_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "-o", "github", str(OVER_100), str(VALID))
    assert code == 1
    first, summary = out.splitlines()
    assert first.startswith(
        f"::error file={OVER_100},line=9,title=WorkloadSpread over-100::spec.subsets[1].maxReplicas"
    )
    assert first.endswith("more than 100%25")  # '%' is escaped as the runner expects
    assert summary == "spreadgate validate: 2 object(s) checked, 1 violation(s) in 1 object(s)"


def test_github_on_stdin_names_no_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(OVER_100.read_bytes())))
    code, out, _ = run(capsys, "-o", "github", "-")
    assert code == 1
    assert out.startswith("::error title=WorkloadSpread over-100::spec.subsets[1].maxReplicas")


def test_lines_inside_lists_and_json_and_for_missing_fields(tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- kind: A\n  metadata: {name: a}\n"
        "- kind: B\n  spec:\n    subsets:\n    - name: x\n    - name: y\n      maxReplicas: 3\n"
    )
    find = line_finder()
    assert find(str(listed), 1, "spec.subsets[1].maxReplicas") == 11
    assert find(str(listed), 1, "spec.subsets[1].tolerations") == 10  # missing: its parent's line
    assert find(str(listed), 0, "") == 4
    assert find(str(listed), 2, "spec") is None  # no such object
    as_json = tmp_path / "one.json"
    as_json.write_text(json.dumps({"kind": "A", "spec": {"subsets": [{"name": "x"}]}}, indent=1))
    assert find(str(as_json), 0, "spec.subsets[0].name") == 6
    assert find(str(as_json), 0, "spec.subsets") == 4  # the key's line, not where its value starts
    assert find("<stdin>", 0, "spec") is None
    assert line_finder(lambda _: "a: [unclosed")("f.yaml", 0, "a") is None


def test_field_line_stops_at_a_scalar() -> None:
    import yaml

    node = yaml.compose("spec:\n  replicas: 3\n")
    assert field_line(node, "spec.replicas.deeper") == 2
