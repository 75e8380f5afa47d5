"""The webhook's own front end beside hypercorn under the same attacks.

Run it as `python -m benchmarks.compare_servers`.

Runs `tests/webhook/test_attacks.py` (the short variants; the long ones too with
SPREADGATE_STRESS=1) once per server through `SPREADGATE_ATTACK_SERVER`, and prints, per
attack and server, the share of probes answered 200 within 1 s and the peak RSS
(docs/operations.md, "The server itself"). Hypercorn is imported only by the attacked
process, and only when installed: without it this prints one line and stops.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(server: str) -> dict[str, str]:
    env = dict(os.environ, SPREADGATE_ATTACK_SERVER=server)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/webhook/test_attacks.py",
            "-q",
            "-s",
            "-rA",
            "-p",
            "no:cacheprovider",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    results: dict[str, str] = {}
    for line in done.stdout.splitlines():
        found = re.search(
            r"^\[([^\]]+)\] (?:spreadgate|hypercorn): (\d+)/(\d+) probes .*?peak RSS (\d+) MiB", line
        )
        if found:
            good, probes, rss = int(found.group(2)), int(found.group(3)), int(found.group(4))
            verdict = "held" if probes and good / probes >= 0.95 and rss < 512 else "FAILED"
            results[found.group(1)] = f"{verdict}: {good}/{probes} probes, {rss} MiB"
    return results


def main() -> int:
    if importlib.util.find_spec("hypercorn") is None:
        print("hypercorn is not installed (pip install hypercorn); nothing to compare")
        return 0
    table = {server: run(server) for server in ("spreadgate", "hypercorn")}
    names = sorted(set(table["spreadgate"]) | set(table["hypercorn"]))
    print(f"{'attack':32} {'spreadgate front end':34} hypercorn")
    for name in names:
        print(f"{name:32} {table['spreadgate'].get(name, '-'):34} {table['hypercorn'].get(name, '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
