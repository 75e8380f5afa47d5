"""The project's own rules, enforced as tests so the one test command covers them:
ruff (style and common bugs), mypy --strict (types) and import-linter (layering).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.timeout(600)
def test_ruff_is_clean() -> None:
    result = run(tool("ruff"), "check", "py_engine", "webhook", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_mypy_strict_is_clean() -> None:
    result = run(tool("mypy"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_layering_contracts_hold() -> None:
    result = run(tool("lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr
