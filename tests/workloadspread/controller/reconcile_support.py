"""Helpers shared by the controller's tests: vectors as reconcile inputs, Kruise→Spreadgate mapping."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from py_engine.model.constants import (
    IN_SUBSET_SPREAD_ANNOTATION,
    KRUISE_MATCHED_ANNOTATION,
    MATCHED_ANNOTATION,
)
from py_engine.model.workloads import parse_whitelist
from py_engine.semantics.timeutil import parse_time
from py_engine.workloadspread.controller.reconcile import ClusterView, SyncResult, reconcile
from py_engine.workloadspread.controller.snapshot import snapshot_from_objects

WHITELIST_KEY = "WorkloadSpread_Watch_Custom_Workload_WhiteList"


def to_spreadgate(obj: Any) -> Any:
    """A Kruise-flavoured object rewritten with Spreadgate's group and annotation key."""
    text = json.dumps(obj)
    text = text.replace(
        '"apps.kruise.io/v1alpha1", "kind": "WorkloadSpread"',
        '"spreadgate.dev/v1alpha1", "kind": "WorkloadSpread"',
    )
    text = text.replace(KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION)
    return json.loads(text)


def vector_run(case: Mapping[str, Any], *, refined: bool, flavour: str = "kruise") -> SyncResult:
    """Reconcile a RECONCILE vector; reference mode sets the in-subset annotation to "false"."""
    data = copy.deepcopy(dict(case["input"]))
    if flavour == "spreadgate":
        data = to_spreadgate(data)
    spread = data["workloadSpread"]
    annotations = spread.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[IN_SUBSET_SPREAD_ANNOTATION] = "true" if refined else "false"
    objects = [spread, *data.get("cluster", []), *data.get("pods", []), *data.get("nodes", [])]
    snapshot = snapshot_from_objects(objects)
    whitelist = parse_whitelist((data.get("kruiseConfig") or {}).get(WHITELIST_KEY))
    view = ClusterView(
        workload=snapshot.view.workload,
        pods=snapshot.view.pods,
        nodes=snapshot.view.nodes,
        replica_sets=snapshot.view.replica_sets,
        whitelist=whitelist,
    )
    return reconcile(snapshot.spread, view, now_of(case))


def now_of(case: Mapping[str, Any]) -> datetime:
    return parse_time(case["input"].get("now") or "2024-06-01T12:00:00Z")


def assert_entry(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Compare the keys the vector lists; empty and absent maps are equal."""
    for key, value in expected.items():
        got = actual.get(key)
        if key in ("creatingPods", "deletingPods"):
            assert (got or {}) == (value or {}), (actual["name"], key)
        else:
            assert got == value, (actual["name"], key, got, value)
