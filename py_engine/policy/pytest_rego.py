"""pytest plugin: every `test_*` rule of every `*_test.rego` file becomes a pytest test.

The rules run in the embedded engine (regorus) exactly as `opa test` would run
them: a test passes when the rule evaluates to `true` and fails when it is
undefined or false. Beside the tests, one extra item per directory (on its
first `*_test.rego` file) checks rule coverage of the policy files there and
fails when a line of a rule was never evaluated by the directory's tests, so
every policy rule has a test.

Policies are loaded from the nearest ancestor directory named `policies`
(else the test file's own directory), so helper packages elsewhere in the tree
resolve as they do under `opa test policies/`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from py_engine.policy.embedded import build_regorus_engine, error_summary
from py_engine.policy.sources import load_policy_sources

TEST_RULE = re.compile(r"^(test_[A-Za-z0-9_]*)\s*(?:if\b|:=|\{)", re.MULTILINE)
PACKAGE = re.compile(r"^package\s+([A-Za-z0-9_.]+)", re.MULTILINE)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith("_test.rego"):
        return RegoTestFile.from_parent(parent, path=file_path)
    return None


def policy_root(test_file: Path) -> Path:
    """The tree whose policies a test file is evaluated against."""
    for ancestor in test_file.parents:
        if ancestor.name == "policies":
            return ancestor
    return test_file.parent


class RegoTestFile(pytest.File):
    """One `*_test.rego` file: its test rules, then its directory's coverage check."""

    def collect(self) -> Iterator[pytest.Item]:
        text = self.path.read_text(encoding="utf-8")
        package = PACKAGE.search(text)
        if package is None:
            raise pytest.UsageError(f"{self.path}: no package declaration")
        names = list(dict.fromkeys(TEST_RULE.findall(text)))
        for name in names:
            yield RegoTestItem.from_parent(self, name=name, rule=f"data.{package.group(1)}.{name}")
        # One coverage item per directory, on its first test file, run with every test file's rules there.
        siblings = sorted(self.path.parent.glob("*_test.rego"))
        if names and siblings[0] == self.path:
            yield RegoCoverageItem.from_parent(self, name="coverage", rules=directory_test_rules(siblings))

    def engine(self, *, coverage: bool = False) -> Any:
        """An engine loaded with every policy of the tree, tests included."""
        sources = load_policy_sources(policy_root(self.path), include_tests=True)
        return build_regorus_engine(sources, coverage=coverage)


def directory_test_rules(test_files: list[Path]) -> list[str]:
    """`data.<package>.<test>` of every test rule in the given files."""
    rules: list[str] = []
    for path in test_files:
        text = path.read_text(encoding="utf-8")
        package = PACKAGE.search(text)
        if package is not None:
            rules.extend(f"data.{package.group(1)}.{name}" for name in dict.fromkeys(TEST_RULE.findall(text)))
    return list(dict.fromkeys(rules))


class RegoTestFailed(Exception):
    """A Rego test rule that did not evaluate to true."""


class RegoTestItem(pytest.Item):
    """A single `test_*` rule."""

    def __init__(self, *, rule: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, RegoTestFile)
        engine = _cached_engine(parent)
        try:
            raw = engine.eval_rule_as_json(self.rule)
        except RuntimeError as exc:
            raise RegoTestFailed(
                f"{self.rule} raised an evaluation error: {error_summary(str(exc))}"
            ) from None
        if raw != "true":
            outcome = "undefined" if raw == '"<undefined>"' else raw
            raise RegoTestFailed(f"{self.rule} evaluated to {outcome}, expected true")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RegoTestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.rule


class RegoCoverageItem(pytest.Item):
    """Fails when a line of a policy beside the test file was never evaluated."""

    def __init__(self, *, rules: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rules = rules

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, RegoTestFile)
        engine = parent.engine(coverage=True)
        for rule in self.rules:
            # An evaluation error is reported by the test's own item; coverage still counts what ran.
            with contextlib.suppress(RuntimeError):
                engine.eval_rule_as_json(rule)
        report = json.loads(engine.get_coverage_report_as_json())
        directory = parent.path.parent
        root = policy_root(parent.path)
        gaps = []
        for entry in report.get("files", []):
            path = root / entry["path"]
            if path.parent != directory or path.name.endswith("_test.rego"):
                continue
            lines = entry["code"].splitlines()
            for number in entry.get("not_covered", []):
                gaps.append(f"{entry['path']}:{number}: {lines[number - 1].strip()}")
        if gaps:
            raise RegoTestFailed("policy lines never evaluated by the tests:\n" + "\n".join(gaps))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RegoTestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"coverage of {self.path.parent.name}/"


_ENGINES: dict[Path, Any] = {}


def _cached_engine(test_file: RegoTestFile) -> Any:
    """One engine per test file, reused by its items (all run on pytest's main thread)."""
    engine = _ENGINES.get(test_file.path)
    if engine is None:
        engine = test_file.engine()
        _ENGINES[test_file.path] = engine
    return engine
