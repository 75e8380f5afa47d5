"""Reading scenarios: a file, a shipped name, or parsed data, of either kind.

The one place that knows both kinds of scenario: a document with `unitedDeployment` is a
UnitedDeployment scenario (`scenario_united`), any other a WorkloadSpread one (`scenario`).
It sits above both so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from py_engine.cli.scenario import Scenario, ScenarioError, parse_spread_scenario
from py_engine.cli.scenario_united import parse_united
from py_engine.resources import SCENARIOS, read_text, resource
from py_engine.validation.documents import DocumentError, parse_documents, read_bytes


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    """A scenario of either kind from its parsed document; a one-line `ScenarioError` if malformed."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: expected a map")
    if "unitedDeployment" in data:
        return parse_united(data, source)
    return parse_spread_scenario(data, source)


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; any unreadable input is a one-line `ScenarioError`."""
    source = str(path)
    try:
        documents = parse_documents(source, read_bytes(source))
    except DocumentError as exc:
        raise ScenarioError(str(exc)) from None
    if len(documents) != 1:
        raise ScenarioError(f"{source}: expected one scenario document, found {len(documents)}")
    return parse_scenario(documents[0].obj, source)


def load_shipped_scenario(name: str) -> Scenario:
    """One of the example scenarios shipped in the package (`manifests/examples/scenarios/`)."""
    try:
        text = read_text(f"{SCENARIOS}/{name}")
    except OSError as exc:
        raise ScenarioError(f"no shipped scenario {name!r}: {exc.strerror or exc}") from None
    return _parse_text(text, name)


def shipped_scenario_names() -> list[str]:
    """The names (without `.yaml`) of the scenarios shipped in the package, sorted."""
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resource(SCENARIOS).iterdir()
        if entry.is_file() and entry.name.endswith(".yaml")
    )


def _parse_text(text: str, where: str) -> Scenario:
    try:
        documents = parse_documents(where, text.encode("utf-8"))
    except DocumentError as exc:
        raise ScenarioError(str(exc)) from None
    if len(documents) != 1:
        raise ScenarioError(f"{where}: expected one scenario document, found {len(documents)}")
    return parse_scenario(documents[0].obj, where)
