"""Scale-down ranking of 100,000 pods, beside a plain `sorted()` of the same pods.

The pods are a realistic mix: 1,000 nodes in 3 zones, mostly Running and Ready,
some Pending/Unknown/not ready, a tenth with a pod-deletion-cost (a few of them
invalid), restarts, creation and ready times spread over 30 days, random UIDs.
Each case starts from the pod dicts, as `spreadgate rank` does after JSON
decoding, so parsing and validation are included:

* ReplicaSet: facts, related-pod ranks, `ActivePodsWithRanks` order (both gates on);
* ReplicaSet without the LogarithmicScaleDown buckets (exact times);
* CloneSet: availability, SpreadConstraintsRanker on the zone key (with the
  SameNodeRanker inside each zone), Kruise order.

Baseline, measured in the same run: `sorted(pods, key=creationTimestamp)`.
Target: ReplicaSet rank <= 1 s and <= 10x the baseline.

Rounds are interleaved (baseline, then each case, repeated) and the fastest of
each is reported, so a noisy shared machine affects all of them alike. Cases
run with the cyclic garbage collector paused, as `spreadgate rank` runs (the
decoded input is millions of small dicts the collector would otherwise rescan
while the ranking allocates); one row repeats the main case with it on.
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.common import Target, machine_description, print_table
from py_engine.scaledown import (
    DEFAULT_GATES,
    CloneSetSpec,
    FeatureGates,
    SpreadConstraint,
    cloneset_deletion_order,
    read_pods,
    replicaset_order,
)
from py_engine.semantics.timeutil import format_time

NOW = datetime(2024, 6, 1, tzinfo=UTC)
ZONE_KEY = "topology.kubernetes.io/zone"
TARGET_SECONDS = 1.0
TARGET_RATIO = 10.0


def make_pods(count: int, nodes: int = 1000, seed: int = 7) -> list[dict[str, Any]]:
    """`count` pod dicts shaped like `kubectl get pods -o json` items."""
    rng = random.Random(seed)
    pods: list[dict[str, Any]] = []
    for index in range(count):
        created = NOW - timedelta(seconds=rng.randint(60, 30 * 24 * 3600))
        phase = rng.choices(("Running", "Pending", "Unknown"), weights=(90, 8, 2))[0]
        ready = phase == "Running" and rng.random() < 0.93
        ready_at = created + timedelta(seconds=rng.randint(5, 300))
        annotations: dict[str, str] = {}
        roll = rng.random()
        if roll < 0.09:
            annotations["controller.kubernetes.io/pod-deletion-cost"] = str(rng.randint(-100, 100))
        elif roll < 0.1:
            annotations["controller.kubernetes.io/pod-deletion-cost"] = rng.choice(("+5", "007", "x"))
        scheduled = phase != "Pending" or rng.random() < 0.5
        pods.append(
            {
                "metadata": {
                    "name": f"web-{index:06d}",
                    "namespace": "default",
                    "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    "creationTimestamp": format_time(created),
                    "annotations": annotations,
                    "labels": {"app": "web", "pod-template-hash": "5d4f8b9c7"},
                },
                "spec": {"nodeName": f"node-{rng.randrange(nodes):04d}" if scheduled else ""},
                "status": {
                    "phase": phase,
                    "conditions": [
                        {"type": "Initialized", "status": "True", "lastTransitionTime": format_time(created)},
                        {
                            "type": "Ready",
                            "status": "True" if ready else "False",
                            "lastTransitionTime": format_time(ready_at),
                        },
                        {
                            "type": "PodScheduled",
                            "status": "True",
                            "lastTransitionTime": format_time(created),
                        },
                    ],
                    "containerStatuses": [
                        {"name": "web", "restartCount": rng.choices((0, 1, 2, 7), weights=(85, 10, 4, 1))[0]}
                    ],
                },
            }
        )
    return pods


def make_nodes(nodes: int = 1000, zones: int = 3) -> dict[str, dict[str, str]]:
    """Node name -> labels, spread round-robin over the zones."""
    return {
        f"node-{n:04d}": {"kubernetes.io/hostname": f"node-{n:04d}", ZONE_KEY: f"zone-{n % zones}"}
        for n in range(nodes)
    }


def main(quick: bool = False) -> list[dict[str, Any]]:
    count = 10_000 if quick else 100_000
    rounds = 3 if quick else 7
    pods = make_pods(count)
    nodes = make_nodes()
    exact = FeatureGates(pod_deletion_cost=True, logarithmic_scale_down=False)
    spec = CloneSetSpec(constraints=(SpreadConstraint(ZONE_KEY),))

    def baseline() -> object:
        return sorted(pods, key=lambda pod: pod["metadata"]["creationTimestamp"])

    def replicaset(gates: FeatureGates = DEFAULT_GATES) -> object:
        facts = read_pods(pods)
        return replicaset_order(facts, facts, now=NOW, gates=gates).order

    def cloneset() -> object:
        facts = read_pods(pods)
        return cloneset_deletion_order(facts, spec, nodes, NOW, explain=False)

    def paused(func: Callable[[], object]) -> Callable[[], object]:
        """Run with the cyclic GC off, as `spreadgate rank` does."""

        def run() -> object:
            gc.disable()
            try:
                return func()
            finally:
                gc.enable()

        return run

    cases: list[tuple[str, Callable[[], object]]] = [
        ("plain sorted() by creationTimestamp", paused(baseline)),
        ("ReplicaSet (buckets + UID)", paused(replicaset)),
        ("ReplicaSet (exact times)", paused(lambda: replicaset(exact))),
        ("CloneSet (zone spread ranker)", paused(cloneset)),
        ("ReplicaSet (buckets + UID), GC on", replicaset),
    ]
    # Interleaved rounds, fastest of each: on a shared machine this keeps the
    # baseline and the rankings under the same conditions.
    samples: dict[str, list[float]] = {label: [] for label, _ in cases}
    for _ in range(rounds):
        for label, func in cases:
            gc.collect()
            start = time.perf_counter()
            func()
            samples[label].append(time.perf_counter() - start)
    base = min(samples[cases[0][0]])
    rows: list[list[object]] = []
    results: list[dict[str, Any]] = []
    for label, _ in cases:
        best = min(samples[label])
        median = statistics.median(samples[label])
        rows.append(
            [label, f"{count:,}", f"{best * 1e3:.0f} ms", f"{median * 1e3:.0f} ms", f"{best / base:.1f}x"]
        )
        results.append(
            {"case": label, "pods": count, "seconds": best, "median_seconds": median, "ratio": best / base}
        )
    print_table(
        f"Scale-down ranking of {count:,} pods (1,000 nodes, 3 zones), "
        f"fastest of {rounds} interleaved rounds",
        ["case", "pods", "best", "median", "ratio vs sorted()"],
        rows,
    )
    main_case = results[1]
    if quick:
        print("  (quick run: the 1 s / 10x target applies to the full 100,000-pod run)")
    else:
        verdict = main_case["seconds"] <= TARGET_SECONDS and main_case["ratio"] <= TARGET_RATIO
        print(
            f"  ReplicaSet target <= {TARGET_SECONDS:.0f} s and <= {TARGET_RATIO:.0f}x the baseline: "
            f"{'met' if verdict else 'NOT met'}"
        )
    return results


def targets(results: list[dict[str, Any]], quick: bool) -> list[Target]:
    """The target is the time; the ratio to sorted() is this module's own, shown beside it."""
    main_case = results[1]
    return [
        Target(
            f"rank {main_case['pods']:,} pods (ReplicaSet)",
            f"{main_case['seconds']:.2f} s ({main_case['ratio']:.1f}x sorted())",
            f"<= {TARGET_SECONDS:.0f} s",
            None if quick else main_case["seconds"] <= TARGET_SECONDS,
        )
    ]


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
