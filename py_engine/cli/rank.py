"""`spreadgate rank`: which pods a scale-down deletes, first victim first.

Reads pods as `kubectl get pods -o json` (or `-o yaml`) prints them (a
List/PodList), as a JSON array, or as YAML documents (multi-document, Lists;
the reader of `spreadgate validate`), keeps the active ones (not Succeeded/Failed, not being deleted; the
controllers never count the others) and prints them in the order the workload
controller would delete them:

  kubectl get pods -l app=web -o json | spreadgate rank -
  spreadgate rank -f pods.json --count 3 -o table
  spreadgate rank -f pods.json --controller cloneset --nodes nodes.json \\
      --topology-key topology.kubernetes.io/zone -o json

ReplicaSet (default): Kubernetes' ActivePodsWithRanks order. The rank of a pod
is the number of active related pods on its node, itself included; related pods
are the input pods plus --related (pods of the sibling ReplicaSets of the same
Deployment). --no-controller-owner models a bare ReplicaSet (every rank 0), and
so does a --related file that holds no pods (an empty list: upstream's ranker
given no related pods ranks every pod 0).
--count N simulates syncs of at most 500 deletions, re-ranking in between, and
takes pods unsorted when a sync deletes all that remain, as the controller does.

CloneSet: OpenKruise's order: pods in PreparingDelete and pods marked
specified-delete first, then old-revision pods, then update-revision pods, each
revision group ranked on its own by the SameNodeRanker, or by the
SpreadConstraintsRanker when topology keys are given (--topology-key, or the
template's topologySpreadConstraints of --cloneset; node labels from --nodes).
PreparingDelete pods lead because the CloneSet controller's Scale() finishes
them before any ranked scale-in; Kruise's comparator alone does not look at
the lifecycle state, so a comparator-only reading of Kruise would rank them
among the others.

-o json prints, per pod: position, name, namespace, node, rank (null when the
controller does not rank that pod) and `criterion`, the first comparison rule
that separates the pod from the next one: scheduled, phase, available, ready,
deletion-cost, rank, ready-time, ready-time-uid (UID order inside a log2 age
bucket), restarts, creation-time, creation-time-uid; or, between groups,
preparing-delete, specified-delete, revision, partition, next-sync; `equal`
(nothing separates them; input order kept), `unsorted` (the controller takes
them in list order) and `last`.

Exit status: 0 on success, 2 for input that cannot be used (the message says why).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from py_engine.cli.options import add_output

if TYPE_CHECKING:
    from py_engine.scaledown import Placement, PodFacts

EXIT_OK, EXIT_BAD_INPUT = 0, 2
CONTROLLERS = ("replicaset", "cloneset")
OUTPUTS = ("names", "json", "table")


class RankInputError(Exception):
    """Input or option combination that `spreadgate rank` cannot use."""


HELP = "show which pods a ReplicaSet or CloneSet scale-down deletes first"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate rank` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument("source", nargs="?", metavar="PODS.json|-", help="pods to rank (same as -f)")
    parser.add_argument("-f", "--filename", metavar="PODS.json|-", help="pods to rank; - reads stdin")
    parser.add_argument(
        "--controller", choices=CONTROLLERS, default="replicaset", help="whose order to model"
    )
    parser.add_argument(
        "--related",
        metavar="RELATED.json",
        help="replicaset: pods of the sibling ReplicaSets (same controller owner), counted in ranks",
    )
    parser.add_argument(
        "--no-controller-owner",
        action="store_true",
        help="replicaset: the ReplicaSet has no controller owner, so every rank is 0",
    )
    parser.add_argument("--nodes", metavar="NODES.json", help="cloneset: nodes (kubectl get nodes -o json)")
    parser.add_argument(
        "--topology-key",
        action="append",
        default=[],
        metavar="KEY",
        help="cloneset: rank by this topology spread key (repeatable; replaces the template's)",
    )
    parser.add_argument(
        "--cloneset",
        metavar="CLONESET.json",
        help="cloneset: the CloneSet object (update revision, minReadySeconds, podsToDelete, "
        "partition, topology spread constraints)",
    )
    parser.add_argument("--update-revision", metavar="HASH", help="cloneset: the update revision hash")
    parser.add_argument(
        "--min-ready-seconds",
        type=_non_negative,
        metavar="N",
        help="cloneset: minReadySeconds for availability",
    )
    parser.add_argument(
        "--ranks", metavar="RANKS.json", help="explicit ranks: a JSON object pod name -> number"
    )
    parser.add_argument("--now", metavar="RFC3339", help="reference time (default: the current time)")
    parser.add_argument(
        "--feature-gates",
        metavar="Name=bool,...",
        help="replicaset: PodDeletionCost, LogarithmicScaleDown (both default true)",
    )
    parser.add_argument(
        "--count", type=_non_negative, metavar="N", help="print only the victims of a scale-down by N"
    )
    add_output(parser, OUTPUTS, "output format")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def _error(message: str) -> None:
    print(f"spreadgate rank: error: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Handler of `spreadgate rank`: 0 when the order was printed, 2 for unusable input."""
    from py_engine.scaledown import ScaledownInputError
    from py_engine.semantics.timeutil import TimestampError

    # Ranking allocates a few objects per pod while the decoded input (millions of
    # small dicts for 100,000 pods) is alive; pausing the cyclic GC saves it from
    # rescanning that input again and again. Nothing here creates reference cycles.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        lines = _rank(args)
    except (RankInputError, ScaledownInputError, TimestampError) as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    finally:
        if was_enabled:
            gc.enable()
    sys.stdout.write(lines)
    return EXIT_OK


