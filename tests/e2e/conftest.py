"""Stress variants (`@pytest.mark.stress`) are skipped unless SPREADGATE_STRESS=1.

An environment variable rather than a `--stress` option: an option added in a
nested conftest is unknown when pytest starts from the repository root.
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("SPREADGATE_STRESS") == "1":
        return
    skip = pytest.mark.skip(reason="stress variant: set SPREADGATE_STRESS=1 to run")
    for item in items:
        if "stress" in item.keywords and str(item.fspath).startswith(os.path.dirname(__file__)):
            item.add_marker(skip)
