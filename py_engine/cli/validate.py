"""`spreadgate validate FILE|DIR|-`: check WorkloadSpread and UnitedDeployment manifests
with the Rego policies.

Prints `file: name: field.path: message` per violation (and `file: name: valid`
for a clean spread or UnitedDeployment). Exit status: 0 all valid, 1 violations
found, 2 input that could not be read (or neither a WorkloadSpread nor a
UnitedDeployment in it). UnitedDeployments are checked one at a time with
policies/uniteddeployment (docs/uniteddeployment-validation.md). Spreads and workloads given
in one file are validated together: two spreads of one file that target the
same workload conflict (files are taken to be independent manifests), and a
subset patch is checked against the target's pod template when the input
contains the target.

-o junit writes JUnit XML (one test case per object, one failure per violation
with its field path) and -o github GitHub Actions `::error file=,line=::`
commands (the line of the violating field when the file can be located), for CI;
see py_engine/cli/validate_formats.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from py_engine.cli.options import add_allow_patch_field, add_custom_workload, add_opa_url, add_output
from py_engine.semantics import objects

EXIT_OK, EXIT_VIOLATIONS, EXIT_BAD_INPUT = 0, 1, 2


HELP = "validate WorkloadSpread and UnitedDeployment manifests with the Rego validation policies"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate validate` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR|-", help="manifests (YAML/JSON); - reads stdin")
    add_custom_workload(
        parser, "allow targeting this custom workload kind (repeatable), e.g. game.kruise.io/GameServerSet"
    )
    add_allow_patch_field(parser, ", as the webhook's flag")
    add_opa_url(parser, "evaluate in an OPA server (REST Data API) instead of the embedded engine")
    add_output(
        parser,
        ("text", "json", "junit", "github"),
        "output format: text, json, junit (JUnit XML) or github (Actions workflow commands) "
        "(default: %(default)s)",
    )


def _error(message: str) -> None:
    print(f"spreadgate validate: error: {message}", file=sys.stderr)


def _custom_workloads(values: list[str]) -> list[dict[str, str]] | None:
    """The kinds of --custom-workload (the webhook's flag, read by the workload registry; a
    `=REPLICAS_PATH` is accepted and means nothing here); None after reporting a bad one."""
    from py_engine.model.workloads import WhitelistError, whitelist_from_flags

    try:
        return whitelist_from_flags(values).targets()
    except WhitelistError as exc:
        _error(str(exc))
        return None


def run(args: argparse.Namespace) -> int:
    from py_engine.model import is_workloadspread
    from py_engine.policy import PolicyError, create_engine
    from py_engine.validation import (
        Document,
        DocumentError,
        build_review_input,
        parse_patch_fields,
        read_documents,
        validate_spread,
    )
    from py_engine.validation.uniteddeployment import (
        build_ud_review_input,
        is_validated_uniteddeployment,
        validate_uniteddeployment,
    )

    custom = _custom_workloads(args.custom_workload)
    if custom is None:
        return EXIT_BAD_INPUT
    try:
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except ValueError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    exit_code = EXIT_OK
    documents: list[Document] = []
    unreadable: list[DocumentError] = []
    checked: list[tuple[Document, list[Any]]] = []  # for the CI formats (validate_formats)
    for item in read_documents(args.paths):
        if isinstance(item, DocumentError):
            _error(str(item))
            unreadable.append(item)
            exit_code = EXIT_BAD_INPUT
        else:
            documents.append(item)

    spreads = [d for d in documents if is_workloadspread(d.obj)]
    uds = [d for d in documents if is_validated_uniteddeployment(d.obj)]
    if not spreads and not uds and exit_code == EXIT_BAD_INPUT:
        return exit_code
    if not spreads and not uds:
        found = ", ".join(sorted({f"{d.kind}" for d in documents})) or "nothing"
        _error(
            "no WorkloadSpread or UnitedDeployment (spreadgate.dev or apps.kruise.io) in the input; "
            f"found {found}"
        )
        return EXIT_BAD_INPUT

    try:
        engine = create_engine(args.opa_url)
    except (PolicyError, FileNotFoundError) as exc:
        _error(f"cannot load the validation policy: {exc}")
        return EXIT_BAD_INPUT

    report: list[dict[str, Any]] = []
    try:
        for doc in spreads:
            policy_input = build_review_input(
                doc.obj,
                other_spreads=[
                    o.obj
                    for o in spreads
                    if o is not doc
                    and o.source == doc.source
                    and objects.namespace(o.obj) == objects.namespace(doc.obj)
                ],
                workload=_find_target(doc.obj, documents),
                custom_workloads=custom,
                allowed_patch_fields=patch_fields,
            )
            checked.append((doc, validate_spread(engine, policy_input)))
        for doc in uds:  # UnitedDeployments: policies/uniteddeployment, one object at a time
            ud_input = build_ud_review_input(doc.obj, allowed_patch_fields=patch_fields)
            checked.append((doc, validate_uniteddeployment(engine, ud_input)))
        for doc, violations in checked:
            report.append(
                {"file": doc.source, "name": doc.name, "violations": [v.message for v in violations]}
            )
            if violations and exit_code == EXIT_OK:
                exit_code = EXIT_VIOLATIONS
    except PolicyError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    finally:
        engine.close()

    if args.output in ("junit", "github"):
        from py_engine.cli import validate_formats as formats

        sys.stdout.write(
            formats.render(
                args.output,
                [
                    formats.Checked(
                        d.source,
                        d.index,
                        d.kind,
                        d.name,
                        [formats.Finding(v.field, v.message) for v in found],
                    )
                    for d, found in checked
                ],
                [formats.Unreadable(e.source, e.message) for e in unreadable],
            )
        )
    elif args.output == "json":
        print(json.dumps(report, indent=2))
    else:
        for entry in report:
            for message in entry["violations"]:
                print(f"{entry['file']}: {entry['name']}: {message}")
            if not entry["violations"]:
                print(f"{entry['file']}: {entry['name']}: valid")
    return exit_code


def _find_target(spread: dict[str, Any], documents: list[Any]) -> dict[str, Any] | None:
    """The spread's target workload when the same input contains it."""
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, dict) else None
    if not isinstance(ref, dict):
        return None
    for doc in documents:
        obj = doc.obj
        if (
            obj.get("kind") == ref.get("kind")
            and objects.meta(obj).get("name") == ref.get("name")
            and objects.namespace(obj) == objects.namespace(spread)
        ):
            return dict(obj)
    return None
