"""The UnitedDeployment controller's sync core on generated objects: a pass over 100
UnitedDeployments x 5 subsets, and its writes.

Setup (no API server: the figures are the planner's and the pod selection's, which the
controller runs per key): 100 UnitedDeployments in one namespace, each with 5 subsets
(capacity mode, caps 4/4/4/4/none) and 20 replicas, so 500 Deployments and 2,000 pods.
A pass plans every UnitedDeployment from what the controller's source hands a sync: its
own pods, workloads and ControllerRevisions, picked through the indexes of
`py_engine/uniteddeployment/controller/runtime/source.py` (label pairs; controller owner uid).

Reported, applying every write before the next pass as the writer would:

1. first pass: every ControllerRevision, every subset Deployment and every status is new;
2. steady state after the workloads and pods exist: must write nothing;
3. `/scale` of one UnitedDeployment from 20 to 24: the writes of that one.

Baseline in the same run: the same steady pass with every sync handed the namespace's
2,000 pods, 500 workloads and 100 ControllerRevisions (what a source without the indexes
gives; the planner then filters by selector and owner).
Targets: steady-state writes 0; the steady pass at most the baseline's time.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchmarks.common import Target, best_of, machine_description, print_table
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.plan import Plan, plan
from py_engine.uniteddeployment.controller.runtime.source import OwnedIndex, PodIndex
from py_engine.uniteddeployment.controller.state import UnitedState

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
NAMESPACE = "default"
POD_HASH = "7c9d8b5f4"  # the pod-template-hash of every subset's one ReplicaSet
SUBSETS = 5
REPLICAS = 20
JSON = dict[str, Any]


def united(index: int) -> JSON:
    app = f"app{index:03d}"
    subsets = [
        {
            "name": f"s{k}",
            **({"maxReplicas": 4} if k < SUBSETS - 1 else {}),
            "nodeSelectorTerm": {
                "matchExpressions": [{"key": "pool", "operator": "In", "values": [f"p{k}"]}]
            },
        }
        for k in range(SUBSETS)
    ]
    return {
        "apiVersion": "spreadgate.dev/v1beta1",
        "kind": "UnitedDeployment",
        "metadata": {"name": app, "namespace": NAMESPACE, "uid": f"uid-{app}", "generation": 1},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "deploymentTemplate": {
                    "metadata": {"labels": {"app": app}},
                    "spec": {
                        "selector": {"matchLabels": {"app": app}},
                        "template": {
                            "metadata": {"labels": {"app": app}},
                            "spec": {"containers": [{"name": "c", "image": "i"}]},
                        },
                    },
                }
            },
            "topology": {"subsets": subsets},
        },
    }


class Namespace:
    """The objects of the namespace, changed in place as the controller's writes would."""

    def __init__(self, count: int) -> None:
        self.uds = [united(i) for i in range(count)]
        self.workloads: list[JSON] = []
        self.revisions: list[JSON] = []
        self.pods: list[JSON] = []
        self._serial = 0

    def _name(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}{self._serial:06d}"

    def apply(self, ud: JSON, result: Plan) -> int:
        """Apply one plan's writes; returns how many API writes they are."""
        writes = 0
        for obj in result.create:
            created = copy.deepcopy(obj)
            meta = created["metadata"]
            meta.setdefault("name", self._name(str(meta.get("generateName") or "x-")))
            meta["uid"] = f"uid-{meta['name']}"
            (self.revisions if obj["kind"] == "ControllerRevision" else self.workloads).append(created)
            writes += 1
        for obj in result.update:
            name = obj["metadata"]["name"]
            pool = self.revisions if obj["kind"] == "ControllerRevision" else self.workloads
            pool[:] = [copy.deepcopy(obj) if o["metadata"]["name"] == name else o for o in pool]
            writes += 1
        writes += len(result.delete)
        if result.status_changed:
            ud["status"] = copy.deepcopy(result.status)
            writes += 1
        return writes

    def run_workloads(self) -> None:
        """What the Deployment controllers and kubelets would do: pods for every replica, Ready,
        controlled by the Deployment's ReplicaSet and labelled with its hash, as real pods are."""
        self.pods = []
        for workload in self.workloads:
            replicas = int(workload["spec"]["replicas"])
            labels = {**workload["spec"]["template"]["metadata"]["labels"], "pod-template-hash": POD_HASH}
            replica_set = f"{workload['metadata']['name']}-{POD_HASH}"
            owner = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": replica_set,
                "uid": f"uid-{replica_set}",
                "controller": True,
            }
            for i in range(replicas):
                self.pods.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": f"{replica_set}-{i}",
                            "namespace": NAMESPACE,
                            "labels": dict(labels),
                            "ownerReferences": [dict(owner)],
                        },
                        "spec": {"nodeName": "n"},
                        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                    }
                )
            workload["status"] = {
                "replicas": replicas,
                "readyReplicas": replicas,
                "updatedReplicas": replicas,
            }


