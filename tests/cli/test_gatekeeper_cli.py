"""`spreadgate gatekeeper --out-dir DIR`, and `-o DIR` as a deprecated alias for one release."""

from __future__ import annotations

from pathlib import Path

import pytest

from py_engine.cli import main

FILES = {"constraint-template.yaml", "constraint.yaml"}


def test_out_dir_writes_the_files_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gatekeeper", "--out-dir", str(tmp_path / "gk")]) == 0
    assert {p.name for p in (tmp_path / "gk").iterdir()} >= FILES
    assert capsys.readouterr().err == ""


def test_dash_o_still_writes_but_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gatekeeper", "-o", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} >= FILES
    err = capsys.readouterr().err
    assert err.startswith("spreadgate gatekeeper: warning: -o DIR is deprecated") and "--out-dir" in err


def test_dash_o_and_out_dir_must_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gatekeeper", "-o", str(tmp_path / "a"), "--out-dir", str(tmp_path / "b")]) == 2
    assert "name different directories" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
