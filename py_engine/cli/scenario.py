"""Scenario files for `spreadgate simulate` and `spreadgate demo`: parse and check.

A scenario is YAML::

    name: elastic-pool
    description: ...
    nodes: {pools: [...]}            # a node pool description (py_engine.sim.nodepool)
    workload: {kind: Deployment...}  # the target: a Deployment, ReplicaSet, StatefulSet or Job
    workloadSpread: {...}            # the WorkloadSpread (spreadgate.dev or apps.kruise.io)
    steps:
      - scale: 120                   # spec.replicas of the workload
      - maxReplicas: {subset: on-prem, value: 50}
      - taint: {node: n-0, key: k, value: v, effect: NoSchedule}
      - cordon: n-0
      - removeNode: n-0
      - rollingUpdate: {image: nginx:2}
      - advance: 300                 # move virtual time forward (seconds)

Every step may carry a `name`. After each step the cluster settles (up to
`settleSeconds` of virtual time, default 60) before the step is reported.
`scale` sets `spec.replicas` (a Job's `spec.parallelism`); `rollingUpdate`
needs a Deployment or StatefulSet (the kinds that roll their pods). The full
format is documented in docs/scenarios.md. Errors are `ScenarioError`s whose
one-line message names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py_engine.model.constants import GROUP, KRUISE_GROUP
from py_engine.sim.nodepool import NodePoolError, nodes_from_description

STEP_KINDS = ("scale", "maxReplicas", "taint", "cordon", "removeNode", "rollingUpdate", "advance")


@dataclass(frozen=True)
class WorkloadKind:
    """How the simulation drives one workload kind of the embedded cluster."""

    api_version: str
    resource: str
    replicas_field: str
    rolls_pods: bool


WORKLOAD_KINDS: dict[str, WorkloadKind] = {
    "Deployment": WorkloadKind("apps/v1", "apps/v1/deployments", "replicas", True),
    "ReplicaSet": WorkloadKind("apps/v1", "apps/v1/replicasets", "replicas", False),
    "StatefulSet": WorkloadKind("apps/v1", "apps/v1/statefulsets", "replicas", True),
    "Job": WorkloadKind("batch/v1", "batch/v1/jobs", "parallelism", False),
}


class ScenarioError(ValueError):
    """An invalid scenario file."""


@dataclass(frozen=True)
class Step:
    kind: str
    value: Any
    name: str


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    nodes: list[dict[str, Any]]
    workload: dict[str, Any]
    spread: dict[str, Any]
    steps: tuple[Step, ...]
    settle_seconds: float = 60.0
    united: dict[str, Any] | None = None
    """A UnitedDeployment scenario's object (`unitedDeployment:`); `workload`/`spread` are then empty."""

    @property
    def workload_kind(self) -> WorkloadKind:
        return WORKLOAD_KINDS[str(self.workload["kind"])]


def _describe(kind: str, value: Any) -> str:
    if kind == "scale":
        return f"scale to {value}"
    if kind == "maxReplicas":
        return f"maxReplicas of {value['subset']} -> {value['value']}"
    if kind == "taint":
        return f"taint {value['node']} {value['key']}:{value.get('effect')}"
    if kind == "rollingUpdate":
        return f"rolling update to {value['image']}"
    if kind == "advance":
        return f"advance {value}s"
    return f"{kind} {value}"


def _step(index: int, raw: Any) -> Step:
    where = f"steps[{index}]"
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where}: must be a map")
    kinds = [k for k in raw if k in STEP_KINDS]
    unknown = [k for k in raw if k not in STEP_KINDS and k != "name"]
    if unknown or len(kinds) != 1:
        raise ScenarioError(
            f"{where}: needs exactly one of {', '.join(STEP_KINDS)}"
            + (f" (unknown: {', '.join(map(str, unknown))})" if unknown else "")
        )
    kind = kinds[0]
    value = raw[kind]
    if kind == "scale" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ScenarioError(f"{where}.scale: must be a non-negative integer")
    if kind == "advance" and (not isinstance(value, int | float) or isinstance(value, bool) or value < 0):
        raise ScenarioError(f"{where}.advance: must be a non-negative number of seconds")
    if kind in ("cordon", "removeNode") and not isinstance(value, str):
        raise ScenarioError(f"{where}.{kind}: must be a node name")
    if kind == "maxReplicas" and not (
        isinstance(value, Mapping) and isinstance(value.get("subset"), str) and "value" in value
    ):
        raise ScenarioError(f"{where}.maxReplicas: needs subset and value")
    if kind == "taint" and not (
        isinstance(value, Mapping)
        and isinstance(value.get("node"), str)
        and isinstance(value.get("key"), str)
    ):
        raise ScenarioError(f"{where}.taint: needs node and key")
    if kind == "rollingUpdate" and not (isinstance(value, Mapping) and isinstance(value.get("image"), str)):
        raise ScenarioError(f"{where}.rollingUpdate: needs image")
    return Step(kind, value, str(raw.get("name") or _describe(kind, value)))


