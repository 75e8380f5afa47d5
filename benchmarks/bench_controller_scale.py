"""The controllers' sync cores at cluster scale: 50,000 pods / 1,000 WorkloadSpreads and
1,000 UnitedDeployments x 5 subsets, beside the sizes `bench_reconcile` and `bench_united`
measure (their baselines, in the same run).

WorkloadSpread: `benchmarks.bench_reconcile`'s namespace (Deployments with one ReplicaSet and
one spread of three subsets each, pods over 3 zones) at 1,000 Deployments x 50 pods, every
sync handed what the controller's source gives it (the namespace's owner-indexed `PodList`,
its ReplicaSets, every node). Reported: the first sync of every spread (every cost and
status new), the steady pass (best of 3; must write nothing), and the same two at 100 x 100
(10,000 pods), so the per-pod cost of both sizes can be compared.

UnitedDeployment: `benchmarks.bench_united`'s namespace at 1,000 UnitedDeployments (5
subsets, 20 replicas: 5,000 Deployments, 20,000 pods), the steady pass (best of 3; must write
nothing), beside the 100-UnitedDeployment pass.

Memory: the growth of a fresh interpreter's resident set while the objects of one size are built
and synced (what the controller's watch caches hold, as parsed JSON, plus the sync's own state).
Times are wall seconds with the process's CPU seconds beside them: on a shared machine the CPU
figure is the one to compare (wall includes waiting for a core).

Targets: 50,000 / 1,000 first sync <= 5 s, steady pass <= 2 s with 0 writes; 1,000 UDs x 5
steady pass <= 1 s with 0 writes.

Run: `python -m benchmarks bench_controller_scale` (about 6 minutes on a loaded 2-core machine;
`--quick` at a fifth of the sizes).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import bench_reconcile, bench_united
from benchmarks.common import Target, best_of, machine_description, print_table

FIRST_TARGET = 5.0
STEADY_TARGET = 2.0
UD_TARGET = 1.0


def resident_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_and_wall(func: Callable[[], Any]) -> tuple[Any, float]:
    """`func()` and the CPU seconds this process spent in it (robust to a loaded machine)."""
    started = time.process_time()
    result = func()
    return result, time.process_time() - started


def spreads(deployments: int, pods_each: int, rounds: int) -> dict[str, Any]:
    rng = random.Random(8)
    ns = bench_reconcile.Namespace()
    caps = {"s0": pods_each * 6 // 10, "s1": pods_each * 3 // 10, "s2": None}
    counts = {"s0": pods_each * 6 // 10, "s1": pods_each * 3 // 10, "s2": pods_each - pods_each * 9 // 10}
    for d in range(deployments):
        ns.add(f"web{d:04d}", counts, caps, rng)
    first, first_cpu = cpu_and_wall(lambda: bench_reconcile.sync(ns))
    steady = bench_reconcile.sync(ns)
    steady_seconds = best_of(rounds, lambda: bench_reconcile.sync(ns).seconds)
    steady_cpu = best_of(rounds, lambda: cpu_and_wall(lambda: bench_reconcile.sync(ns))[1])
    return {
        "pods": len(ns.pods),
        "spreads": deployments,
        "first_seconds": first.seconds,
        "first_cpu": first_cpu,
        "first_writes": first.writes,
        "steady_seconds": steady_seconds,
        "steady_cpu": steady_cpu,
        "steady_writes": steady.writes,
    }


def uniteds(count: int, rounds: int) -> dict[str, Any]:
    ns = bench_united.Namespace(count)
    bench_united.sync_all(ns)
    ns.run_workloads()
    bench_united.sync_all(ns)
    steady = bench_united.sync_all(ns)
    steady_seconds = best_of(rounds, lambda: bench_united.sync_all(ns).seconds)
    steady_cpu = best_of(rounds, lambda: cpu_and_wall(lambda: bench_united.sync_all(ns))[1])
    return {
        "uds": count,
        "pods": len(ns.pods),
        "workloads": len(ns.workloads),
        "steady_seconds": steady_seconds,
        "steady_cpu": steady_cpu,
        "steady_writes": steady.writes,
    }


def rss_growth(kind: str, size: int) -> int:
    """The resident-set growth of a fresh interpreter while it builds and syncs one size
    (`kind` "ws": `size` Deployments x 50 pods; "ud": `size` UnitedDeployments)."""
    code = (
        "import gc, sys; from benchmarks import bench_controller_scale as b; gc.collect(); "
        "before = b.resident_bytes(); "
        f"b.spreads({size}, 50, 1) if {kind!r} == 'ws' else b.uniteds({size}, 1); "
        "print(b.resident_bytes() - before)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, check=True
    )
    return int(done.stdout.strip().splitlines()[-1])


def main(quick: bool = False) -> dict[str, Any]:
    scale = 5 if quick else 1
    rounds = 3
    base = spreads(100 // scale, 100, rounds)
    big = spreads(1_000 // scale, 50, rounds)
    ud_base = uniteds(100 // scale, rounds)
    ud_big = uniteds(1_000 // scale, rounds)
    base["rss"], big["rss"] = rss_growth("ws", 100 // scale), rss_growth("ws", 1_000 // scale)
    ud_base["rss"], ud_big["rss"] = rss_growth("ud", 100 // scale), rss_growth("ud", 1_000 // scale)
    rows: list[list[object]] = []
    for r in (base, big):
        rows.append(
            [
                f"WorkloadSpread: {r['spreads']:,} spreads",
                f"{r['pods']:,}",
                f"{r['first_seconds']:.2f} s ({r['first_cpu']:.2f})",
                r["first_writes"],
                f"{r['steady_seconds']:.2f} s ({r['steady_cpu']:.2f})",
                r["steady_writes"],
                f"{r['steady_cpu'] / r['pods'] * 1e6:.1f} /pod",
                f"{r['rss'] / 2**20:.0f}",
            ]
        )
    for r in (ud_base, ud_big):
        rows.append(
            [
                f"UnitedDeployment: {r['uds']:,} x 5 subsets",
                f"{r['pods']:,}",
                "-",
                "-",
                f"{r['steady_seconds']:.2f} s ({r['steady_cpu']:.2f})",
                r["steady_writes"],
                f"{r['steady_cpu'] / r['uds'] * 1e6:.0f} /UD",
                f"{r['rss'] / 2**20:.0f}",
            ]
        )
    print_table(
        "Controller sync cores at scale: wall (CPU) seconds, steady pass best of 3",
        ["case", "pods", "first sync", "writes", "steady pass", "writes", "steady CPU µs", "RSS growth MiB"],
        rows,
    )
    print(
        f"  steady CPU per pod, large / baseline size: "
        f"{(big['steady_cpu'] / big['pods']) / (base['steady_cpu'] / base['pods']):.2f}x; "
        f"per UD: {(ud_big['steady_cpu'] / ud_big['uds']) / (ud_base['steady_cpu'] / ud_base['uds']):.2f}x "
        f"(1.0x: linear); load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}"
    )
    return {"base": base, "big": big, "ud_base": ud_base, "ud_big": ud_big}


def targets(result: dict[str, Any], quick: bool) -> list[Target]:
    big, ud = result["big"], result["ud_big"]
    applies = None if quick else True
    return [
        Target(
            f"controller first sync, {big['pods']:,} pods / {big['spreads']:,} spreads",
            f"{big['first_seconds']:.2f} s (CPU {big['first_cpu']:.2f})",
            f"<= {FIRST_TARGET:.0f} s",
            applies and big["first_seconds"] <= FIRST_TARGET,
        ),
        Target(
            f"controller steady pass, {big['pods']:,} pods / {big['spreads']:,} spreads (writes)",
            f"{big['steady_seconds']:.2f} s, CPU {big['steady_cpu']:.2f} ({big['steady_writes']})",
            f"<= {STEADY_TARGET:.0f} s, 0 writes",
            (applies and big["steady_seconds"] <= STEADY_TARGET) if big["steady_writes"] == 0 else False,
        ),
        Target(
            f"UD steady pass, {ud['uds']:,} UDs x 5 subsets (writes)",
            f"{ud['steady_seconds']:.2f} s, CPU {ud['steady_cpu']:.2f} ({ud['steady_writes']})",
            f"<= {UD_TARGET:.0f} s, 0 writes",
            (applies and ud["steady_seconds"] <= UD_TARGET) if ud["steady_writes"] == 0 else False,
        ),
        Target(
            f"controller RSS growth at {big['pods']:,} pods / {big['spreads']:,} spreads; {ud['uds']:,} UDs",
            f"{big['rss'] / 2**20:.0f} MiB; {ud['rss'] / 2**20:.0f} MiB",
            "stated",
            True,
        ),
    ]


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
