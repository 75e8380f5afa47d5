"""`opa check --strict`-style rules we can enforce without the opa binary.

Rego v1 only (`import rego.v1`, `if`/`contains` on every rule), no deprecated
built-ins, and no built-ins that regorus and OPA do not both provide or that
make decisions depend on the outside world.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
POLICY_FILES = sorted((REPO / "policies").rglob("*.rego"))

DEPRECATED = (
    "any(",
    "all(",
    "re_match(",
    "set_diff(",
    "net.cidr_overlap(",
    "cast_array(",
    "cast_set(",
    "cast_string(",
    "cast_boolean(",
    "cast_null(",
    "cast_object(",
)
FORBIDDEN = (
    "http.send(",
    "net.",
    "rego.metadata.",
    "opa.runtime(",
    "time.now_ns(",
    "rand.",
    "uuid.",
    "trace(",
    "print(",
)
# A v0-style rule head: `name {`, `name[x] {` or `name = x {` without `if`.
V0_RULE = re.compile(r"^[a-z_][A-Za-z0-9_]*(\[[^\]]*\])?(\s*=\s*[^{]+)?\s*\{\s*$", re.MULTILINE)


def code_lines(path: Path) -> str:
    """The file without comments, so prose may mention anything."""
    return "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())


def test_policies_exist() -> None:
    assert any(p.name.endswith("_test.rego") for p in POLICY_FILES)
    assert len(POLICY_FILES) >= 4


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_rego_v1_and_shared_builtins_only(path: Path) -> None:
    code = code_lines(path)
    assert re.search(r"^package [a-z_.]+$", code, re.MULTILINE), "missing package"
    assert "import rego.v1" in code
    for name in DEPRECATED + FORBIDDEN:
        assert name not in code, f"{name} is deprecated or not portable"
    assert not V0_RULE.search(code), f"v0-style rule head: {V0_RULE.search(code)}"
    assert not re.search(r"^\w+\[[^\]]*\]\s*\{", code, re.MULTILINE), "partial set without `contains`"


@pytest.mark.parametrize(
    "path", [p for p in POLICY_FILES if not p.name.endswith("_test.rego")], ids=lambda p: p.name
)
def test_every_policy_has_tests_beside_it(path: Path) -> None:
    assert list(path.parent.glob("*_test.rego")), f"no *_test.rego beside {path}"