def parse_spread_scenario(data: Mapping[str, Any], source: str) -> Scenario:
    """A WorkloadSpread scenario (`py_engine.cli.scenarios.parse_scenario` picks the kind)."""
    for key in ("nodes", "workload", "workloadSpread", "steps"):
        if key not in data:
            raise ScenarioError(f"{source}: missing {key}")
    try:
        nodes = nodes_from_description(data["nodes"], source=f"{source}: nodes")
    except NodePoolError as exc:
        raise ScenarioError(str(exc)) from None
    workload = _workload(data["workload"], source)
    spread = _spread(data["workloadSpread"], source)
    if not isinstance(data["steps"], list) or not data["steps"]:
        raise ScenarioError(f"{source}: steps must be a non-empty list")
    target = spread["spec"].get("targetRef")
    if not (
        isinstance(target, Mapping)
        and target.get("kind") == workload["kind"]
        and target.get("name") == workload["metadata"]["name"]
    ):
        raise ScenarioError(
            f"{source}: workloadSpread.spec.targetRef must name the workload "
            f"({workload['kind']} {workload['metadata']['name']})"
        )
    kind = WORKLOAD_KINDS[str(workload["kind"])]
    for index, raw in enumerate(data["steps"]):
        if isinstance(raw, Mapping) and "rollingUpdate" in raw and not kind.rolls_pods:
            raise ScenarioError(
                f"{source}: steps[{index}].rollingUpdate: a {workload['kind']} does not roll "
                "its pods (Deployment and StatefulSet do)"
            )
    return build_scenario(data, source, nodes, workload=workload, spread=spread)


def build_scenario(
    data: Mapping[str, Any],
    source: str,
    nodes: list[dict[str, Any]],
    *,
    workload: dict[str, Any],
    spread: dict[str, Any],
    united: dict[str, Any] | None = None,
) -> Scenario:
    """The `Scenario` of a checked file: what every scenario has (name, description, steps,
    `settleSeconds`, checked here) and the objects its kind runs."""
    settle = data.get("settleSeconds", 60)
    if not isinstance(settle, int | float) or settle < 0:
        raise ScenarioError(f"{source}: settleSeconds must be a non-negative number")
    return Scenario(
        name=str(data.get("name") or Path(source).stem),
        description=str(data.get("description") or ""),
        nodes=nodes,
        workload=workload,
        spread=spread,
        steps=tuple(_step(i, s) for i, s in enumerate(data["steps"])),
        settle_seconds=float(settle),
        united=united,
    )


def _workload(raw: Any, source: str) -> dict[str, Any]:
    kinds = ", ".join(WORKLOAD_KINDS)
    if not isinstance(raw, Mapping) or raw.get("kind") not in WORKLOAD_KINDS:
        raise ScenarioError(
            f"{source}: workload must be one of {kinds} (the kinds the embedded cluster runs)"
        )
    kind = WORKLOAD_KINDS[str(raw["kind"])]
    if raw.get("apiVersion", kind.api_version) != kind.api_version:
        raise ScenarioError(f"{source}: workload.apiVersion of a {raw['kind']} must be {kind.api_version}")
    metadata = raw.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        raise ScenarioError(f"{source}: workload.metadata.name is required")
    template = (raw.get("spec") or {}).get("template") if isinstance(raw.get("spec"), Mapping) else None
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, Mapping) else None
    if not isinstance(labels, Mapping) or not labels:
        raise ScenarioError(
            f"{source}: workload.spec.template.metadata.labels are required (they find its pods)"
        )
    return {**raw, "apiVersion": kind.api_version}


def _spread(raw: Any, source: str) -> dict[str, Any]:
    """The WorkloadSpread, with OpenKruise's group read as Spreadgate's (same fields, same meaning)."""
    if not isinstance(raw, Mapping) or raw.get("kind") != "WorkloadSpread":
        raise ScenarioError(f"{source}: workloadSpread must be a WorkloadSpread object")
    api_version = str(raw.get("apiVersion") or f"{GROUP}/v1alpha1")
    group, _, version = api_version.rpartition("/")
    if group not in (GROUP, KRUISE_GROUP) or version != "v1alpha1":
        raise ScenarioError(
            f"{source}: workloadSpread.apiVersion must be {GROUP}/v1alpha1 or "
            f"{KRUISE_GROUP}/v1alpha1, not {api_version}"
        )
    if not isinstance(raw.get("metadata"), Mapping) or not isinstance(raw["metadata"].get("name"), str):
        raise ScenarioError(f"{source}: workloadSpread.metadata.name is required")
    if not isinstance(raw.get("spec"), Mapping):
        raise ScenarioError(f"{source}: workloadSpread.spec is required")
    return {**raw, "apiVersion": f"{GROUP}/v1alpha1"}
