"""`spreadgate gatekeeper`: write the validation policies as Gatekeeper ConstraintTemplates + Constraints.

With `--out-dir DIR` it writes `constraint-template.yaml` and `constraint.yaml` (WorkloadSpreads)
and `uniteddeployment-constraint-template.yaml` and `uniteddeployment-constraint.yaml`
there (what `manifests/gatekeeper/` holds); without it, all documents go to stdout.

`-o DIR` still works in this release but is deprecated (everywhere else `-o` picks
an output format) and prints a warning; it will be removed in the next release.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from py_engine.cli.options import add_allow_patch_field, add_custom_workload

HELP = "generate the Gatekeeper ConstraintTemplate and Constraint from policies/validation"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate gatekeeper` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument(
        "--out-dir",
        "--output-dir",
        dest="output_dir",
        metavar="DIR",
        help="directory to write the templates and constraints to (default: stdout)",
    )
    parser.add_argument(
        "-o",
        dest="deprecated_o",
        metavar="DIR",
        help="deprecated alias of --out-dir (removed in the next release)",
    )
    add_custom_workload(parser, "custom workload kind the Constraint allows as a target (repeatable)")
    add_allow_patch_field(parser, ", e.g. spec.nodeSelector")


def run(args: argparse.Namespace) -> int:
    from py_engine.policy import load_policy_sources
    from py_engine.validation import parse_patch_fields
    from py_engine.validation.gatekeeper import constraint, constraint_template, to_yaml
    from py_engine.validation.ud_gatekeeper import ud_gatekeeper_documents

    if args.deprecated_o is not None:
        print(
            "spreadgate gatekeeper: warning: -o DIR is deprecated (elsewhere -o is an output format) "
            "and will be removed in the next release; use --out-dir DIR",
            file=sys.stderr,
        )
        if args.output_dir is not None and args.output_dir != args.deprecated_o:
            print(
                "spreadgate gatekeeper: error: -o and --out-dir name different directories", file=sys.stderr
            )
            return 2
        args.output_dir = args.deprecated_o
    from py_engine.model.workloads import WhitelistError, whitelist_from_flags

    try:
        custom = whitelist_from_flags(args.custom_workload).targets()
    except WhitelistError as exc:
        print(f"spreadgate gatekeeper: error: {exc}", file=sys.stderr)
        return 2
    try:
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except ValueError as exc:
        print(f"spreadgate gatekeeper: error: {exc}", file=sys.stderr)
        return 2
    try:
        template = to_yaml(constraint_template(load_policy_sources()))
    except (OSError, ValueError) as exc:
        print(f"spreadgate gatekeeper: error: {exc}", file=sys.stderr)
        return 2
    documents = {
        "constraint-template.yaml": template,
        "constraint.yaml": to_yaml(constraint(custom, patch_fields)),
    }
    try:  # the UnitedDeployment template and constraint (policies/uniteddeployment)
        documents.update(ud_gatekeeper_documents(load_policy_sources()))
    except (OSError, ValueError) as exc:
        print(f"spreadgate gatekeeper: error: {exc}", file=sys.stderr)
        return 2
    if args.output_dir is None:
        sys.stdout.write("---\n".join(documents.values()))
        return 0
    target = Path(args.output_dir)
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in documents.items():
            (target / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(
            f"spreadgate gatekeeper: error: cannot write to {target}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    print(f"wrote {', '.join(str(target / n) for n in documents)}")
    return 0
