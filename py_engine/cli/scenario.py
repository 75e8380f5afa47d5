"""Scenario files for `spreadgate simulate` and `spreadgate demo`: parse and check.

A scenario is YAML::

    name: elastic-pool
    description: ...
    nodes: {pools: [...]}            # a node pool description (py_engine.sim.nodepool)
    workload: {kind: Deployment...}  # the target, a full apps/v1 Deployment
    workloadSpread: {...}            # the WorkloadSpread (namespace default)
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
Errors are `ScenarioError`s whose message names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from py_engine.resources import SCENARIOS, read_text
from py_engine.sim.nodepool import NodePoolError, nodes_from_description

STEP_KINDS = ("scale", "maxReplicas", "taint", "cordon", "removeNode", "rollingUpdate", "advance")


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
        raise ScenarioError(f"{where}: needs exactly one of {', '.join(STEP_KINDS)}"
                            + (f" (unknown: {', '.join(map(str, unknown))})" if unknown else ""))
    kind = kinds[0]
    value = raw[kind]
    if kind == "scale" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ScenarioError(f"{where}.scale: must be a non-negative integer")
    if kind == "advance" and (not isinstance(value, int | float) or isinstance(value, bool) or value < 0):
        raise ScenarioError(f"{where}.advance: must be a non-negative number of seconds")
    if kind in ("cordon", "removeNode") and not isinstance(value, str):
        raise ScenarioError(f"{where}.{kind}: must be a node name")
    if kind == "maxReplicas" and not (isinstance(value, Mapping) and isinstance(value.get("subset"), str)
                                      and "value" in value):
        raise ScenarioError(f"{where}.maxReplicas: needs subset and value")
    if kind == "taint" and not (isinstance(value, Mapping) and isinstance(value.get("node"), str)
                                and isinstance(value.get("key"), str)):
        raise ScenarioError(f"{where}.taint: needs node and key")
    if kind == "rollingUpdate" and not (isinstance(value, Mapping) and isinstance(value.get("image"), str)):
        raise ScenarioError(f"{where}.rollingUpdate: needs image")
    return Step(kind, value, str(raw.get("name") or _describe(kind, value)))


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: expected a map")
    for key in ("nodes", "workload", "workloadSpread", "steps"):
        if key not in data:
            raise ScenarioError(f"{source}: missing {key}")
    try:
        nodes = nodes_from_description(data["nodes"], source=f"{source}: nodes")
    except NodePoolError as exc:
        raise ScenarioError(str(exc)) from None
    workload, spread = data["workload"], data["workloadSpread"]
    if not isinstance(workload, Mapping) or workload.get("kind") != "Deployment":
        raise ScenarioError(f"{source}: workload must be a Deployment object")
    if not isinstance(spread, Mapping) or spread.get("kind") != "WorkloadSpread":
        raise ScenarioError(f"{source}: workloadSpread must be a WorkloadSpread object")
    if not isinstance(data["steps"], list) or not data["steps"]:
        raise ScenarioError(f"{source}: steps must be a non-empty list")
    settle = data.get("settleSeconds", 60)
    if not isinstance(settle, int | float) or settle < 0:
        raise ScenarioError(f"{source}: settleSeconds must be a non-negative number")
    return Scenario(
        name=str(data.get("name") or Path(source).stem), description=str(data.get("description") or ""),
        nodes=nodes, workload=dict(workload), spread=dict(spread),
        steps=tuple(_step(i, s) for i, s in enumerate(data["steps"])), settle_seconds=float(settle))


def load_scenario(path: str | Path) -> Scenario:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror}") from None
    return _parse_text(text, str(path))


def load_shipped_scenario(name: str) -> Scenario:
    """One of the example scenarios shipped in the package (`manifests/examples/scenarios/`)."""
    try:
        text = read_text(f"{SCENARIOS}/{name}")
    except OSError as exc:
        raise ScenarioError(f"no shipped scenario {name!r}: {exc.strerror or exc}") from None
    return _parse_text(text, name)


def _parse_text(text: str, where: str) -> Scenario:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{where}: not valid YAML: {exc}") from None
    return parse_scenario(data, where)
