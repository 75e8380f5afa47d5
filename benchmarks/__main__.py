"""Run every benchmark: `python -m benchmarks [--quick] [NAME ...]`.

Each `bench_*` module measures its subject beside a baseline in the same run
and prints a table; this runner prints the machine first and, at the end, one
Targets table that puts every performance figure beside its target (see
"Targets" in README.md and docs/performance.md; a module lists its own through
`targets(result, quick)`).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks.common import Target, machine_description, print_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, under two minutes in all")
    parser.add_argument("names", nargs="*", help="benchmark modules to run (default: all), e.g. bench_rego")
    args = parser.parse_args(argv)
    available = sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    selected = args.names or available
    unknown = sorted(set(selected) - set(available))
    if unknown:
        print(
            f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr
        )
        return 2
    print(machine_description())
    checks: list[Target] = []
    started = time.perf_counter()
    for name in selected:
        start = time.perf_counter()
        module = importlib.import_module(f"benchmarks.{name}")
        result = module.main(quick=args.quick)
        print(f"  ({name}: {time.perf_counter() - start:.1f} s)")
        if hasattr(module, "targets"):
            checks.extend(module.targets(result, args.quick))
    if checks:
        print_table(
            "Targets: each figure beside its target",
            ["figure", "measured", "target", "verdict"],
            [[c.figure, c.measured, c.target, c.verdict] for c in checks],
        )
    print(
        f"\n{machine_description()}; total {time.perf_counter() - started:.0f} s"
        f"{' (quick sizes)' if args.quick else ''}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
