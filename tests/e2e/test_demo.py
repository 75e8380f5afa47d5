"""`spreadgate demo` as a user runs it: a subprocess, under a minute, exit 0 and the key lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def test_demo_runs_in_under_a_minute_and_shows_the_elastic_pods_removed_first(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    done = subprocess.run(
        [sys.executable, "-m", "py_engine.cli", "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "placement after scale-up to 130:" in out
    assert "by subset: on-prem=100, elastic=30" in out
    assert "placement after scale-down to 110:" in out
    assert "by subset: on-prem=100, elastic=10" in out
    assert "scale-down removed 20 pods: elastic=20" in out
    assert "OK: on-prem stayed full (100); the scale-down removed the elastic pods first" in out
    assert "Traceback" not in done.stderr
