"""`spreadgate reconcile`: one controller sync, offline, over a snapshot of objects.

Reads a state file (YAML or JSON; multi-document or a List) holding a
WorkloadSpread (Spreadgate's `spreadgate.dev` or Kruise's `apps.kruise.io`
group), its workload, the namespace's pods (and ReplicaSets for a Deployment),
the nodes, and optionally Kruise's `kruise-configuration` ConfigMap; runs the
controller's pure reconcile core and prints the new status, every listed pod's
subset and deletion cost, and the pods that would be deleted:

  spreadgate reconcile --state manifests/examples/reconcile/state.yaml --now 2024-06-01T12:00:00Z
  kubectl get sgws,deploy,rs,pods,nodes -o yaml | spreadgate reconcile --state - -o json

-o json prints one object: `status` (the full new status), `podSubset` (pod ->
subset, null for no subset), `podDeletionCost` (pod -> cost annotation after the
sync, null when absent), `podsToDelete`, `requeueAfterSeconds` and `events`
(type, reason, message) and `targetProblem` (null when the target was read, else
its `reason`, WorkloadNotFound or KindNotAllowed, and `message`; the status then
holds the `TargetNotFound` condition). `requeueAfterSeconds` is the smallest positive time
until an expiry (creating/deleting entry, stuck pod, recovery window), or null
when none is due: as in Kruise, a deadline exactly at --now is kept and asks for
no requeue (never 0).

Custom workload kinds are read as the controller reads them: from
--custom-workload GROUP/KIND[=REPLICAS_PATH] (the controller's and the webhook's
flag) and from a `kruise-configuration` ConfigMap in the state; a spread over
any other custom kind reports `KindNotAllowed`.

--now defaults to the current time. Exit status: 0 on success, 2 for input
that cannot be reconciled (the message says why).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from py_engine.cli.options import WITH_REPLICAS, add_custom_workload, add_output
from py_engine.cli.snapshot_input import add_snapshot_flags
from py_engine.semantics import objects
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION

EXIT_OK, EXIT_BAD_INPUT = 0, 2
PROG = "spreadgate reconcile"


HELP = "run one controller sync offline over a snapshot of objects"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate reconcile` (the package builds its parser, py_engine/cli/__init__.py)."""
    add_snapshot_flags(
        parser, objects_help="objects to reconcile", name_help="the WorkloadSpread to reconcile"
    )
    add_custom_workload(
        parser,
        "read this custom workload kind as a spread target, as the controller's flag (repeatable)",
        WITH_REPLICAS,
    )
    add_output(parser, ("table", "json"), "(default: %(default)s)")


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run(args: argparse.Namespace) -> int:
    from py_engine.cli.snapshot_input import InputError, read_snapshot
    from py_engine.model.workloads import WhitelistError, whitelist_from_flags
    from py_engine.workloadspread.controller import ReconcileError, reconcile, snapshot_from_objects

    try:
        custom = whitelist_from_flags(args.custom_workload)
    except WhitelistError as exc:
        return _fail(str(exc))
    try:
        objects, now = read_snapshot(args)
    except InputError as exc:
        return _fail(str(exc))
    try:
        snapshot = snapshot_from_objects(objects, args.name, custom)
        result = reconcile(snapshot.spread, snapshot.view, now)
    except (ReconcileError, ValueError) as exc:
        return _fail(str(exc))
    report = build_report(result)
    if args.output == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(report, result, sys.stdout)
    return EXIT_OK


def _cost_after(pod: Mapping[str, Any], costs: Mapping[str, str]) -> str | None:
    name = objects.name(pod)
    if name in costs:
        return costs[name]
    return objects.annotations(pod).get(DELETION_COST_ANNOTATION)


def build_report(result: Any) -> dict[str, Any]:
    """The `-o json` object (see the module docstring)."""
    requeue = result.requeue_after
    problem = result.target_problem
    if requeue is not None and float(requeue).is_integer():
        requeue = int(requeue)
    return {
        "status": result.status,
        "podSubset": dict(result.pod_subset),
        "podDeletionCost": {objects.name(p): _cost_after(p, result.costs) for p in result.pods},
        "podsToDelete": list(result.pods_to_delete),
        "requeueAfterSeconds": requeue,
        "events": [event.to_json() for event in result.events],
        "targetProblem": None if problem is None else {"reason": problem.reason, "message": problem.message},
    }


def _columns(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        )


def _schedulable(entry: Mapping[str, Any]) -> str:
    for condition in entry.get("conditions") or []:
        if condition.get("type") == "Schedulable":
            return str(condition.get("status"))
    return "-"


def print_table(report: dict[str, Any], result: Any, out: TextIO) -> None:
    """Human-readable summary: subsets, pods, deletions, requeue, events."""
    status = report["status"]
    changed = result.status_changed
    problem = report["targetProblem"]
    if problem is not None:
        out.write(f"target: {problem['reason']}: {problem['message']}\n\n")
    rows = [["SUBSET", "REPLICAS", "MISSING", "CREATING", "DELETING", "SCHEDULABLE"]]
    for entry in status.get("subsetStatuses") or []:
        rows.append(
            [
                str(entry["name"]),
                str(entry["replicas"]),
                str(entry["missingReplicas"]),
                str(len(entry.get("creatingPods") or {})),
                str(len(entry.get("deletingPods") or {})),
                _schedulable(entry),
            ]
        )
    _columns(rows, out)
    out.write(
        f"status: {'changed, would be written' if changed else 'unchanged, no write'}"
        f" (observedGeneration {status.get('observedGeneration')})\n\n"
    )
    adopted = {a.pod for a in result.adoptions}
    rows = [["POD", "SUBSET", "DELETION-COST", "CHANGE"]]
    for name, subset in report["podSubset"].items():
        notes = []
        if name in adopted:
            notes.append("adopted")
        if name in result.cost_patches:
            notes.append("cost patched")
        if name in report["podsToDelete"]:
            notes.append("deleted (unschedulable)")
        cost = report["podDeletionCost"].get(name)
        rows.append([name, subset or "<none>", cost if cost is not None else "-", ", ".join(notes)])
    _columns(rows, out)
    deletions = ", ".join(report["podsToDelete"]) or "none"
    requeue = report["requeueAfterSeconds"]
    out.write(f"\npods to delete: {deletions}\n")
    out.write(f"requeue after: {'-' if requeue is None else f'{requeue}s'}\n")
    for event in report["events"]:
        out.write(f"event: {event['type']} {event['reason']}: {event['message']}\n")
