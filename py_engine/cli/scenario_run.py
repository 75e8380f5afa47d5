"""Running a scenario on the virtual-time stack and recording what every step did.

Each step is applied through the API server (as a user would with kubectl),
then the stack settles: the workload controllers, scheduler and kubelet, the
webhook (called by the API server on every pod create/delete) and the
controller loop run until nothing writes. The report of a step counts live
pods per subset, zone and node, the deletion-cost range per subset, and lists
the pods the step removed (with the subset and node they were in), and each
subset's cap at that step (`maxReplicas` resolved against the workload's
current replicas) so a report can flag a subset holding more pods than its cap.
Everything is listed in a fixed order (spec order of the subsets, then node,
then pod name), so two runs of one scenario print the same report.
"""

from __future__ import annotations

import abc
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from py_engine.assembled_stack import SPREADS, Stack
from py_engine.cli.scenario import Scenario, Step
from py_engine.model import MATCHED_ANNOTATION, ModelError
from py_engine.model.maxreplicas import parse_max_replicas
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION

ZONE = "topology.kubernetes.io/zone"
_V = TypeVar("_V")


@dataclass
class StepReport:
    index: int
    name: str
    time: float
    replicas: int
    subsets: dict[str, int]
    zones: dict[str, int]
    nodes: dict[str, int]
    pending: int
    costs: dict[str, list[int]]
    removed: list[dict[str, str]] = field(default_factory=list)
    added: int = 0
    caps: dict[str, int | None] = field(default_factory=dict)

    @property
    def over_cap(self) -> dict[str, int]:
        """Subsets holding more pods than their cap at this step: name -> pods above it."""
        return {
            name: self.subsets.get(name, 0) - cap
            for name, cap in self.caps.items()
            if cap is not None and self.subsets.get(name, 0) > cap
        }

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "overCap": self.over_cap}


def resolved_caps(spread: dict[str, Any], replicas: int) -> dict[str, int | None]:
    """Each subset's cap in pods for `replicas` (None: unlimited, or a cap the model refuses)."""
    caps: dict[str, int | None] = {}
    for subset in (spread.get("spec") or {}).get("subsets") or []:
        if not isinstance(subset, dict) or not isinstance(subset.get("name"), str):
            continue
        try:
            cap = parse_max_replicas(subset.get("maxReplicas"))
        except ModelError:
            cap = None
        caps[subset["name"]] = None if cap is None else cap.resolve(replicas)
    return caps


def _subset(pod: dict[str, Any]) -> str:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)
    try:
        return str(json.loads(raw)["subset"]) if raw else "-"
    except (ValueError, KeyError, TypeError):
        return "-"


class StepRunner(abc.ABC):
    """Runs a scenario's steps on a started `Stack`: a report of the start, then one per step."""

    scenario: Scenario
    stack: Stack

    @abc.abstractmethod
    def setup(self) -> None:
        """Create the scenario's objects and let the cluster settle."""

    @abc.abstractmethod
    def pods(self) -> dict[str, dict[str, Any]]:
        """The live pods under test, by name."""

    @abc.abstractmethod
    def change_workload(self, step: Step) -> None:
        """Carry out a step on the object under test (scale, maxReplicas, rollingUpdate)."""

    def apply(self, step: Step) -> None:
        """Carry out one step, then advance the clock (`advance`) or let the cluster settle."""
        api = self.stack.api
        if step.kind == "taint":
            node = api.get("v1/nodes", None, step.value["node"])
            taint = {k: step.value[k] for k in ("key", "value", "effect") if step.value.get(k) is not None}
            taint.setdefault("effect", "NoSchedule")
            taints = [*(node.get("spec", {}).get("taints") or []), taint]
            api.patch("v1/nodes", None, step.value["node"], {"spec": {"taints": taints}}, "merge")
        elif step.kind == "cordon":
            api.patch("v1/nodes", None, step.value, {"spec": {"unschedulable": True}}, "merge")
        elif step.kind == "removeNode":
            self.stack.cluster.delete_node(step.value)
        elif step.kind != "advance":
            self.change_workload(step)
        if step.kind == "advance":
            self.stack.advance(float(step.value))
        else:
            self.stack.settle(self.scenario.settle_seconds)

    subset_names: list[str]

    @abc.abstractmethod
    def subset_of(self, pod: dict[str, Any]) -> str:
        """The subset a pod counts in ("-": none)."""

    @abc.abstractmethod
    def sizes(self) -> tuple[int, dict[str, int | None]]:
        """The object's replicas now and each subset's cap for them."""

    def costs(self, pods: dict[str, dict[str, Any]]) -> dict[str, list[int]]:
        """Per subset, the lowest and highest deletion cost its pods carry (none by default)."""
        return {}

    def _in_subset_order(self, counts: dict[str, _V]) -> dict[str, _V]:
        order = {n: i for i, n in enumerate([*self.subset_names, "-"])}
        return dict(sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))

    def report(self, index: int, name: str, before: dict[str, dict[str, Any]]) -> StepReport:
        """The state after a step; `before` holds the pods before it."""
        pods = self.pods()
        nodes = {n["metadata"]["name"]: n for n in self.stack.api.list("v1/nodes")["items"]}
        subsets: Counter[str] = Counter({s: 0 for s in self.subset_names})
        zones: Counter[str] = Counter()
        per_node: Counter[str] = Counter()
        pending = 0
        for pod in pods.values():
            subsets[self.subset_of(pod)] += 1
            node = pod["spec"].get("nodeName")
            if not node:
                pending += 1
                continue
            per_node[node] += 1
            zones[((nodes.get(node) or {}).get("metadata", {}).get("labels") or {}).get(ZONE, "-")] += 1
        costs = self._in_subset_order(self.costs(pods))
        replicas, caps = self.sizes()
        return StepReport(
            index,
            name,
            round(self.stack.clock.monotonic(), 3),
            replicas,
            self._in_subset_order(dict(subsets)),
            dict(sorted(zones.items())),
            dict(sorted(per_node.items())),
            pending,
            costs,
            removed_pods(before, pods, self.subset_names, self.subset_of),
            len([n for n in pods if n not in before]),
            caps,
        )

    def run(self, progress: Callable[[StepReport], None] | None = None) -> list[StepReport]:
        self.setup()
        reports = [self.report(0, "initial", {})]
        if progress is not None:
            progress(reports[-1])
        for index, step in enumerate(self.scenario.steps, start=1):
            before = self.pods()
            self.apply(step)
            reports.append(self.report(index, step.name, before))
            if progress is not None:
                progress(reports[-1])
        return reports


