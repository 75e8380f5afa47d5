"""Run every benchmark: `python -m benchmarks [--quick] [NAME ...]`.

Each `bench_*` module measures its subject beside a baseline in the same run
and prints a table; this runner prints the machine first.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks.common import machine_description


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, under two minutes in all")
    parser.add_argument("names", nargs="*", help="benchmark modules to run (default: all), e.g. bench_rego")
    args = parser.parse_args(argv)
    available = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    selected = args.names or available
    unknown = sorted(set(selected) - set(available))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr)
        return 2
    print(machine_description())
    for name in selected:
        start = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main(quick=args.quick)
        print(f"  ({name}: {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
