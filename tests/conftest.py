"""Shared pytest configuration: the repository root and reference vectors on sys.path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))
# The repository root, for `benchmarks.kube_objects` (objects the benchmarks and the tests share).
if str(TESTS_DIR.parent) not in sys.path:
    sys.path.append(str(TESTS_DIR.parent))

from kubectl_kit import require_kubectl  # noqa: E402 - importable once TESTS_DIR is on sys.path
from logging_kit import root_logger_restored  # noqa: E402


@pytest.fixture(autouse=True)
def _root_logger_put_back() -> Iterator[None]:
    """Every test leaves the root logger as it found it.

    A command run in-process (`main(["controller", ...])`) configures the root logger on the
    test's captured stderr, which pytest closes afterwards; later tests' log lines then failed
    to write ("--- Logging error ---").
    """
    with root_logger_restored():
        yield


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.kubectl`: skip (or, in CI, fail) before the test's fixtures start a cluster."""
    if item.get_closest_marker("kubectl") is not None:
        require_kubectl()
