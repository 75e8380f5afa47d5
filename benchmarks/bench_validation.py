"""Validation cost by number of subsets (issue 23, finding 5): a WorkloadSpread and a
UnitedDeployment with the most subsets the CRDs allow (`MAX_SUBSETS`), each beside a 3-subset
baseline in the same run, and at half the bound to show the cost is linear (the ratio of the
two is about 2; a quadratic rule makes it about 4).

Two paths: the policy evaluated in-process (`EmbeddedEngine`, what `spreadgate validate` runs)
and as the webhook runs it, in a policy worker process (`IsolatedEngine`: the input sent as
JSON, evaluated, the answer read back).
Targets: validating the most subsets takes < 100 ms on the webhook's path (wall clock; the CPU
time of the evaluating process is printed beside it, since on a shared machine the wall clock
also measures the other processes); cost(bound) / cost(half the bound) <= 2.5.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.common import Target, machine_description, print_table, time_per_call
from benchmarks.kube_objects import workload_spread
from py_engine.model.constants import MAX_SUBSETS
from py_engine.policy import PolicyEngine, create_engine, load_policy_sources
from py_engine.policy.isolated import IsolatedEngine
from py_engine.validation import build_review_input, validate_spread
from py_engine.validation.uniteddeployment import build_ud_review_input, validate_uniteddeployment

TARGET_SECONDS = 0.100
LINEAR_RATIO = 2.5


def spread(count: int) -> dict[str, Any]:
    """A spread of `count` subsets, each with what real ones carry: a node selector term, a
    toleration, a patch of labels and resources, and a percent cap (all but the last)."""
    subsets: list[dict[str, Any]] = []
    for i in range(count):
        subset: dict[str, Any] = {
            "name": f"zone-{i}",
            "requiredNodeSelectorTerm": {
                "matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [f"z{i}"]}
                ]
            },
            "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
            "patch": {
                "metadata": {"labels": {"zone": f"z{i}"}},
                "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "250m"}}}]},
            },
        }
        if i < count - 1:
            subset["maxReplicas"] = "1%"
        subsets.append(subset)
    return workload_spread("bench", subsets)


def united(count: int) -> dict[str, Any]:
    """A UnitedDeployment of `count` subsets in capacity mode, each with a term, a toleration and a patch."""
    subsets = [
        {
            "name": f"zone-{i}",
            "nodeSelectorTerm": {
                "matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [f"z{i}"]}
                ]
            },
            "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
            "minReplicas": 1,
            **({"maxReplicas": 3} if i < count - 1 else {}),
            "patch": {"metadata": {"labels": {"zone": f"z{i}"}}},
        }
        for i in range(count)
    ]
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }
    return {
        "apiVersion": "spreadgate.dev/v1beta1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {
            "replicas": 3 * count,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "deploymentTemplate": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template},
                }
            },
            "topology": {"subsets": subsets},
        },
    }


def _validate_spread(engine: PolicyEngine, obj: dict[str, Any]) -> None:
    assert validate_spread(engine, build_review_input(obj)) == []


def _validate_united(engine: PolicyEngine, obj: dict[str, Any]) -> None:
    assert validate_uniteddeployment(engine, build_ud_review_input(obj)) == []


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used, from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_call(func: Callable[[], object], clock: Callable[[], float], *, repeat: int) -> float:
    """Mean CPU seconds per call of `func`, read on `clock` (this thread's, or the worker's)."""
    func()
    start = clock()
    for _ in range(repeat):
        func()
    return (clock() - start) / repeat


def main(quick: bool = False) -> dict[str, Any]:
    repeat = 3 if quick else 10
    embedded = create_engine()
    isolated = IsolatedEngine(load_policy_sources(), workers=1)
    kinds: list[
        tuple[str, Callable[[int], dict[str, Any]], Callable[[PolicyEngine, dict[str, Any]], None]]
    ] = [("WorkloadSpread", spread, _validate_spread), ("UnitedDeployment", united, _validate_united)]
    sizes = (3, MAX_SUBSETS // 2, MAX_SUBSETS)
    rows: list[list[str]] = []
    result: dict[str, Any] = {}
    try:
        for kind, make, validate in kinds:
            for path, engine in (("in-process", embedded), ("webhook (worker process)", isolated)):
                validate(engine, make(3))  # warm: the worker's start is not a validation's cost
                seconds = {n: time_per_call(partial(validate, engine, make(n)), repeat=repeat) for n in sizes}
                clock = (
                    time.thread_time
                    if engine is embedded
                    else partial(_process_cpu, isolated.worker_pids()[0])
                )
                cpu = cpu_per_call(partial(validate, engine, make(MAX_SUBSETS)), clock, repeat=repeat * 5)
                result[f"{kind} {path}"] = seconds
                result[f"{kind} {path} cpu"] = cpu
                rows.append(
                    [kind, path]
                    + [f"{seconds[n] * 1000:.1f} ms" for n in sizes]
                    + [
                        f"{cpu * 1000:.1f} ms",
                        f"{seconds[MAX_SUBSETS] / seconds[MAX_SUBSETS // 2]:.2f}",
                        f"{seconds[MAX_SUBSETS] / seconds[3]:.0f}x",
                    ]
                )
    finally:
        isolated.close()
    print_table(
        f"Validation by number of subsets (bound {MAX_SUBSETS}), mean of {repeat} per cell",
        [
            "kind",
            "path",
            "3 subsets (baseline)",
            f"{MAX_SUBSETS // 2} subsets",
            f"{MAX_SUBSETS} subsets",
            f"{MAX_SUBSETS}: CPU of the evaluating process",
            f"{MAX_SUBSETS} / {MAX_SUBSETS // 2}",
            f"{MAX_SUBSETS} / 3",
        ],
        rows,
    )
    print("  Times are wall-clock means; on a shared machine they exceed the CPU column by the load.")
    return result


def targets(result: dict[str, Any], quick: bool) -> list[Target]:
    checks = []
    for kind in ("WorkloadSpread", "UnitedDeployment"):
        webhook = result[f"{kind} webhook (worker process)"]
        most = webhook[MAX_SUBSETS]
        cpu = result[f"{kind} webhook (worker process) cpu"]
        checks.append(
            Target(
                f"{kind} validation, {MAX_SUBSETS} subsets (webhook path)",
                f"{most * 1000:.1f} ms, {cpu * 1000:.1f} ms CPU (3 subsets: {webhook[3] * 1000:.1f} ms)",
                "< 100 ms",
                most < TARGET_SECONDS,
            )
        )
        ratio = result[f"{kind} in-process"][MAX_SUBSETS] / result[f"{kind} in-process"][MAX_SUBSETS // 2]
        checks.append(
            Target(
                f"{kind} validation cost, {MAX_SUBSETS} / {MAX_SUBSETS // 2} subsets",
                f"{ratio:.2f}",
                f"<= {LINEAR_RATIO} (linear)",
                ratio <= LINEAR_RATIO,
            )
        )
    return checks


if __name__ == "__main__":
    print(machine_description())
    outcome = main(quick="--quick" in sys.argv)
    print_table(
        "Targets",
        ["figure", "measured", "target", "verdict"],
        [[t.figure, t.measured, t.target, t.verdict] for t in targets(outcome, "--quick" in sys.argv)],
    )
