"""Kruise's CloneSet at its two served versions: where the update strategy lives.

`apps.kruise.io/v1beta1` (the storage version, and the layout of a
UnitedDeployment's `cloneSetTemplate`) nests the rolling-update knobs:
`spec.updateStrategy.{type: RollingUpdate|OnDelete, rollingUpdate: {partition,
maxUnavailable, maxSurge, podUpdatePolicy, paused, ...}}` and names the PVC flag
`scaleStrategy.enablePVCReuse`. `v1alpha1` keeps them at the top:
`spec.updateStrategy.{type: ReCreate|InPlaceIfPossible|InPlaceOnly|OnDelete,
partition, maxUnavailable, ...}` and `scaleStrategy.disablePVCReuse`. Kruise's
conversion webhook translates between the two; an API server prunes a field
written in the other version's place, so the controller must write and read
each object in its own version's layout (docs/uniteddeployment.md, "Partitions").

The planner builds CloneSets in the v1beta1 layout; `to_version` rewrites one
for the version it is written at, and `rolling_update` reads the knobs of an
object at whatever version it was read. Advanced StatefulSets keep
`updateStrategy.rollingUpdate` at both versions and need nothing here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from py_engine.model.constants import KRUISE_GROUP
from py_engine.uniteddeployment.controller.jsonview import as_map

JSON = dict[str, Any]

ALPHA = "v1alpha1"
BETA = "v1beta1"
# Knobs that live in `rollingUpdate` at v1beta1 and directly in `updateStrategy` at v1alpha1.
ROLLING_KEYS = (
    "partition",
    "maxUnavailable",
    "maxSurge",
    "paused",
    "priorityStrategy",
    "scatterStrategy",
    "inPlaceUpdateStrategy",
)
# v1alpha1 strategy type -> v1beta1 rollingUpdate.podUpdatePolicy (type RollingUpdate).
_POLICY_OF_ALPHA_TYPE = {
    "ReCreate": "ReCreate",
    "InPlaceIfPossible": "InPlaceIfPossible",
    "InPlaceOnly": "InPlaceOnly",
}


def is_cloneset(obj: Mapping[str, Any]) -> bool:
    api_version = obj.get("apiVersion")
    return (
        obj.get("kind") == "CloneSet"
        and isinstance(api_version, str)
        and api_version.split("/", 1)[0] == KRUISE_GROUP
    )


def version_of(obj: Mapping[str, Any]) -> str:
    """The object's version; an object without one is read in the storage layout (v1beta1)."""
    api_version = obj.get("apiVersion")
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    return ALPHA if version == ALPHA else BETA


def rolling_update(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The map holding `partition` and `maxUnavailable` of a CloneSet, read in its own version's layout."""
    strategy = as_map(as_map(obj.get("spec")).get("updateStrategy"))
    return strategy if version_of(obj) == ALPHA else as_map(strategy.get("rollingUpdate"))


def _strategy_to_alpha(strategy: Mapping[str, Any]) -> JSON:
    out = {k: copy.deepcopy(v) for k, v in strategy.items() if k not in ("type", "rollingUpdate")}
    rolling = as_map(strategy.get("rollingUpdate"))
    for key in ROLLING_KEYS:
        if key in rolling:
            out[key] = copy.deepcopy(rolling[key])
    kind = strategy.get("type")
    if kind == "RollingUpdate" or (kind is None and "podUpdatePolicy" in rolling):
        policy = rolling.get("podUpdatePolicy")
        out["type"] = policy if policy in _POLICY_OF_ALPHA_TYPE else "ReCreate"
    elif kind is not None:  # OnDelete, or already a v1alpha1 type
        out["type"] = kind
    return out


def _strategy_to_beta(strategy: Mapping[str, Any]) -> JSON:
    rolling = {k: copy.deepcopy(v) for k, v in as_map(strategy.get("rollingUpdate")).items()}
    rolling |= {k: copy.deepcopy(strategy[k]) for k in ROLLING_KEYS if k in strategy}
    out = {
        k: copy.deepcopy(v) for k, v in strategy.items() if k not in (*ROLLING_KEYS, "type", "rollingUpdate")
    }
    kind = strategy.get("type")
    if kind in _POLICY_OF_ALPHA_TYPE:
        out["type"] = "RollingUpdate"
        rolling["podUpdatePolicy"] = _POLICY_OF_ALPHA_TYPE[str(kind)]
    elif kind is not None:
        out["type"] = kind
    if rolling:
        out["rollingUpdate"] = rolling
    return out


def _scale_strategy(scale: Mapping[str, Any], version: str) -> JSON:
    out = {k: copy.deepcopy(v) for k, v in scale.items()}
    if version == ALPHA and "enablePVCReuse" in out:
        out["disablePVCReuse"] = not bool(out.pop("enablePVCReuse"))
    elif version == BETA and "disablePVCReuse" in out:
        out["enablePVCReuse"] = not bool(out.pop("disablePVCReuse"))
    return out


def convert_spec(spec: Mapping[str, Any], version: str) -> JSON:
    """A CloneSet spec in the layout of `version` (from either layout; idempotent)."""
    out = {k: v for k, v in spec.items()}
    strategy = spec.get("updateStrategy")
    if isinstance(strategy, Mapping):
        out["updateStrategy"] = (
            _strategy_to_alpha(strategy) if version == ALPHA else _strategy_to_beta(strategy)
        )
    scale = spec.get("scaleStrategy")
    if isinstance(scale, Mapping):
        out["scaleStrategy"] = _scale_strategy(scale, version)
    return out


def to_version(obj: Mapping[str, Any], api_version: str) -> JSON:
    """`obj` as it is written at `api_version`: a CloneSet's spec is moved into that
    version's layout; any other object only gets the apiVersion."""
    out = {**obj, "apiVersion": api_version}
    if is_cloneset(out) and isinstance(obj.get("spec"), Mapping):
        out["spec"] = convert_spec(as_map(obj.get("spec")), version_of(out))
    return out
