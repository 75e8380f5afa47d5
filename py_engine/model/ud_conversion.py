"""UnitedDeployment status conversion between Kruise's `v1alpha1` and `v1beta1`.

`v1beta1` is the hub: the planner reads and writes its status shape. A `v1alpha1`
status keeps per-subset replicas and partitions in maps (`subsetReplicas`,
`updateStatus.currentPartitions`) and the updated revision under `updateStatus`;
the rules are restated in docs/uniteddeployment.md ("API versions"). The spec
converts one to one, so only the status needs these functions.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _entry(statuses: list[JSON], name: str) -> JSON:
    for entry in statuses:
        if entry.get("name") == name:
            return entry
    entry = {"name": name}
    statuses.append(entry)
    return entry


def status_to_v1beta1(alpha: Mapping[str, Any]) -> JSON:
    """A v1alpha1 status in v1beta1 shape: map entries become `subsetStatuses` fields,
    missing subset entries are appended, `updateStatus.updatedRevision` moves up."""
    beta = copy.deepcopy(dict(alpha))
    replicas = _mapping(beta.pop("subsetReplicas", None))
    update = _mapping(beta.pop("updateStatus", None))
    partitions = _mapping(update.get("currentPartitions"))
    raw_statuses = beta.get("subsetStatuses")
    statuses: list[JSON] = (
        [dict(e) for e in raw_statuses if isinstance(e, Mapping)] if isinstance(raw_statuses, list) else []
    )
    for name, value in replicas.items():
        _entry(statuses, str(name))["replicas"] = value
    for name, value in partitions.items():
        _entry(statuses, str(name))["partition"] = value
    if statuses or raw_statuses is not None:
        beta["subsetStatuses"] = statuses
    revision = update.get("updatedRevision")
    if isinstance(revision, str) and revision and not beta.get("updatedRevision"):
        beta["updatedRevision"] = revision
    return beta


def status_to_v1alpha1(beta: Mapping[str, Any]) -> JSON:
    """A v1beta1 status in v1alpha1 shape: `subsetReplicas` from named subset statuses
    (absent when there are none); `updateStatus` absent when there is neither an
    updated revision nor a subset status."""
    alpha = copy.deepcopy(dict(beta))
    revision = alpha.pop("updatedRevision", None)
    raw = alpha.get("subsetStatuses")
    statuses = [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []
    named = [e for e in statuses if isinstance(e.get("name"), str) and e.get("name")]
    if named:
        alpha["subsetReplicas"] = {e["name"]: e.get("replicas", 0) for e in named}
    if revision or statuses:
        update: JSON = {}
        if revision:
            update["updatedRevision"] = revision
        if named:
            update["currentPartitions"] = {e["name"]: e.get("partition", 0) for e in named}
        alpha["updateStatus"] = update
    return alpha
