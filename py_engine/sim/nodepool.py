"""Node pool descriptions -> Node objects for the embedded cluster.

A pool file (YAML or JSON) takes one of two shapes.

A compact description, the usual way to describe zones::

    pools:
      - name: zone-a              # nodes zone-a-0, zone-a-1, ... (namePrefix overrides)
        count: 3
        labels: {topology.kubernetes.io/zone: zone-a}
        taints: [{key: dedicated, value: batch, effect: NoSchedule}]
        capacity: {cpu: "8", memory: 32Gi, pods: 110}
        allocatable: {cpu: 7500m}   # optional, per resource; defaults to capacity
        unschedulable: false        # optional (cordoned)
    nodes:                          # optional single nodes, same fields + name
      - name: gpu-0
        labels: {accelerator: a100}
        capacity: {cpu: "32", memory: 256Gi, pods: 110, nvidia.com/gpu: 8}

Or a plain list whose items are compact nodes (as under `nodes:`) or full
`kind: Node` objects (used as given).

Every generated node gets `kubernetes.io/hostname`, `kubernetes.io/os=linux`
and `kubernetes.io/arch=amd64` labels (overridable), a Ready condition, an
InternalIP address and default capacity `cpu: 8, memory: 32Gi, pods: 110`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from py_engine.semantics.quantity import QuantityError, parse_quantity
from py_engine.sim.interface import JSON

__all__ = ["DEFAULT_CAPACITY", "NodePoolError", "default_pool", "load_node_pool", "nodes_from_description"]

DEFAULT_CAPACITY: dict[str, Any] = {"cpu": "8", "memory": "32Gi", "pods": "110"}
ZONE_LABEL = "topology.kubernetes.io/zone"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_POOL_KEYS = {
    "name",
    "namePrefix",
    "count",
    "labels",
    "taints",
    "capacity",
    "allocatable",
    "unschedulable",
    "annotations",
}
_NODE_KEYS = _POOL_KEYS - {"namePrefix", "count"}
_EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}


class NodePoolError(ValueError):
    """An invalid node pool description (the message names the offending field)."""


def default_pool() -> list[JSON]:
    """Three zones with one node each: enough to demonstrate spreading."""
    return nodes_from_description(
        {"pools": [{"name": f"zone-{z}", "count": 1, "labels": {ZONE_LABEL: f"zone-{z}"}} for z in "abc"]}
    )


def load_node_pool(path: str | Path) -> list[JSON]:
    """Read a YAML or JSON pool file and return its Node objects."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise NodePoolError(f"cannot read node pool file {str(path)!r}: {exc.strerror}") from exc
    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise NodePoolError(f"{path}: not valid YAML/JSON: {exc}") from exc
    return nodes_from_description(data, source=str(path))


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise NodePoolError(f"{where}: must be a map of strings")
    return {k: str(v) for k, v in value.items()}


def _resources(value: Any, where: str) -> dict[str, str]:
    out = _strings(value, where)
    for name, raw in out.items():
        try:
            if parse_quantity(raw) < 0:
                raise NodePoolError(f"{where}.{name}: must not be negative")
        except QuantityError as exc:
            raise NodePoolError(f"{where}.{name}: {exc}") from exc
    return out


def _taints(value: Any, where: str) -> list[JSON]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise NodePoolError(f"{where}: must be a list")
    taints = []
    for i, taint in enumerate(value):
        if not isinstance(taint, Mapping) or not isinstance(taint.get("key"), str) or not taint.get("key"):
            raise NodePoolError(f"{where}[{i}]: needs a string key")
        if taint.get("effect") not in _EFFECTS:
            raise NodePoolError(f"{where}[{i}].effect: must be one of {sorted(_EFFECTS)}")
        out = {"key": taint["key"], "effect": taint["effect"]}
        if taint.get("value") is not None:
            out["value"] = str(taint["value"])
        taints.append(out)
    return taints


def _node(name: str, spec: Mapping[str, Any], where: str, index: int) -> JSON:
    if not _NAME.match(name) or len(name) > 253:
        raise NodePoolError(f"{where}: {name!r} is not a valid node name")
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    labels.update(_strings(spec.get("labels"), f"{where}.labels"))
    capacity = dict(DEFAULT_CAPACITY)
    capacity.update(_resources(spec.get("capacity"), f"{where}.capacity"))
    allocatable = dict(capacity)
    allocatable.update(_resources(spec.get("allocatable"), f"{where}.allocatable"))
    node_spec: JSON = {}
    taints = _taints(spec.get("taints"), f"{where}.taints")
    if taints:
        node_spec["taints"] = taints
    if spec.get("unschedulable"):
        node_spec["unschedulable"] = True
    metadata: JSON = {"name": name, "labels": labels}
    annotations = _strings(spec.get("annotations"), f"{where}.annotations")
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": node_spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{(index >> 8) & 255}.{index & 255}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.30.0-sim",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "containerRuntimeVersion": "sim://1.0",
            },
        },
    }


def _check_keys(item: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise NodePoolError(f"{where}: unknown field(s) {', '.join(unknown)}")


def nodes_from_description(data: Any, source: str = "node pool") -> list[JSON]:
    """Expand a pool description (see module docstring) into Node objects."""
    nodes: list[JSON] = []
    if isinstance(data, list):
        singles: list[Any] = data
        pools: list[Any] = []
    elif isinstance(data, Mapping):
        _check_keys(data, {"pools", "nodes"}, source)
        pools = data.get("pools") or []
        singles = data.get("nodes") or []
        if not isinstance(pools, list) or not isinstance(singles, list):
            raise NodePoolError(f"{source}: pools and nodes must be lists")
    else:
        raise NodePoolError(f"{source}: expected a list of nodes or a map with pools/nodes")
    for p, pool in enumerate(pools):
        where = f"{source}: pools[{p}]"
        if not isinstance(pool, Mapping):
            raise NodePoolError(f"{where}: must be a map")
        _check_keys(pool, _POOL_KEYS, where)
        prefix = pool.get("namePrefix") or pool.get("name")
        count = pool.get("count", 1)
        if not isinstance(prefix, str) or not prefix:
            raise NodePoolError(f"{where}: needs a name")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 10000:
            raise NodePoolError(f"{where}.count: must be an integer from 0 to 10000")
        for i in range(count):
            nodes.append(_node(f"{prefix}-{i}", pool, where, len(nodes) + 1))
    for n, item in enumerate(singles):
        where = f"{source}: nodes[{n}]"
        if not isinstance(item, Mapping):
            raise NodePoolError(f"{where}: must be a map")
        if item.get("kind") == "Node":
            node = copy.deepcopy(dict(item))
            if not isinstance(node.get("metadata", {}).get("name"), str):
                raise NodePoolError(f"{where}: Node needs metadata.name")
            node.setdefault("apiVersion", "v1")
            nodes.append(node)
            continue
        _check_keys(item, _NODE_KEYS, where)
        name = item.get("name")
        if not isinstance(name, str):
            raise NodePoolError(f"{where}: needs a name")
        nodes.append(_node(name, item, where, len(nodes) + 1))
    seen: set[str] = set()
    for node in nodes:
        name = node["metadata"]["name"]
        if name in seen:
            raise NodePoolError(f"{source}: duplicate node name {name!r}")
        seen.add(name)
    return nodes