def removed_pods(
    before: dict[str, dict[str, Any]],
    pods: dict[str, dict[str, Any]],
    subset_names: list[str],
    subset_of: Callable[[dict[str, Any]], str],
) -> list[dict[str, str]]:
    """The pods of `before` gone from `pods`.

    In subset order (unknown subsets last), then by node and name."""
    order = {n: i for i, n in enumerate([*subset_names, "-"])}
    return sorted(
        (
            {"pod": n, "subset": subset_of(p), "node": str(p["spec"].get("nodeName") or "")}
            for n, p in before.items()
            if n not in pods
        ),
        key=lambda r: (order.get(r["subset"], len(order)), r["subset"], r["node"], r["pod"]),
    )


class ScenarioRun(StepRunner):
    """Apply a scenario's steps to a started `Stack` and report each one."""

    def __init__(self, scenario: Scenario, stack: Stack) -> None:
        self.scenario, self.stack = scenario, stack
        self.namespace = str(scenario.workload.get("metadata", {}).get("namespace") or "default")
        self.name = str(scenario.workload["metadata"]["name"])
        self.kind = scenario.workload_kind
        self.spread_name = str(scenario.spread["metadata"]["name"])
        self.subset_names = [str(s.get("name")) for s in scenario.spread.get("spec", {}).get("subsets") or []]

    def pods(self) -> dict[str, dict[str, Any]]:
        # The template's labels are on every pod of the workload (a Job's selector is generated).
        labels = self.scenario.workload["spec"]["template"]["metadata"]["labels"]
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        items = self.stack.api.list("v1/pods", self.namespace, label_selector=selector or None)["items"]
        return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}

    def setup(self) -> None:
        workload = dict(self.scenario.workload)
        self.stack.create(self.kind.resource, workload, self.namespace)
        self.stack.create(SPREADS, dict(self.scenario.spread), self.namespace)
        self.stack.settle(self.scenario.settle_seconds)

    def change_workload(self, step: Step) -> None:
        api, ns = self.stack.api, self.namespace
        if step.kind == "scale":
            api.patch(
                self.kind.resource, ns, self.name, {"spec": {self.kind.replicas_field: step.value}}, "merge"
            )
        elif step.kind == "maxReplicas":
            spread = api.get(SPREADS, ns, self.spread_name)
            for subset in spread["spec"]["subsets"]:
                if subset.get("name") == step.value["subset"]:
                    subset["maxReplicas"] = step.value["value"]
            api.update(SPREADS, ns, self.spread_name, spread)
            self.stack.wait_webhook_generation(ns, self.spread_name)
        elif step.kind == "rollingUpdate":
            workload = api.get(self.kind.resource, ns, self.name)
            for container in workload["spec"]["template"]["spec"]["containers"]:
                container["image"] = step.value["image"]
            api.update(self.kind.resource, ns, self.name, workload)

    def subset_of(self, pod: dict[str, Any]) -> str:
        return _subset(pod)

    def costs(self, pods: dict[str, dict[str, Any]]) -> dict[str, list[int]]:
        costs: dict[str, list[int]] = {}
        for pod in pods.values():
            raw = (pod["metadata"].get("annotations") or {}).get(DELETION_COST_ANNOTATION)
            if raw is not None and str(raw).lstrip("-").isdigit():
                low_high = costs.setdefault(_subset(pod), [int(raw), int(raw)])
                low_high[0], low_high[1] = min(low_high[0], int(raw)), max(low_high[1], int(raw))
        return costs

    def sizes(self) -> tuple[int, dict[str, int | None]]:
        workload = self.stack.api.get(self.kind.resource, self.namespace, self.name)
        replicas = int(workload["spec"].get(self.kind.replicas_field) or 0)
        spread = self.stack.api.get(SPREADS, self.namespace, self.spread_name)
        return replicas, resolved_caps(spread, replicas)
