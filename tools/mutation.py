"""Mutation testing of the pure decision packages with mutmut (docs/testing.md, "Mutation testing").

Not part of the default suite: it runs for minutes to an hour. Install the tool with
`pip install -e '.[mutation]'`, then for example

  python tools/mutation.py py_engine/uniteddeployment/controller/capacity.py \\
      py_engine/uniteddeployment/controller/partitions.py
  python tools/mutation.py --package united --package scaledown
  python tools/mutation.py --changed-since origin/main          # the decision modules a branch changed
  python tools/mutation.py --changed-since HEAD~3 --fail-under 90 --report mutation.json

Each run works in a throw-away copy of the working tree (tracked and untracked files, symlinks
kept), so the tree itself is never mutated and two runs can go side by side. mutmut mutates
the named modules only; each mutant is tested by the tests of the module's package
(`tests/<package>/` without its `runtime/` tests of the I/O edges; the tree mirrors
`py_engine/`), i.e. behavioural tests only: the linters and the drift checks of generated files
are not run. `--jobs` is mutmut's number of worker
processes (default 2, the machine's cores).

Output: per module and per package, killed / total and the score; every surviving mutant with
its diff. `--report FILE` writes the same as JSON; `--fail-under P` exits 1 when a package's
score is below P percent. Exit 2: bad arguments, or mutmut could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DECISION_PACKAGES: dict[str, tuple[str, ...]] = {
    # package name -> source globs (relative to the root); the I/O edges (runtime/) are left out.
    "admission": ("py_engine/workloadspread/admission/*.py",),
    "controller": ("py_engine/workloadspread/controller/*.py",),
    "scaledown": ("py_engine/scaledown/*.py",),
    "united": ("py_engine/uniteddeployment/controller/*.py",),
    "model": ("py_engine/model/*.py",),
    "semantics": ("py_engine/semantics/*.py",),
}
"""The decision packages of issue 29: admission core, controller core, scale-down, UnitedDeployment,
model and semantics. `__init__.py` files only re-export and are skipped."""

COPIED = ("py_engine", "webhook", "policies", "manifests", "tests", "benchmarks")
STATUS_BY_EXIT_CODE = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "caught by type check",
    -11: "segfault",
    -9: "segfault",
}
MUTANT_NAME = re.compile(r"^(?P<module>[\w.]+?)\.x(?:_|ǁ)")


def decision_modules(packages: Iterable[str]) -> list[str]:
    found: list[str] = []
    for package in packages:
        for pattern in DECISION_PACKAGES[package]:
            found += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(pattern) if p.name != "__init__.py")
    return found


def changed_modules(revision: str) -> list[str]:
    """The decision modules that differ between `revision` and the working tree."""
    result = subprocess.run(
        ["git", "diff", "--name-only", revision, "--", "py_engine"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"mutation: git diff {revision} failed: {result.stderr.strip()}")
    candidates = set(decision_modules(DECISION_PACKAGES))
    return sorted(
        line for line in result.stdout.splitlines() if line in candidates and (ROOT / line).exists()
    )


def package_of(module: str) -> str:
    """The decision package (a key of DECISION_PACKAGES) whose directory holds `module`."""
    folder = Path(module).parent.as_posix()
    for package, patterns in DECISION_PACKAGES.items():
        if any(Path(pattern).parent.as_posix() == folder for pattern in patterns):
            return package
    raise SystemExit(f"mutation: {module} is not a module of a decision package")


def tests_of(module: str) -> str:
    """The tests of a module's package: the tree under tests/ mirrors the one under py_engine/."""
    return f"tests/{Path(module).parent.relative_to('py_engine').as_posix()}/"


def copy_tree(target: Path) -> None:
    """Tracked and untracked (not ignored) files of the working tree, symlinks as symlinks."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        relative = Path(raw.decode())
        source = ROOT / relative
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination)


def mutmut_section(modules: Sequence[str], tests: Sequence[str]) -> str:
    # The runtime/ tests drive the I/O edges (threads, timing) and nothing there is mutated.
    ignored = [f"--ignore={Path(t) / 'runtime'}" for t in tests if (ROOT / t / "runtime").is_dir()]
    # Tests marked `structure` follow the call path by function name; mutmut renames every function
    # it mutates and calls it through a trampoline, so they would fail on the unmutated copy.
    unmarked = ["-m", "not structure"]
    lines = [
        "",
        "[tool.mutmut]",
        f"source_paths = {json.dumps(list(modules))}",
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}",
        f"pytest_add_cli_args = {json.dumps(['-q', '-p', 'no:cacheprovider', *ignored, *unmarked])}",
        f"also_copy = {json.dumps(list(COPIED))}",
        "",
    ]
    return "\n".join(lines)


NO_DEADLINES = """

