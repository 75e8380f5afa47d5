"""Shared pytest configuration: the repository root and reference vectors on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from kubectl_kit import require_kubectl  # noqa: E402 - importable once TESTS_DIR is on sys.path


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.kubectl`: skip (or, in CI, fail) before the test's fixtures start a cluster."""
    if item.get_closest_marker("kubectl") is not None:
        require_kubectl()
