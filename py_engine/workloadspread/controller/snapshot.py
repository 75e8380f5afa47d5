"""Reading one sync's inputs from a flat list of objects (a state file, a test vector).

The spread is the only WorkloadSpread (Spreadgate's or Kruise's group) or the
one named; the other objects are picked like the controller's caches would:
the target by group/kind/name in the spread's namespace, pods and ReplicaSets of
that namespace in file order, every Node, and the custom-workload whitelist:
the caller's own kinds (`spreadgate reconcile --custom-workload`), then Kruise's
`kruise-configuration` ConfigMap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.model.errors import ModelError
from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist, WhitelistError, whitelist_in_objects
from py_engine.model.workloadspread import WorkloadSpread, is_workloadspread
from py_engine.semantics.objects import name as name_of
from py_engine.semantics.objects import namespace as namespace_of
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.reconcile import ClusterView
from py_engine.workloadspread.controller.workloads import find_workload

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """The spread object to reconcile and what its sync reads."""

    spread: Obj
    view: ClusterView


def _pick_spread(objects: Sequence[Obj], name: str | None) -> Obj:
    spreads = [o for o in objects if is_workloadspread(o)]
    if name is not None:
        spreads = [o for o in spreads if name_of(o) == name]
        if not spreads:
            raise ReconcileError(f"no WorkloadSpread named {name!r} in the state")
    if not spreads:
        raise ReconcileError(
            "the state holds no WorkloadSpread "
            "(apiVersion spreadgate.dev/v1alpha1 or apps.kruise.io/v1alpha1)"
        )
    if len(spreads) > 1:
        names = ", ".join(sorted(name_of(o) for o in spreads))
        raise ReconcileError(f"the state holds several WorkloadSpreads ({names}); choose one with --name")
    return spreads[0]


def snapshot_from_objects(
    objects: Sequence[Obj], spread_name: str | None = None, custom: Whitelist = EMPTY_WHITELIST
) -> Snapshot:
    """Build the sync inputs; raises ReconcileError when the spread or the whitelist is malformed."""
    spread_object = _pick_spread(objects, spread_name)
    try:
        spread = WorkloadSpread.from_object(spread_object)
    except ModelError as exc:
        raise ReconcileError(f"WorkloadSpread: {exc}") from None
    namespace = namespace_of(spread_object)
    local = [o for o in objects if namespace_of(o) == namespace]
    try:
        whitelist = custom + whitelist_in_objects(objects)
    except WhitelistError as exc:
        raise ReconcileError(str(exc)) from None
    view = ClusterView(
        workload=find_workload(local, spread.target_ref, namespace),
        pods=[o for o in local if o.get("kind") == "Pod"],
        nodes={name_of(o): o for o in objects if o.get("kind") == "Node"},
        replica_sets=[o for o in local if o.get("kind") == "ReplicaSet"],
        whitelist=whitelist,
    )
    return Snapshot(spread_object, view)
