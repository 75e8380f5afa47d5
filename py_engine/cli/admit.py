"""`spreadgate admit --state STATE.yaml --pod POD.yaml`: the webhook's decision, offline.

Reads a snapshot (`kubectl get sgws,deploy,rs,pods,nodes -o yaml`; several
--state files may be given) and one pod, and prints what the admission
webhook would do: the subset chosen, the status change it would write and
the JSON patch. Nothing is written anywhere. For policy reviews and CI.

Operations: CREATE (mutating webhook), DELETE and EVICT (the validating
webhook's bookkeeping; for these --pod may hold just the pod's name and
namespace, or an Eviction, and the pod is taken from the snapshot).
Kruise's `apps.kruise.io/v1alpha1` WorkloadSpreads and its pod annotation are
read as Spreadgate's own; the mutated pod carries Spreadgate's key. Node
facts for Adaptive spreads come from the snapshot's nodes and pods; custom
workload kinds from --custom-workload or a `kruise-configuration` ConfigMap
in the snapshot. A subset patch that sets what the patch allowlist refuses
is left out, with a warning, as the webhook does (--allow-patch-field widens
the allowlist).

Subsets the subset policy skipped are listed with the policy's reason (its
Schedulable condition is False, the pod's own node affinity contradicts it, or
no node fits the pod), in the text output and as `skippedSubsets` in -o json.
Nothing is written: the status change shown is the one the webhook would write
(`statusWritten` in -o json means the same).

Exit status: 0 admitted, 1 denied (e.g. the pod's owner is not in the
snapshot), 2 input that could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from py_engine.cli.options import (
    WITH_REPLICAS,
    add_allow_patch_field,
    add_custom_workload,
    add_opa_url,
    add_output,
    add_versioned_kinds,
)
from py_engine.cli.snapshot_input import InputError, now_from
from py_engine.semantics import objects

if TYPE_CHECKING:
    from py_engine.workloadspread.admission.snapshot import SnapshotReader

EXIT_ALLOWED, EXIT_DENIED, EXIT_BAD_INPUT = 0, 1, 2
OPERATIONS = ("CREATE", "DELETE", "EVICT")


HELP = "show the admission webhook's decision for one pod over a cluster snapshot"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate admit` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument(
        "--state",
        action="append",
        required=True,
        metavar="STATE.yaml",
        help="snapshot: WorkloadSpreads, workloads, pods, nodes (YAML/JSON, Lists; repeatable; - for stdin)",
    )
    parser.add_argument(
        "--pod", required=True, metavar="POD.yaml", help="the pod being admitted (or deleted/evicted)"
    )
    parser.add_argument(
        "--operation", type=str.upper, choices=OPERATIONS, default="CREATE", help="(default: %(default)s)"
    )
    parser.add_argument(
        "--now", metavar="T", help="RFC 3339 time of the decision (default: the current time)"
    )
    add_output(
        parser,
        ("text", "patch", "pod", "json"),
        "text summary, the JSON patch, the mutated pod (YAML), or one JSON object (default: %(default)s)",
    )
    add_custom_workload(parser, "accept this custom workload kind as a pod owner (repeatable)", WITH_REPLICAS)
    add_versioned_kinds(parser)
    parser.add_argument(
        "--generated-uid",
        metavar="UID",
        help="creatingPods key for a pod with only generateName (default: a random UUID)",
    )
    parser.add_argument(
        "--no-policy",
        action="store_true",
        help="skip the Rego subset policy (only the reference's Schedulable check); the subset "
        "patch allowlist is still enforced",
    )
    add_allow_patch_field(parser, ", as the webhook's flag")
    add_opa_url(parser, "evaluate the subset policy in an OPA server instead of the embedded engine")


def _error(message: str) -> None:
    print(f"spreadgate admit: error: {message}", file=sys.stderr)


# ----------------------------------------------------------------------------- snapshot


def _read_objects(paths: list[str], what: str) -> list[dict[str, Any]]:
    from py_engine.validation import DocumentError, read_documents

    found: list[dict[str, Any]] = []
    for item in read_documents(paths):
        if isinstance(item, DocumentError):
            raise InputError(f"{what}: {item}")
        found.append(item.obj)
    return found


def _load_snapshot(paths: list[str]) -> list[dict[str, Any]]:
    from py_engine.model import is_workloadspread

    items = _read_objects(paths, "--state")
    if not any(is_workloadspread(obj) for obj in items):
        raise InputError("--state holds no WorkloadSpread (spreadgate.dev or apps.kruise.io)")
    return items


def _load_pod(path: str, operation: str, snapshot: SnapshotReader) -> dict[str, Any]:
    documents = _read_objects([path], "--pod")
    if len(documents) != 1:
        raise InputError(f"--pod {path} must hold exactly one object, found {len(documents)}")
    obj = documents[0]
    kind = obj.get("kind")
    name = objects.meta(obj).get("name")
    if kind == "Eviction" or (operation != "CREATE" and kind == "Pod" and "spec" not in obj):
        if operation == "CREATE":
            raise InputError("--pod holds an Eviction; use --operation EVICT")
        if not isinstance(name, str) or not name:
            raise InputError(f"--pod {path}: the {kind} has no metadata.name")
        found = snapshot.pod(objects.namespace(obj), name)
        if found is None:
            raise InputError(f"pod {objects.namespace(obj)}/{name} is not in the snapshot")
        return found
    if kind != "Pod":
        raise InputError(f"--pod {path} holds a {kind or 'document without kind'}, not a Pod")
    if not isinstance(obj.get("spec"), Mapping):
        raise InputError(f"--pod {path}: the Pod has no spec")
    if operation != "CREATE" and not name:
        raise InputError(f"--pod {path}: a pod being deleted or evicted must have a name")
    return obj


def _custom_workloads(values: list[str], snapshot: SnapshotReader) -> tuple[dict[str, Any], ...]:
    """--custom-workload kinds, then the snapshot's `kruise-configuration` whitelist.

    Both are read by the registry's parser."""
    from py_engine.model.workloads import WhitelistError, whitelist_from_flags, whitelist_in_objects

    try:
        return (whitelist_from_flags(values) + whitelist_in_objects(snapshot.objects.values())).entries()
    except WhitelistError as exc:
        raise InputError(str(exc)) from None


