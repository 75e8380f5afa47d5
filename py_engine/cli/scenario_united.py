"""UnitedDeployment scenarios for `spreadgate simulate`: parse and run.

A scenario with `unitedDeployment:` (instead of `workload:` + `workloadSpread:`)
creates that UnitedDeployment on the embedded cluster, whose UnitedDeployment
controller creates one workload per subset; the steps are those of
WorkloadSpread scenarios (docs/scenarios.md), applied to the UnitedDeployment:

* `scale: N` goes through the `/scale` subresource, as `kubectl scale sgud/NAME`
  and an HPA do;
* `maxReplicas: {subset, value}` edits the subset's `maxReplicas`;
* `rollingUpdate: {image}` sets the template's container images (partitions apply);
* `taint`, `cordon`, `removeNode`, `advance` act on nodes and time as before.

The report counts pods per subset from the subset label the controller puts on
every pod, and gives each subset's `maxReplicas` as its cap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from py_engine.assembled_stack import Stack
from py_engine.cli.scenario import Scenario, ScenarioError, Step, build_scenario
from py_engine.cli.scenario_run import StepRunner
from py_engine.model.errors import ModelError
from py_engine.model.ud_constants import KRUISE_SUBSET_NAME_LABEL, SUBSET_NAME_LABEL, UD_KIND
from py_engine.model.uniteddeployment import UnitedDeployment, parse_replica_value
from py_engine.sim.nodepool import NodePoolError, nodes_from_description

UDS = "spreadgate.dev/v1beta1/uniteddeployments"
RUNNABLE = ("deploymentTemplate", "statefulSetTemplate")


def parse_united(data: Mapping[str, Any], source: str) -> Scenario:
    """A scenario whose object is a UnitedDeployment (see the module docstring)."""
    for key in ("nodes", "steps"):
        if key not in data:
            raise ScenarioError(f"{source}: missing {key}")
    for key in ("workload", "workloadSpread"):
        if key in data:
            raise ScenarioError(f"{source}: {key} and unitedDeployment are exclusive")
    try:
        nodes = nodes_from_description(data["nodes"], source=f"{source}: nodes")
    except NodePoolError as exc:
        raise ScenarioError(str(exc)) from None
    raw = data["unitedDeployment"]
    if not isinstance(raw, Mapping) or raw.get("kind") != UD_KIND:
        raise ScenarioError(f"{source}: unitedDeployment must be a UnitedDeployment object")
    obj = {**raw, "apiVersion": "spreadgate.dev/v1beta1"}
    obj["metadata"] = {"namespace": "default", **(raw.get("metadata") or {})}
    try:
        ud = UnitedDeployment.from_object(obj)
    except ModelError as exc:
        raise ScenarioError(f"{source}: unitedDeployment: {exc}") from None
    if ud.template.key not in RUNNABLE:
        raise ScenarioError(
            f"{source}: unitedDeployment: the embedded cluster runs the pods of "
            f"{' and '.join(RUNNABLE)} only, not {ud.template.key}"
        )
    if not isinstance(data["steps"], list) or not data["steps"]:
        raise ScenarioError(f"{source}: steps must be a non-empty list")
    return build_scenario(data, source, nodes, workload={}, spread={}, united=obj)


def _subset_of(pod: Mapping[str, Any]) -> str:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return str(labels.get(SUBSET_NAME_LABEL) or labels.get(KRUISE_SUBSET_NAME_LABEL) or "-")


class UnitedScenarioRun(StepRunner):
    """Apply a UnitedDeployment scenario's steps to a started `Stack` and report each one."""

    def __init__(self, scenario: Scenario, stack: Stack) -> None:
        if scenario.united is None:
            raise ScenarioError(f"{scenario.name}: not a UnitedDeployment scenario")
        self.scenario, self.stack = scenario, stack
        self.obj: dict[str, Any] = dict(scenario.united)
        self.namespace = str(self.obj["metadata"]["namespace"])
        self.name = str(self.obj["metadata"]["name"])
        self.subset_names = [s.name for s in UnitedDeployment.from_object(self.obj).subsets]

    def current(self) -> dict[str, Any]:
        found: dict[str, Any] = self.stack.api.get(UDS, self.namespace, self.name)
        return found

    def pods(self) -> dict[str, dict[str, Any]]:
        labels = self.obj["spec"]["selector"].get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        items = self.stack.api.list("v1/pods", self.namespace, label_selector=selector or None)["items"]
        return {
            p["metadata"]["name"]: p
            for p in items
            if not p["metadata"].get("deletionTimestamp") and _subset_of(p) != "-"
        }

    def setup(self) -> None:
        self.stack.create(UDS, dict(self.obj), self.namespace)
        self.stack.settle(self.scenario.settle_seconds)

    def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        obj = self.current()
        change(obj)
        self.stack.api.update(UDS, self.namespace, self.name, obj)

    def change_workload(self, step: Step) -> None:
        api, ns = self.stack.api, self.namespace
        if step.kind == "scale":
            api.patch(UDS, ns, self.name, {"spec": {"replicas": step.value}}, "merge", subresource="scale")
        elif step.kind == "maxReplicas":

            def cap(obj: dict[str, Any]) -> None:
                for subset in obj["spec"]["topology"]["subsets"]:
                    if subset.get("name") == step.value["subset"]:
                        subset["maxReplicas"] = step.value["value"]

            self._update(cap)
        elif step.kind == "rollingUpdate":

            def image(obj: dict[str, Any]) -> None:
                for body in obj["spec"]["template"].values():
                    for container in body["spec"]["template"]["spec"]["containers"]:
                        container["image"] = step.value["image"]

            self._update(image)

    def caps(self, obj: Mapping[str, Any], replicas: int) -> dict[str, int | None]:
        caps: dict[str, int | None] = {}
        for subset in obj["spec"]["topology"]["subsets"]:
            try:
                value = parse_replica_value(subset.get("maxReplicas"), "maxReplicas")
            except ModelError:
                value = None
            caps[str(subset["name"])] = None if value is None else value.resolve(replicas)
        return caps

    def subset_of(self, pod: dict[str, Any]) -> str:
        return _subset_of(pod)

    def sizes(self) -> tuple[int, dict[str, int | None]]:
        obj = self.current()
        replicas = int(obj["spec"].get("replicas") or 0)
        return replicas, self.caps(obj, replicas)
