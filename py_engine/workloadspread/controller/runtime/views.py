"""Assembling one sync's `ClusterView` from a `Source`.

The pure core decides from (spread, view, now); this is the only place that
knows which objects a view needs: the target (by group, kind, name in the
spread's namespace), that namespace's pods and ReplicaSets in API list order,
and every node; the custom workload kinds the source reads (its whitelist,
`--custom-workload`) go with the view, so a spread over one reconciles with
its workload, and one over any other custom kind reports `KindNotAllowed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.semantics.objects import meta
from py_engine.workloadspread.controller.reconcile import ClusterView
from py_engine.workloadspread.controller.runtime.sources import Source


def view_for(source: Source, spread: Mapping[str, Any]) -> ClusterView:
    """The inputs of one sync of `spread`, read from `source`."""
    ns = str(meta(spread).get("namespace") or "default")
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, Mapping) else None
    workload = None
    if isinstance(ref, Mapping):
        workload = source.workload(
            str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), ns, str(ref.get("name") or "")
        )
    return ClusterView(
        workload=workload,
        pods=source.pods(ns),
        nodes=source.nodes(),
        replica_sets=source.replica_sets(ns),
        whitelist=source.whitelist,
    )
