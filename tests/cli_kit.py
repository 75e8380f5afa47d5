"""Running `spreadgate ...` in-process from the tests (py_engine.cli.main) and reading what it wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from py_engine.cli import main

SCENARIOS = Path(__file__).resolve().parents[1] / "manifests" / "examples" / "scenarios"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `spreadgate <argv>`."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error_on_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, *argv: str
) -> str:
    """Writes `content` to `tmp_path/name`, runs `spreadgate <argv> <that file>`, asserts exit
    code 2 and returns what it wrote to stderr."""
    path = tmp_path / name
    path.write_bytes(content)
    assert main([*argv, str(path)]) == 2
    return capsys.readouterr().err


def simulate_steps(name: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The steps of `spreadgate simulate <scenario name> -o json` over a shipped example."""
    assert main(["simulate", str(SCENARIOS / f"{name}.yaml"), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenario"] == name
    return list(doc["steps"])
