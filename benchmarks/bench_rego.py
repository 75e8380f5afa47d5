"""Embedded Rego evaluation time: one validation, and one subset decision for a
10-subset spread (without nodes; with a raw 100-node inventory; with a 1,000-node
inventory reduced to policy node classes as the admission path does, reduction
included), each beside the baseline of a trivial rule evaluated with the same
input (the engine's floor: input conversion plus one query). Last, a hit of the
admission path's decision cache beside the evaluation it saves.
Target: <= 100 us per subset decision.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.common import machine_description, print_table, time_per_call
from benchmarks.kube_objects import workload_spread
from py_engine.placement.classes import constrained_label_keys, policy_node_classes
from py_engine.placement.eligibility import (
    SUBSET_DECISION_RULE,
    EligibilityCache,
    build_eligibility_input,
    decide_eligibility_cached,
)
from py_engine.policy import PolicySource, create_engine, load_policy_sources
from py_engine.validation import VALIDATION_RULE, build_review_input

TRIVIAL = PolicySource("bench_baseline.rego", "package bench\nimport rego.v1\nfloor := true\n")


def ten_subset_spread() -> dict[str, Any]:
    subsets = []
    for i in range(10):
        subsets.append(
            {
                "name": f"zone-{i}",
                "maxReplicas": 10 if i < 9 else None,
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [f"z{i}"]}
                    ]
                },
                "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
                "patch": {"metadata": {"labels": {"zone": f"z{i}"}}},
            }
        )
    subsets[-1].pop("maxReplicas")
    return workload_spread("bench", subsets)


def pod() -> dict[str, Any]:
    return {
        "metadata": {"generateName": "web-", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "nginx",
                    "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                }
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                                ]
                            }
                        ]
                    }
                }
            },
        },
    }


def nodes(count: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"n{i}",
            "labels": {"topology.kubernetes.io/zone": f"z{i % 10}", "kubernetes.io/arch": "amd64"},
            "taints": [],
            "free": {"cpu": 4, "memory": 8 * 2**30, "pods": 100},
        }
        for i in range(count)
    ]


def _reduced(engine: Any, rule: str, make_input: Callable[[], dict[str, Any]]) -> Any:
    """One admission's worth: reduce the inventory to node classes, then evaluate."""
    return engine.evaluate(rule, make_input())


def main(quick: bool = False) -> list[dict[str, Any]]:
    repeat = 200 if quick else 2000
    engine = create_engine(sources=(*load_policy_sources(), TRIVIAL))
    spread = ten_subset_spread()
    cluster = nodes(1000)
    keys, by_name = constrained_label_keys(pod(), spread["spec"]["subsets"])

    def with_node_classes() -> dict[str, Any]:
        classes = policy_node_classes(cluster, keys, keep_names=by_name)
        return build_eligibility_input(pod(), spread["spec"]["subsets"], nodes=classes)

    cases: list[tuple[str, str, Callable[[], dict[str, Any]]]] = [
        ("validation (10 subsets)", VALIDATION_RULE, lambda: build_review_input(spread)),
        (
            "subset decision (10 subsets)",
            SUBSET_DECISION_RULE,
            lambda: build_eligibility_input(pod(), spread["spec"]["subsets"]),
        ),
        (
            "subset decision + 100 raw nodes",
            SUBSET_DECISION_RULE,
            lambda: build_eligibility_input(pod(), spread["spec"]["subsets"], nodes=nodes(100)),
        ),
        ("subset decision + 1,000 nodes as classes", SUBSET_DECISION_RULE, with_node_classes),
    ]
    rows: list[list[str]] = []
    results: list[dict[str, Any]] = []
    for label, rule, make_input in cases:
        policy_input = make_input()
        assert engine.evaluate(rule, policy_input) is not None
        if make_input is with_node_classes:  # the reduction runs on every admission: time it too
            seconds = time_per_call(
                partial(_reduced, engine, rule, with_node_classes), repeat=max(repeat // 20, 10)
            )
        else:
            seconds = time_per_call(partial(engine.evaluate, rule, policy_input), repeat=repeat)
        floor = time_per_call(partial(engine.evaluate, "data.bench.floor", policy_input), repeat=repeat)
        rows.append([label, f"{seconds * 1e6:.1f} us", f"{floor * 1e6:.1f} us", f"{seconds / floor:.1f}x"])
        results.append({"case": label, "seconds": seconds, "baseline_seconds": floor})
    print_table(
        "Embedded Rego (regorus) per evaluation, vs a trivial rule on the same input",
        ["case", "time", "baseline", "ratio"],
        rows,
    )
    decision = float(results[1]["seconds"])
    verdict = "met" if decision <= 100e-6 else "NOT met"
    print(f"  subset decision target <= 100 us: {verdict} ({decision * 1e6:.1f} us)")
    results.append(_cache_hit(engine, build_eligibility_input(pod(), spread["spec"]["subsets"]), repeat))
    return results


def _cache_hit(engine: Any, policy_input: dict[str, Any], repeat: int) -> dict[str, Any]:
    """A decision-cache hit (digest of the input + LRU lookup), beside the evaluation it saves."""
    cache = EligibilityCache()
    decide_eligibility_cached(engine, policy_input, cache)
    hit = time_per_call(partial(decide_eligibility_cached, engine, policy_input, cache), repeat=repeat)
    evaluation = time_per_call(partial(decide_eligibility_cached, engine, policy_input, None), repeat=repeat)
    print(
        f"  decision-cache hit: {hit * 1e6:.1f} us vs {evaluation * 1e6:.1f} us for the evaluation it saves "
        f"({evaluation / hit:.1f}x cheaper)"
    )
    return {"case": "decision-cache hit (10 subsets)", "seconds": hit, "baseline_seconds": evaluation}


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
