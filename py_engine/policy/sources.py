"""Finding and reading the Rego sources Spreadgate ships.

The policies live in the repository's `policies/` folder, next to the package,
so that the very files reviewers read, `opa test` runs and `conftest` uses are
the ones the engine evaluates. `SPREADGATE_POLICY_DIR` points elsewhere (for
an installed copy or a user's own policy tree).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

POLICY_DIR_ENV = "SPREADGATE_POLICY_DIR"


@dataclass(frozen=True)
class PolicySource:
    """One Rego file: a path used in messages and coverage reports, and its text."""

    path: str
    text: str

    @property
    def is_test(self) -> bool:
        return self.path.endswith("_test.rego")


def default_policy_dir() -> Path:
    """The `policies/` directory in use: the environment override, else the repository's."""
    override = os.environ.get(POLICY_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "policies"


def load_policy_sources(root: Path | None = None, *, include_tests: bool = False) -> tuple[PolicySource, ...]:
    """Read every `.rego` file under `root`, sorted by path so engines are built identically.

    Test files (`*_test.rego`) are left out unless asked for: production engines
    should not carry test rules.
    """
    base = root if root is not None else default_policy_dir()
    if not base.is_dir():
        raise FileNotFoundError(f"policy directory not found: {base} (set {POLICY_DIR_ENV})")
    sources = []
    for path in sorted(base.rglob("*.rego")):
        source = PolicySource(path=path.relative_to(base).as_posix(), text=path.read_text(encoding="utf-8"))
        if include_tests or not source.is_test:
            sources.append(source)
    return tuple(sources)
