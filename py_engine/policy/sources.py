"""Finding and reading the Rego sources Spreadgate ships.

The policies ship inside the package (`py_engine.resources`, built from the
repository's `policies/` folder), so the very files reviewers read, `opa test`
runs and `conftest` uses are the ones the engine evaluates, in a checkout and
in an installed wheel alike. `SPREADGATE_POLICY_DIR` points the engine at a
user's own policy tree instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

from py_engine.resources import POLICIES, resource, walk

POLICY_DIR_ENV = "SPREADGATE_POLICY_DIR"


@dataclass(frozen=True)
class PolicySource:
    """One Rego file: a path used in messages and coverage reports, and its text."""

    path: str
    text: str

    @property
    def is_test(self) -> bool:
        return self.path.endswith("_test.rego")


def default_policy_dir() -> Traversable:
    """The policy tree in use: the environment override, else the one shipped in the package."""
    override = os.environ.get(POLICY_DIR_ENV)
    if override:
        return Path(override)
    return resource(POLICIES)


def load_policy_sources(
    root: Traversable | None = None, *, include_tests: bool = False
) -> tuple[PolicySource, ...]:
    """Read every `.rego` file under `root`, sorted by path so engines are built identically.

    Test files (`*_test.rego`) are left out unless asked for: production engines
    should not carry test rules.
    """
    base = root if root is not None else default_policy_dir()
    if not base.is_dir():
        raise FileNotFoundError(f"policy directory not found: {base} (set {POLICY_DIR_ENV})")
    sources = []
    for relative, file in walk(base):
        if not relative.endswith(".rego"):
            continue
        source = PolicySource(path=relative, text=file.read_text(encoding="utf-8"))
        if include_tests or not source.is_test:
            sources.append(source)
    return tuple(sources)