# Added by tools/mutation.py in its copy of the tree: mutmut traces every call, so Hypothesis'
# per-example deadline (200 ms by default) would fail tests that are merely slowed down.
from hypothesis import settings as _mutation_settings

_mutation_settings.register_profile("mutation", deadline=None)
_mutation_settings.load_profile("mutation")
"""


def configure(copy: Path, modules: Sequence[str], tests: Sequence[str]) -> None:
    """Replace any [tool.mutmut] section of the copy's pyproject.toml with this run's, and turn
    Hypothesis' deadlines off in the copy's tests."""
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\n\[).)*", "\n", text, flags=re.DOTALL)
    pyproject.write_text(text + mutmut_section(modules, tests), encoding="utf-8")
    conftest = copy / "tests" / "conftest.py"
    if conftest.exists():
        conftest.write_text(conftest.read_text(encoding="utf-8") + NO_DEADLINES, encoding="utf-8")


def collect(copy: Path, modules: Sequence[str]) -> dict[str, dict[str, object]]:
    """Per module: counts by status and the surviving mutants with their diffs."""
    results: dict[str, dict[str, object]] = {}
    wanted: dict[str, str] = {}  # surviving mutant -> its module's path
    for module in modules:
        meta_path = copy / "mutants" / (module + ".meta")
        counts: dict[str, int] = {}
        survivors: list[dict[str, str]] = []
        exit_codes = json.loads(meta_path.read_text())["exit_code_by_key"] if meta_path.exists() else {}
        for name, code in sorted(exit_codes.items()):
            status = STATUS_BY_EXIT_CODE.get(code, "not checked" if code is None else "suspicious")
            counts[status] = counts.get(status, 0) + 1
            if status in ("survived", "no tests", "timeout", "suspicious", "segfault"):
                survivors.append({"name": name, "status": status, "diff": ""})
                wanted[name] = module
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        total = sum(n for s, n in counts.items() if s not in ("not checked", "skipped"))
        results[module] = {
            "package": package_of(module),
            "counts": counts,
            "killed": killed,
            "total": total,
            "survivors": survivors,
        }
    diffs = show(copy, wanted)
    for data in results.values():
        for survivor in data["survivors"]:  # type: ignore[attr-defined]
            survivor["diff"] = diffs.get(survivor["name"], "")
    return results


# One process computes every diff (a `mutmut show` per mutant costs a Python start each: minutes
# for a few hundred survivors).
_SHOW = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
diffs = {}
for name, path in json.load(sys.stdin).items():
    try:
        text = get_diff_for_mutant(name, path=path)
    except Exception as exc:  # one unreadable mutant must not lose the others' diffs
        diffs[name] = f"(no diff: {type(exc).__name__}: {exc})"
        continue
    diffs[name] = "\\n".join(line for line in text.splitlines()
                             if line.startswith(("-", "+")) and not line.startswith(("---", "+++")))
json.dump(diffs, sys.stdout)
"""


def show(copy: Path, wanted: dict[str, str]) -> dict[str, str]:
    """The diff (changed lines only) of each mutant in `wanted` (name -> module path)."""
    if not wanted:
        return {}
    shown = subprocess.run(
        [sys.executable, "-c", _SHOW],
        cwd=copy,
        input=json.dumps(wanted),
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )
    try:
        diffs: dict[str, str] = json.loads(shown.stdout)
    except json.JSONDecodeError:
        return {name: f"(no diff: {shown.stderr.strip()[-200:]})" for name in wanted}
    return diffs


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env["PYTHONWARNINGS"] = "ignore::UserWarning:mutmut.configuration"
    return env


def score(killed: int, total: int) -> float:
    return 100.0 * killed / total if total else 100.0


def summarise(results: dict[str, dict[str, object]]) -> dict[str, dict[str, float]]:
    packages: dict[str, dict[str, float]] = {}
    for data in results.values():
        entry = packages.setdefault(str(data["package"]), {"killed": 0, "total": 0})
        entry["killed"] += int(data["killed"])  # type: ignore[call-overload]
        entry["total"] += int(data["total"])  # type: ignore[call-overload]
    for entry in packages.values():
        entry["score"] = round(score(int(entry["killed"]), int(entry["total"])), 1)
    return packages


