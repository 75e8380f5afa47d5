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
    result = run(tool("ruff"), "check", "py_engine", "webhook", "tests", "benchmarks", "tools")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_ruff_format_is_applied() -> None:
    """Every Python file is as `ruff format` writes it (line length 110, pyproject.toml)."""
    result = run(tool("ruff"), "format", "--check", "py_engine", "webhook", "tests", "benchmarks", "tools")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_mypy_strict_is_clean() -> None:
    result = run(tool("mypy"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_layering_contracts_hold() -> None:
    result = run(tool("lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of modules that import each other in a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_the_strongly_connected_groups_are_the_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _strongly_connected(edges) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.mark.timeout(300)
def test_no_import_cycles() -> None:
    """Imports at any depth (function-level ones too) form no cycle between modules."""
    import grimp

    graph = grimp.build_graph("py_engine", "webhook")
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & graph.modules for m in graph.modules}
    assert _strongly_connected(edges) == []


def _module_state(path: Path) -> list[str]:
    """`global` statements and module-level functions wrapped in a cache, with their line numbers."""
    import ast

    tree = ast.parse(path.read_text(), str(path))
    found = [
        f"{path.relative_to(REPO)}:{node.lineno}: global"
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
    ]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if (
                    any(name in text for name in ("lru_cache", "functools.cache", "cache_on"))
                    or text == "cache"
                ):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {text} on {node.name}")
    return found


def test_no_module_global_caches_or_state() -> None:
    """Caches belong to an instance (a service, a reader) so two in one process never share one."""
    found = [
        line
        for root in ("py_engine", "webhook")
        for path in sorted((REPO / root).rglob("*.py"))
        for line in _module_state(path)
    ]
    assert found == []


def test_the_pre_commit_hooks_run_the_checks_this_suite_runs() -> None:
    """`.pre-commit-config.yaml` must not drift from the checks above: same tools, same scope."""
    import yaml

    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    entries = {hook["entry"].split(" --")[0] for repo in config["repos"] for hook in repo["hooks"]}
    assert entries == {"ruff format", "ruff check", "mypy", "lint-imports"}