@dataclass
class Pass:
    seconds: float
    writes: int


def sync_all(ns: Namespace, *, indexed: bool = True, only: list[JSON] | None = None) -> Pass:
    """Plan every UnitedDeployment (timed: snapshot building and planning), then apply the writes."""
    started = time.perf_counter()
    pod_index = PodIndex(ns.pods) if indexed else None
    workload_index = OwnedIndex(ns.workloads) if indexed else None
    revision_index = OwnedIndex(ns.revisions) if indexed else None
    results = []
    for obj in only if only is not None else ns.uds:
        ud = UnitedDeployment.from_object(obj)
        if pod_index is not None and workload_index is not None and revision_index is not None:
            state = UnitedState(
                ud=ud,
                workloads=tuple(workload_index.select(ud.uid, ud.selector)),
                pods=tuple(pod_index.select(ud.selector)),
                revisions=tuple(revision_index.select(ud.uid, ud.selector)),
            )
        else:
            state = UnitedState(
                ud=ud, workloads=tuple(ns.workloads), pods=tuple(ns.pods), revisions=tuple(ns.revisions)
            )
        results.append((obj, plan(state, NOW)))
    seconds = time.perf_counter() - started
    return Pass(seconds, sum(ns.apply(obj, result) for obj, result in results))


def main(quick: bool = False) -> dict[str, Any]:
    count = 20 if quick else 100
    rounds = 2 if quick else 3
    ns = Namespace(count)
    first = sync_all(ns)
    ns.run_workloads()
    settle = sync_all(ns)  # statuses now count the pods
    steady = sync_all(ns)
    steady_seconds = best_of(rounds, lambda: sync_all(ns).seconds)
    baseline_seconds = best_of(rounds, lambda: sync_all(ns, indexed=False).seconds)
    target = ns.uds[0]
    target["spec"]["replicas"] = REPLICAS + 4
    target["metadata"]["generation"] = 2
    scaled = sync_all(ns, only=[target])
    ns.run_workloads()
    after = sync_all(ns)
    rows: list[list[object]] = [
        [f"first pass, {count} UDs x {SUBSETS} subsets", "0", f"{first.seconds * 1e3:.0f} ms", first.writes],
        [
            "pass after the pods exist (statuses)",
            f"{len(ns.pods):,}",
            f"{settle.seconds * 1e3:.0f} ms",
            settle.writes,
        ],
        ["steady-state pass", f"{len(ns.pods):,}", f"{steady_seconds * 1e3:.0f} ms", steady.writes],
        [
            "baseline: every sync handed the namespace's objects",
            f"{len(ns.pods):,}",
            f"{baseline_seconds * 1e3:.0f} ms",
            "-",
        ],
        [
            "/scale 20 -> 24 of one UD (its sync)",
            f"{len(ns.pods):,}",
            f"{scaled.seconds * 1e3:.1f} ms",
            scaled.writes,
        ],
        ["  pass after it", f"{len(ns.pods):,}", "-", after.writes],
    ]
    print_table(
        f"UnitedDeployment sync core: {count} UnitedDeployments x {SUBSETS} subsets, "
        f"{REPLICAS} replicas each "
        f"(best of {rounds} for the steady state and the baseline)",
        ["case", "pods", "time", "writes"],
        rows,
    )
    ratio = steady_seconds / baseline_seconds
    print(
        f"  steady-state pass / baseline (no indexes): {ratio:.2f}x; "
        f"per UnitedDeployment: {steady_seconds / count * 1e3:.2f} ms"
    )
    return {
        "uds": count,
        "subsets": SUBSETS,
        "pods": len(ns.pods),
        "first_seconds": first.seconds,
        "first_writes": first.writes,
        "steady_seconds": steady_seconds,
        "steady_writes": steady.writes,
        "baseline_seconds": baseline_seconds,
        "ratio": ratio,
        "scaled_writes": scaled.writes,
        "after_writes": after.writes,
    }


def targets(result: dict[str, Any], quick: bool) -> list[Target]:
    return [
        Target(
            f"UD steady-state writes ({result['uds']} UDs x {result['subsets']} subsets)",
            str(result["steady_writes"]),
            "0",
            result["steady_writes"] == 0,
        ),
        Target(
            "UD steady pass vs no-index baseline",
            f"{result['ratio']:.2f}x",
            "<= 1.0x",
            None if quick else result["ratio"] <= 1.0,
        ),
    ]


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