# ----------------------------------------------------------------------------- output


def _pod_label(pod: Mapping[str, Any]) -> str:
    meta = objects.meta(pod)
    name = meta.get("name") or f"{meta.get('generateName') or ''}<generated>"
    return f"{objects.namespace(pod)}/{name}"


def _status_changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """One line per subset entry whose counts or pod maps changed, per version."""
    from py_engine.model.subset_status import pod_records

    def versioned(spread: Mapping[str, Any] | None) -> Mapping[str, Any]:
        status = spread.get("status") if spread is not None else None
        value = status.get("versionedSubsetStatuses") if isinstance(status, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    old, new = versioned(before), versioned(after)
    lines: list[str] = []
    for version in sorted(new):
        old_entries = {e.get("name"): e for e in old.get(version) or [] if isinstance(e, Mapping)}
        for entry in new.get(version) or []:
            if not isinstance(entry, Mapping):
                continue
            prior = old_entries.get(entry.get("name"), {})
            parts = []
            if prior.get("missingReplicas") != entry.get("missingReplicas"):
                was = prior.get("missingReplicas", "(new)")
                parts.append(f"missingReplicas {was} -> {entry.get('missingReplicas')}")
            for key in ("creatingPods", "deletingPods"):
                added = sorted(set(pod_records(entry, key)) - set(pod_records(prior, key)))
                parts.extend(f"{key} +{pod}" for pod in added)
            if parts:
                lines.append(f"  [{version}] {entry.get('name')}: " + "; ".join(parts))
    return lines


def _print_text(
    outcome: Any,
    pod: Mapping[str, Any],
    operation: str,
    before: Mapping[str, Any] | None,
    notes: list[str],
    skipped: list[dict[str, Any]],
) -> None:
    print(f"operation: {operation} pod {_pod_label(pod)}")
    if outcome.spread is not None:
        print(f"workloadSpread: {objects.namespace(outcome.spread)}/{objects.name(outcome.spread)}")
    verdict = "allowed" if outcome.allowed else f"DENIED ({outcome.code})"
    subset = f'subset "{outcome.subset}"' if outcome.subset else "no subset"
    print(f"decision: {verdict}, {subset}")
    print(f"message: {outcome.message}")
    for entry in skipped:
        print(f'skipped subset "{entry["subset"]}": ' + "; ".join(entry["reasons"]))
    if outcome.status_written:
        print("status change (would be written):")
        for line in _status_changes(before, outcome.spread):
            print(line)
    else:
        print("status change: none")
    if operation == "CREATE":
        print(f"patch ({len(outcome.patch)} operations):")
        for op in outcome.patch:
            print("  " + json.dumps(op, sort_keys=True))
    for warning in [*outcome.warnings, *notes]:
        print(f"warning: {warning}")


# ----------------------------------------------------------------------------- command


def _skipped_subsets(
    pod: Mapping[str, Any], spread: Mapping[str, Any] | None, ctx: Any
) -> list[dict[str, Any]]:
    """The subsets the subset policy skipped for `pod`, in spec order, with its reasons.

    Asked again with the admission's own context: the decision is cached by its input,
    so this is the decision the admission used, not a second evaluation.
    """
    from py_engine.model import WorkloadSpread
    from py_engine.model.errors import ModelError
    from py_engine.workloadspread.admission.choose import eligibility

    if spread is None:
        return []
    try:
        view = WorkloadSpread.from_object(spread)
    except ModelError:
        return []
    status = spread.get("status")
    aggregate = status.get("subsetStatuses") if isinstance(status, Mapping) else None
    entries = [e for e in aggregate if isinstance(e, Mapping)] if isinstance(aggregate, list) else []
    decided = eligibility(pod, view, entries, ctx)
    return [
        {"subset": subset.name, "reasons": list(decided.rejected[subset.name])}
        for subset in view.subsets
        if decided.rejected.get(subset.name)
    ]


def _decide(
    args: argparse.Namespace,
) -> tuple[int, Any, dict[str, Any], dict[str, Any] | None, list[str], list[dict[str, Any]]]:
    from py_engine.model import WorkloadSpread
    from py_engine.policy import PolicyEngine, PolicyError, create_engine
    from py_engine.validation import parse_patch_fields
    from py_engine.workloadspread.admission.offline import OfflineAdmission
    from py_engine.workloadspread.admission.service import ServiceConfig
    from py_engine.workloadspread.admission.snapshot import SnapshotReader

    items = _load_snapshot(args.state)
    snapshot = SnapshotReader(items)
    pod = _load_pod(args.pod, args.operation, snapshot)
    now = now_from(args.now)
    custom = _custom_workloads(args.custom_workload, snapshot)
    kinds = frozenset(k.strip().lower() for k in args.versioned_kinds.split(",") if k.strip())
    notes: list[str] = []
    skipped: list[dict[str, Any]] = []

    try:
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    try:  # the patch allowlist is policy too, so an engine is built even with --no-policy
        policy = create_engine(args.opa_url)
    except (PolicyError, FileNotFoundError) as exc:
        raise InputError(f"cannot load the subset policy: {exc}") from None
    engine: PolicyEngine | None = None if args.no_policy else policy
    config = ServiceConfig(
        versioned_kinds=kinds, custom_workloads=custom, allowed_patch_fields=tuple(patch_fields)
    )
    try:
        admission = OfflineAdmission(
            items,
            now,
            generated_uid=args.generated_uid or str(uuid.uuid4()),
            engine=engine,
            validation_engine=policy,
            config=config,
        )
        if args.operation == "CREATE":
            outcome = admission.create(pod)
            if outcome.spread is not None:
                try:
                    strategy = WorkloadSpread.from_object(outcome.spread).strategy
                except ValueError:
                    strategy = None
                if strategy is not None and strategy.is_adaptive and not strategy.disable_simulation_schedule:
                    if snapshot.node_inventory() is None:
                        notes.append("the snapshot has no nodes: node-fit simulation skipped")
                    elif engine is None:
                        notes.append("--no-policy: node-fit simulation skipped")
            skipped = _skipped_subsets(pod, outcome.spread_before, admission.service.context())
        elif args.operation == "DELETE":
            outcome = admission.delete(pod)
        else:
            outcome = admission.evict(pod)
    except PolicyError as exc:
        raise InputError(f"subset policy: {exc}") from None
    finally:
        policy.close()
    code = EXIT_ALLOWED if outcome.allowed else EXIT_DENIED
    return code, outcome, pod, outcome.spread_before, notes, skipped


def run(args: argparse.Namespace) -> int:
    import yaml

    try:
        code, outcome, pod, before, notes, skipped = _decide(args)
    except InputError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # Objects of the wrong shape deep inside the snapshot or the pod.
        _error(f"cannot evaluate the admission over this input: {type(exc).__name__}: {exc}")
        return EXIT_BAD_INPUT
    if args.output == "json":
        document = outcome.to_json()
        document["warnings"] = [*document["warnings"], *notes]
        document["skippedSubsets"] = skipped
        print(json.dumps(document, indent=2))
    elif args.output == "patch":
        print(json.dumps(outcome.patch, indent=2))
    elif args.output == "pod":
        print(yaml.safe_dump(outcome.pod, sort_keys=False), end="")
    else:
        _print_text(outcome, pod, args.operation, before, notes, skipped)
    if not outcome.allowed:
        print(f"spreadgate admit: denied: {outcome.message}", file=sys.stderr)
    return code