def _read_json(path: str, label: str, stdin: TextIO | None = None) -> Any:
    """The document at `path`: JSON (the fast path for large pod lists), else YAML.

    YAML goes through `py_engine.validation.documents` (multi-document, Lists
    flattened); several objects come back as a `List`, one object as itself.
    """
    where = "stdin" if path == "-" else repr(path)
    try:
        if path == "-":
            text = (stdin or sys.stdin).read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise RankInputError(f"cannot read {label} from {where}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RankInputError(f"{label} from {where} is not UTF-8 text") from None
    if not text.strip():
        raise RankInputError(f"{label} from {where} is empty")
    if not text.lstrip().startswith(("{", "[")):
        return _read_yaml(text, label, where)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RankInputError(
            f"{label} from {where} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise RankInputError(f"{label} from {where} is nested too deeply to be pod JSON") from None


def _read_yaml(text: str, label: str, where: str) -> Any:
    from py_engine.validation.documents import DocumentError, parse_documents

    try:
        documents = parse_documents(where, text.encode("utf-8"))
    except DocumentError as exc:
        raise RankInputError(f"{label} from {where} is not valid JSON or YAML: {exc.message}") from None
    objects = [document.obj for document in documents]
    if len(objects) == 1 and objects[0].get("kind") not in ("Pod", "Node"):
        return objects[0]  # one object: a CloneSet, the --ranks mapping
    return {"kind": "List", "items": objects}


def _source(args: argparse.Namespace) -> str:
    if args.source is not None and args.filename is not None:
        raise RankInputError("give the pods either as an argument or with -f, not both")
    source = args.filename if args.filename is not None else args.source
    if source is None:
        raise RankInputError("no pods given: use -f PODS.json, or - to read stdin")
    stdin_users = [name for name, value in (("--related", args.related), ("--nodes", args.nodes),
                   ("--ranks", args.ranks), ("--cloneset", args.cloneset)) if value == "-"]  # fmt: skip
    if stdin_users:
        raise RankInputError(f"only the pods can be read from stdin, not {stdin_users[0]}")
    return str(source)


def _now(args: argparse.Namespace) -> datetime:
    from py_engine.semantics.clock import RealClock
    from py_engine.semantics.timeutil import TimestampError, parse_time

    if args.now is None:
        return RealClock().now()
    try:
        return parse_time(args.now)
    except TimestampError as exc:
        raise RankInputError(f"--now: {exc}") from None


def _explicit_ranks(args: argparse.Namespace, names: Sequence[str], integral: bool) -> list[float] | None:
    if args.ranks is None:
        return None
    document = _read_json(args.ranks, "ranks file")
    if not isinstance(document, dict):
        raise RankInputError("--ranks must be a JSON object mapping pod names to numbers")
    for name, value in document.items():
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or (integral and not isinstance(value, int)) or not math.isfinite(value):
            kind = "an integer" if integral else "a number"
            raise RankInputError(f"--ranks: rank of {name!r} must be {kind}, got {value!r}")
    if len(set(names)) != len(names):
        raise RankInputError("--ranks needs unique pod names, but some active pods share a name")
    missing = [name for name in names if name not in document]
    if missing:
        raise RankInputError(f"--ranks has no rank for {len(missing)} pod(s): {', '.join(missing[:5])}")
    unknown = sorted(set(document) - set(names))
    if unknown:
        raise RankInputError(
            f"--ranks names pods that are not among the active input pods: {', '.join(unknown[:5])}"
        )
    return [document[name] for name in names]


def _reject(args: argparse.Namespace, controller: str, options: Sequence[tuple[str, object]]) -> None:
    for flag, value in options:
        if value not in (None, False, []):
            raise RankInputError(f"{flag} does not apply to --controller {controller}")


def _rank(args: argparse.Namespace) -> str:
    from py_engine.scaledown import pod_list_items, read_pods

    source = _source(args)
    facts_all = read_pods(pod_list_items(_read_json(source, "pods")))
    facts = [pod for pod in facts_all if pod.active]
    ignored = len(facts_all) - len(facts)
    if ignored:
        print(
            f"spreadgate rank: note: ignored {ignored} inactive pod(s) (Succeeded, Failed or being deleted)",
            file=sys.stderr,
        )
    if args.count is not None and args.count > len(facts):
        raise RankInputError(f"--count {args.count} exceeds the {len(facts)} active pod(s)")
    now = _now(args)

    explain = args.output != "names"
    if args.controller == "replicaset":
        placements = _replicaset(args, facts, now, explain)
    else:
        placements = _cloneset(args, facts, now, explain)
    return _render(args.output, args.controller, facts, placements)


def _replicaset(
    args: argparse.Namespace, facts: list[PodFacts], now: datetime, explain: bool
) -> list[Placement]:
    from py_engine.scaledown import Placement, merge_related, parse_feature_gates, pod_list_items, read_pods
    from py_engine.scaledown.replicaset import replicaset_order, scale_down_passes

    _reject(
        args,
        "replicaset",
        [("--nodes", args.nodes), ("--topology-key", args.topology_key), ("--cloneset", args.cloneset),
         ("--update-revision", args.update_revision), ("--min-ready-seconds", args.min_ready_seconds)],
    )  # fmt: skip
    gates = parse_feature_gates(args.feature_gates or "")
    if args.no_controller_owner and args.related is not None:
        raise RankInputError("--related and --no-controller-owner contradict each other")
    related: list[PodFacts] | None
    if args.no_controller_owner:
        related = None
    elif args.related is not None:
        if not args.related:
            raise RankInputError("--related needs a file name (a file holding [] means no related pods)")
        siblings = read_pods(pod_list_items(_read_json(args.related, "related pods")))
        # Given explicitly, an empty list means "no related pods" (every rank 0), not "not given".
        related = merge_related(facts, siblings) if siblings else []
    else:
        related = facts
    explicit = _explicit_ranks(args, [pod.name for pod in facts], integral=True)
    ranks = None if explicit is None else [int(rank) for rank in explicit]
    if args.count is None:
        order = replicaset_order(facts, related, now=now, gates=gates, ranks=ranks)
        return order.placements() if explain else [Placement(index, None, "") for index in order.order]
    passes = scale_down_passes(facts, related, args.count, now=now, gates=gates, ranks=ranks)
    return [placement for chosen in passes for placement in chosen]


def _cloneset(
    args: argparse.Namespace, facts: list[PodFacts], now: datetime, explain: bool
) -> list[Placement]:
    from dataclasses import replace

    from py_engine.scaledown import CloneSetSpec, cloneset_spec_from_object, constraints_from_keys, read_nodes
    from py_engine.scaledown.cloneset import cloneset_deletion_order, cloneset_victims

    _reject(
        args,
        "cloneset",
        [("--related", args.related), ("--no-controller-owner", args.no_controller_owner),
         ("--feature-gates", args.feature_gates)],
    )  # fmt: skip
    spec = CloneSetSpec()
    if args.cloneset:
        spec = cloneset_spec_from_object(_read_json(args.cloneset, "CloneSet"))
    if args.update_revision is not None:
        spec = replace(spec, update_revision=args.update_revision or None)
    if args.min_ready_seconds is not None:
        spec = replace(spec, min_ready_seconds=args.min_ready_seconds)
    if args.topology_key:
        if any(not key for key in args.topology_key):
            raise RankInputError("--topology-key must not be empty")
        spec = replace(spec, constraints=constraints_from_keys(args.topology_key))
    nodes = read_nodes(_read_json(args.nodes, "nodes")) if args.nodes else None
    if spec.constraints and nodes is None:
        raise RankInputError("ranking by topology keys needs node labels: add --nodes NODES.json")
    explicit = _explicit_ranks(args, [pod.name for pod in facts], integral=False)
    ranks = None if explicit is None else {index: float(rank) for index, rank in enumerate(explicit)}
    if args.count is None:
        return cloneset_deletion_order(facts, spec, nodes, now, ranks, explain)
    return cloneset_victims(facts, spec, args.count, nodes, now, ranks, explain)


def _format_rank(rank: float | None, controller: str) -> int | float | None:
    if rank is None:
        return None
    if controller == "replicaset" and float(rank).is_integer():
        return int(rank)
    return rank


def _render(output: str, controller: str, facts: Sequence[PodFacts], placements: Sequence[Placement]) -> str:
    if output == "names":
        return "".join(f"{facts[p.item].name}\n" for p in placements)
    rows = [
        {
            "position": position,
            "name": facts[p.item].name,
            "namespace": facts[p.item].namespace,
            "node": facts[p.item].node_name,
            "rank": _format_rank(p.rank, controller),
            "criterion": p.criterion,
        }
        for position, p in enumerate(placements, start=1)
    ]
    if output == "json":
        return json.dumps(rows, indent=2) + "\n"
    return _table(controller, facts, placements, rows)


def _table(
    controller: str,
    facts: Sequence[PodFacts],
    placements: Sequence[Placement],
    rows: Sequence[dict[str, Any]],
) -> str:
    header = ("#", "NAME", "NODE", "PHASE", "READY", "COST", "RANK", "DECIDED BY")
    body: list[tuple[str, ...]] = []
    for placement, row in zip(placements, rows, strict=True):
        pod = facts[placement.item]
        rank = row["rank"]
        if rank is None:
            shown = "-"
        elif isinstance(rank, float):
            shown = f"{rank:.4g}"
        else:
            shown = str(rank)
        body.append(
            (
                str(row["position"]),
                pod.name,
                pod.node_name or "<none>",
                pod.phase or "<none>",
                "yes" if pod.ready else "no",
                str(pod.cost),
                shown,
                placement.criterion,
            )
        )
    if not body:
        return f"no active pods to rank ({controller})\n"
    widths = [max(len(line[column]) for line in (header, *body)) for column in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in (header, *body)
    )
