"""`spreadgate united plan`: one UnitedDeployment sync, offline, over a snapshot.

Reads a state file (YAML or JSON; multi-document or a List) such as
`kubectl get sgud,deploy,sts,pods,nodes -o yaml` (CloneSets, Advanced
StatefulSets and ControllerRevisions are read too), runs the pure planner and
prints each subset's replicas and partition, the objects to create, update and
delete, and the new status:

  spreadgate united plan --state manifests/examples/united/onprem-then-serverless.yaml
  kubectl get sgud,deploy,sts,pods,nodes -o yaml | spreadgate united plan --state - -o json

-o json prints one object with the keys `subsets` (name -> {replicas, partition}),
`create`, `update`, `delete`, `release` (owned workloads the selector no longer
matches, without the owner reference), `status`, `errors` and `nodeFit`.

The two checks the controller makes before planning are made here too: node fit
(Adaptive, default mode, unless the UnitedDeployment's `spreadgate.dev/node-fit`
annotation is "false"), when the snapshot holds nodes: subsets no node fits
get no new replicas, and replicas that fit nowhere are reported (the
`ReplicasAllocated` condition); when it holds none, the plan says node fit was
not checked. And the subset patch allowlist (--allow-patch-field widens it):
a patch off it refuses the plan. -o json adds `nodeFit`: {checked, noNodeFit,
unplaced, note}.

--now defaults to the current time. Exit status: 0 planned; 1 planned with errors,
or the UnitedDeployment was refused (the reason is printed); 2 the
input cannot be read or holds no valid UnitedDeployment (one line on stderr).
docs/uniteddeployment.md describes the rules.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from py_engine.cli.helpformat import command_parser
from py_engine.cli.options import add_allow_patch_field, add_output
from py_engine.cli.snapshot_input import add_snapshot_flags

EXIT_OK, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2
PROG = "spreadgate united plan"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "united",
        help="UnitedDeployment tools (plan: one controller sync offline)",
        description="UnitedDeployment tools.",
    )
    commands = parser.add_subparsers(dest="united_command", metavar="SUBCOMMAND", required=True)
    plan = command_parser(
        commands, "plan", __doc__, help="plan one UnitedDeployment sync over a snapshot of objects"
    )
    add_snapshot_flags(plan, objects_help="objects to plan over", name_help="the UnitedDeployment to plan")
    add_output(plan, ("table", "json"))
    add_allow_patch_field(plan, "")
    plan.set_defaults(handler=run)


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run(args: argparse.Namespace) -> int:
    from py_engine.cli.snapshot_input import InputError, read_snapshot
    from py_engine.model.errors import ModelError
    from py_engine.uniteddeployment.controller.plan import plan
    from py_engine.uniteddeployment.controller.state import StateError, state_from_objects
    from py_engine.validation.patch_fields import parse_patch_fields

    try:
        objects, now = read_snapshot(args)
    except InputError as exc:
        return _fail(str(exc))
    try:
        state = state_from_objects(objects, args.name)
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except (StateError, ModelError, ValueError) as exc:
        return _fail(str(exc))
    state, fit = controller_checks(state, patch_fields)
    result = plan(state, now)
    fit["unplaced"] = result.unplaced
    if args.output == "json":
        json.dump({**result.to_json(), "nodeFit": fit}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(result, sys.stdout)
        sys.stdout.write(f"node fit: {fit['note']}\n")
    for error in result.errors:
        print(f"{PROG}: {'refused' if result.refused else 'error'}: {error}", file=sys.stderr)
    return EXIT_REFUSED if result.errors else EXIT_OK


def controller_checks(state: Any, patch_fields: tuple[str, ...]) -> tuple[Any, dict[str, Any]]:
    """The state with what the controller asks before planning (node fit over the snapshot's
    nodes, the subset patch allowlist), and the node-fit summary for the output."""
    from dataclasses import replace

    from py_engine.uniteddeployment.controller.runtime.nodefit import NodeFit, node_fit_enabled
    from py_engine.uniteddeployment.controller.runtime.patchcheck import PatchCheck

    ud = state.ud
    fit: dict[str, Any] = {"checked": False, "noNodeFit": []}
    if not node_fit_enabled(ud):
        fit["note"] = 'not asked (only Adaptive UnitedDeployments without reservation, node-fit not "false")'
    elif not state.nodes:
        fit["note"] = (
            "not checked: the snapshot holds no nodes (add nodes, e.g. kubectl get ...,nodes -o yaml)"
        )
    else:
        checker = NodeFit()
        try:
            unfit = checker.unfit(
                ud, checker.inventory(0, lambda: list(state.nodes), lambda: list(state.pods))
            )
        finally:
            checker.close()
        state = replace(state, no_node_fit=unfit)
        fit.update(checked=True, noNodeFit=sorted(unfit))
        fit["note"] = (
            f"checked against {len(state.nodes)} nodes; no node fits a pod of {', '.join(sorted(unfit))}"
            if unfit
            else f"checked against {len(state.nodes)} nodes; every subset has a node"
        )
    if any(subset.patch is not None for subset in ud.subsets):
        check = PatchCheck(allowed_patch_fields=patch_fields)
        try:
            state = replace(state, forbidden_patches=check.forbidden(ud.raw, ud))
        finally:
            check.close()
    return state, fit


def _columns(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        )


def _describe(obj: Any) -> str:
    metadata = obj.get("metadata") or {}
    name = metadata.get("name") or f"{metadata.get('generateName', '')}<generated>"
    return f"{obj.get('kind')} {name}"


def print_table(result: Any, out: TextIO) -> None:
    """Human-readable plan: subsets, writes, status summary, requeue."""
    if result.refused:
        if result.refusal == "patch":
            out.write("refused: no workload is written; the status gets SubsetFailure (ForbiddenPatch)\n")
        else:
            out.write("refused: no workload is created or updated; the status is not written\n")
        for verb, objects in (
            ("delete", result.delete),
            ("update", result.update),
            ("release", result.release),
        ):
            for obj in objects:
                out.write(f"{verb}: {_describe(obj)} (done before allocating, as Kruise)\n")
        return
    status = result.status
    entries = {e["name"]: e for e in status.get("subsetStatuses") or []}
    rows = [["SUBSET", "REPLICAS", "PARTITION", "READY", "SCHEDULABLE"]]
    for name, subset in result.subsets.items():
        entry = entries.get(name, {})
        schedulable = next((c.get("status") for c in entry.get("conditions") or []), "-")
        rows.append(
            [
                name,
                str(subset.replicas),
                str(subset.partition),
                str(entry.get("readyReplicas", 0)),
                str(schedulable),
            ]
        )
    _columns(rows, out)
    out.write("\n")
    for verb, objects in (
        ("create", result.create),
        ("update", result.update),
        ("delete", result.delete),
        ("release", result.release),
    ):
        for obj in objects:
            out.write(f"{verb}: {_describe(obj)}\n")
    out.write(
        f"\nreplicas {status.get('replicas')}, ready {status.get('readyReplicas')}, "
        f"updated {status.get('updatedReplicas')}; revision {status.get('updatedRevision')} "
        f"(current {status.get('currentRevision')})\n"
    )
    out.write(f"status: {'changed, would be written' if result.status_changed else 'unchanged, no write'}\n")
    requeue = result.requeue_after
    out.write(f"requeue after: {'-' if requeue is None else f'{requeue:g}s'}\n")
