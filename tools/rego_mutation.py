"""Mutation testing of the Rego policies: small semantic edits, each run against the policy tests.

The Python tool (tools/mutation.py, mutmut) does not read Rego. This script makes the two edits
issue 29 asks for, one at a time, in a throw-away copy of the working tree:

* `flip`: a comparison operator replaced by its neighbour (`<=` <-> `<`, `>=` <-> `>`,
  `==` <-> `!=`), the off-by-one and inverted-test mistakes;
* `drop`: one condition line of a rule body removed (a line that is an expression, not an
  assignment, `some`/`every`, a brace or a comment), the forgotten-check mistake;

and runs the Rego tests of the policy's directory (`pytest policies/<dir>`, through the
repository's plugin py_engine/policy/pytest_rego.py, which also checks rule coverage). A mutant
is killed when a test fails; "killed by coverage only" is reported apart, since no behavioural
test saw it. A mutant that does not compile is counted as "invalid", not as killed.

  python tools/rego_mutation.py policies/validation/max_replicas.rego
  python tools/rego_mutation.py policies/validation --operator flip --jobs 2
  python tools/rego_mutation.py policies/uniteddeployment --sample 40 --seed 1 --report rego.json

Exit 1 with `--fail-under P` when the behavioural score (killed by a test other than the
coverage check, over valid mutants) is below P percent; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation import ROOT, copy_tree  # the sibling tool: one way to copy the tree

FLIPS = {"<=": "<", "<": "<=", ">=": ">", ">": ">=", "==": "!=", "!=": "=="}
COMPARISON = re.compile(r"(?<![<>=!:])(<=|>=|==|!=|<|>)(?![<>=])")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
NOT_A_CONDITION = re.compile(
    r"^\s*(#|some\b|every\b|import\b|package\b|default\b|else\b|\}|\]|\))|:=|\{\s*$|\[\s*$|\(\s*$"
)
COMPILE_ERROR = re.compile(
    r"(?i)(parse error|rego_parse_error|compile error|error: .*expected|could not load)"
)


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    operator: str
    before: str
    after: str


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Parts of a line outside strings and comments."""
    cut = len(line)
    strings = [(m.start(), m.end()) for m in STRING.finditer(line)]
    hash_at = next(
        (i for i, c in enumerate(line) if c == "#" and not any(s <= i < e for s, e in strings)), None
    )
    if hash_at is not None:
        cut = hash_at
    spans, start = [], 0
    for s, e in strings:
        if s >= cut:
            break
        spans.append((start, s))
        start = e
    spans.append((start, cut))
    return [(s, e) for s, e in spans if s < e]


def _inside_rule_body(lines: Sequence[str], index: int) -> bool:
    """A tab-indented line whose nearest less-indented line above opens a rule body with `{`."""
    line = lines[index]
    if not line.startswith("\t"):
        return False
    depth = len(line) - len(line.lstrip("\t"))
    for above in reversed(lines[:index]):
        if above.strip() and len(above) - len(above.lstrip("\t")) < depth:
            return above.rstrip().endswith("{") and not above.rstrip().endswith(":= {")
    return False


def mutants_of(path: Path, operators: Sequence[str]) -> Iterator[Mutant]:
    relative = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        if "flip" in operators:
            for start, end in _code_spans(line):
                for match in COMPARISON.finditer(line, start, end):
                    op = match.group(1)
                    after = line[: match.start()] + FLIPS[op] + line[match.end() :]
                    yield Mutant(relative, index + 1, f"flip {op} -> {FLIPS[op]}", line, after)
        if (
            "drop" in operators
            and line.strip()
            and not NOT_A_CONDITION.search(line)
            and _inside_rule_body(lines, index)
        ):
            yield Mutant(relative, index + 1, "drop condition", line, "")


def policy_files(targets: Sequence[str]) -> list[Path]:
    files: list[Path] = []
    for target in targets:
        path = (ROOT / target).resolve()
        found = sorted(path.glob("*.rego")) if path.is_dir() else [path]
        files += [p for p in found if p.is_file() and not p.name.endswith("_test.rego")]
    return files


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed | killed by coverage only | survived | invalid
    failed: list[str]