def print_report(
    results: dict[str, dict[str, object]], packages: dict[str, dict[str, float]], seconds: float
) -> None:
    print(f"{'module':<48} {'killed':>7} {'total':>6} {'score':>7}")
    for module, data in results.items():
        killed, total = int(data["killed"]), int(data["total"])  # type: ignore[call-overload]
        print(f"{module:<48} {killed:>7} {total:>6} {score(killed, total):>6.1f}%")
    print()
    for package, entry in sorted(packages.items()):
        killed, total = int(entry["killed"]), int(entry["total"])
        print(f"package {package:<40} {killed:>7} {total:>6} {entry['score']:>6.1f}%")
    print(f"\n{seconds:.0f} s")
    for data in results.values():
        for survivor in data["survivors"]:  # type: ignore[attr-defined]
            print(f"\n{survivor['status']}: {survivor['name']}\n{survivor['diff']}")


def survivors_of(report: Path, only: Sequence[str]) -> tuple[list[str], list[str]]:
    """The modules and surviving mutants of an earlier report (limited to `only` when given).

    A survivor is found again by its name (function and number), so the module's source must
    not have changed since that run; only the tests may have."""
    data = json.loads(report.read_text(encoding="utf-8"))
    modules = [m for m in data["modules"] if not only or m in only]
    names = [
        str(s["name"]) for m in modules for s in data["modules"][m]["survivors"] if s["status"] != "timeout"
    ]
    return modules, names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mutation.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "modules", nargs="*", help="module files, e.g. py_engine/uniteddeployment/controller/capacity.py"
    )
    parser.add_argument(
        "--package",
        action="append",
        default=[],
        choices=sorted(DECISION_PACKAGES),
        help="every decision module of a package (repeatable)",
    )
    parser.add_argument("--changed-since", metavar="REV", help="the decision modules changed since REV")
    parser.add_argument(
        "--tests",
        action="append",
        default=[],
        help="test paths to run instead of tests/<package>/ (repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="mutmut worker processes (default 2)")
    parser.add_argument("--report", metavar="FILE", help="write the results as JSON")
    parser.add_argument(
        "--fail-under", type=float, metavar="PERCENT", help="exit 1 when a package scores lower"
    )
    parser.add_argument("--keep", action="store_true", help="keep the working copy (to browse with mutmut)")
    parser.add_argument(
        "--retest",
        metavar="REPORT",
        help="test only the survivors of an earlier --report (of the named modules, else all of "
        "its modules) against the tests as they are now",
    )
    args = parser.parse_args(argv)

    retest: list[str] = []
    if args.retest:
        modules, retest = survivors_of(Path(args.retest), args.modules)
        if not retest:
            print("mutation: the report lists no survivor to test again", file=sys.stderr)
            return 0
    else:
        modules = list(
            dict.fromkeys(
                [
                    *args.modules,
                    *decision_modules(args.package),
                    *(changed_modules(args.changed_since) if args.changed_since else []),
                ]
            )
        )
    if not modules:
        print("mutation: no module to mutate", file=sys.stderr)
        return 0 if args.changed_since else 2
    for module in modules:
        if not (ROOT / module).is_file():
            print(f"mutation: {module}: no such file", file=sys.stderr)
            return 2
    tests = args.tests or sorted({tests_of(m) for m in modules})
    copy = Path(tempfile.mkdtemp(prefix="spreadgate-mutation-"))
    started = time.monotonic()
    try:
        copy_tree(copy)
        configure(copy, modules, tests)
        print(f"mutation: {len(modules)} module(s), tests {' '.join(tests)}, in {copy}", file=sys.stderr)
        run = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *retest],
            cwd=copy,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            # mutmut refuses to start when the tests fail without any mutant: say which.
            tail = re.sub(r"[^\n]*\r", "", run.stdout)[-4000:]
            print(f"mutation: mutmut failed ({run.returncode}):\n{tail}", file=sys.stderr)
            return 2
        results = collect(copy, modules)
    finally:
        if not args.keep:
            shutil.rmtree(copy, ignore_errors=True)
    packages = summarise(results)
    seconds = time.monotonic() - started
    print_report(results, packages, seconds)
    if args.report:
        Path(args.report).write_text(
            json.dumps({"modules": results, "packages": packages, "seconds": round(seconds)}, indent=2)
            + "\n",
            encoding="utf-8",
        )
    if args.fail_under is not None and any(entry["score"] < args.fail_under for entry in packages.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