def run_one(copy: Path, mutant: Mutant, timeout: float) -> Outcome:
    target = copy / mutant.file
    original = target.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    newline = "\n" if lines[mutant.line - 1].endswith("\n") else ""
    lines[mutant.line - 1] = mutant.after + newline if mutant.after else ""
    target.write_text("".join(lines), encoding="utf-8")
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-rf",
                str(Path(mutant.file).parent),
            ],
            cwd=copy,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(mutant, "killed", ["(timeout)"])
    finally:
        target.write_text(original, encoding="utf-8")
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", result.stdout, flags=re.MULTILINE)
    if result.returncode == 0:
        return Outcome(mutant, "survived", [])
    if COMPILE_ERROR.search(result.stdout) and all(
        ("::" not in f) or f.endswith("::coverage") for f in failed
    ):
        return Outcome(mutant, "invalid", failed)
    if failed and all(f.endswith("::coverage") for f in failed):
        return Outcome(mutant, "killed by coverage only", failed)
    return Outcome(mutant, "killed", failed)


def run_all(mutants: Sequence[Mutant], jobs: int, timeout: float) -> list[Outcome]:
    copies: queue.Queue[Path] = queue.Queue()
    made = []
    for _ in range(max(1, jobs)):
        copy = Path(tempfile.mkdtemp(prefix="spreadgate-rego-mutation-"))
        copy_tree(copy)
        copies.put(copy)
        made.append(copy)
    outcomes: list[Outcome | None] = [None] * len(mutants)
    work: queue.Queue[int] = queue.Queue()
    for i in range(len(mutants)):
        work.put(i)

    def worker() -> None:
        copy = copies.get()
        while True:
            try:
                i = work.get_nowait()
            except queue.Empty:
                return
            outcomes[i] = run_one(copy, mutants[i], timeout)
            print(
                f"{i + 1}/{len(mutants)} {outcomes[i].status}: {mutants[i].file}:{mutants[i].line} "  # type: ignore[union-attr]
                f"{mutants[i].operator}",
                file=sys.stderr,
            )

    threads = [threading.Thread(target=worker) for _ in made]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for copy in made:
            shutil.rmtree(copy, ignore_errors=True)
    return [o for o in outcomes if o is not None]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/rego_mutation.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", help="policy files or directories under policies/")
    parser.add_argument("--operator", action="append", choices=("flip", "drop"), help="default: both")
    parser.add_argument("--sample", type=int, help="test a random sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant's test run")
    parser.add_argument("--list", action="store_true", help="only list the mutants")
    parser.add_argument("--report", metavar="FILE")
    parser.add_argument("--fail-under", type=float, metavar="PERCENT")
    args = parser.parse_args(argv)
    files = policy_files(args.targets)
    if not files:
        print("rego_mutation: no policy file found", file=sys.stderr)
        return 2
    mutants = [m for f in files for m in mutants_of(f, args.operator or ("flip", "drop"))]
    if args.sample is not None and args.sample < len(mutants):
        mutants = sorted(
            random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.file, m.line)
        )
    if args.list:
        for m in mutants:
            print(f"{m.file}:{m.line} {m.operator}: {m.before.strip()!r} -> {m.after.strip()!r}")
        return 0
    outcomes = run_all(mutants, args.jobs, args.timeout)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    valid = len(outcomes) - counts.get("invalid", 0)
    behavioural = 100.0 * counts.get("killed", 0) / valid if valid else 100.0
    print(json.dumps(counts), f"behavioural score {behavioural:.1f}% of {valid} valid mutants")
    for o in outcomes:
        if o.status in ("survived", "killed by coverage only"):
            m = o.mutant
            print(f"{o.status}: {m.file}:{m.line} {m.operator}: {m.before.strip()!r} -> {m.after.strip()!r}")
    if args.report:
        Path(args.report).write_text(
            json.dumps(
                {
                    "counts": counts,
                    "behavioural_score": round(behavioural, 1),
                    "outcomes": [asdict(o) for o in outcomes],
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if args.fail_under is not None and behavioural < args.fail_under else 0


if __name__ == "__main__":
    sys.exit(main())
