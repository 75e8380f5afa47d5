"""Command-line flags several `spreadgate` commands share, each declared once.

A flag the webhook, the controller and the offline tools all take (`--custom-workload`,
`--versioned-kinds`, ...) must parse the same everywhere, or a setting tried offline would
mean something else in the cluster; only the sentence saying what the command does with it
differs, and callers pass that.
"""

from __future__ import annotations

import argparse

from py_engine.cli.preflight import opa_url, port

__all__ = [
    "add_allow_patch_field",
    "add_custom_workload",
    "add_embedded_ports",
    "add_kubeconfig",
    "add_opa_url",
    "add_output",
    "add_versioned_kinds",
]

WITH_REPLICAS = "GROUP/KIND[=REPLICAS_PATH]"
"""`--custom-workload` metavar of the commands that read a custom workload's replicas."""


def add_kubeconfig(parser: argparse.ArgumentParser) -> None:
    """`--kubeconfig` of the commands that talk to a cluster."""
    parser.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="cluster configuration (default: in-cluster, then $KUBECONFIG / ~/.kube/config)",
    )


def add_embedded_ports(parser: argparse.ArgumentParser) -> None:
    """`--port` and `--webhook-port` of the commands that start the embedded cluster."""
    parser.add_argument(
        "--port",
        type=port,
        default=0,
        metavar="PORT",
        help="HTTPS port of the embedded API server (default: a free port)",
    )
    parser.add_argument(
        "--webhook-port",
        type=port,
        default=0,
        metavar="PORT",
        help="HTTPS port of the admission webhook (default: a free port)",
    )


def add_custom_workload(parser: argparse.ArgumentParser, help: str, metavar: str = "GROUP/KIND") -> None:
    """`--custom-workload` (repeatable); `help` says what the command does with the kind."""
    parser.add_argument("--custom-workload", action="append", default=[], metavar=metavar, help=help)


def add_allow_patch_field(parser: argparse.ArgumentParser, tail: str) -> None:
    """`--allow-patch-field` (repeatable); `tail` ends the help (", e.g. ...", or "")."""
    parser.add_argument(
        "--allow-patch-field",
        action="append",
        default=[],
        metavar="PATH",
        help=f"pod field a subset patch may set beyond the default allowlist (repeatable){tail}",
    )


def add_opa_url(parser: argparse.ArgumentParser, help: str) -> None:
    """`--opa-url` (checked by `preflight.opa_url`); `help` says what the server evaluates."""
    parser.add_argument("--opa-url", type=opa_url, metavar="URL", help=help)


def add_output(parser: argparse.ArgumentParser, choices: tuple[str, ...], help: str | None = None) -> None:
    """`-o/--output`, one of `choices`, the first by default."""
    parser.add_argument("-o", "--output", choices=choices, default=choices[0], help=help)


def add_versioned_kinds(parser: argparse.ArgumentParser) -> None:
    """`--versioned-kinds` of the commands that keep per-version status."""
    parser.add_argument(
        "--versioned-kinds",
        default="deployment,replicaset",
        metavar="KINDS",
        help="workload kinds with per-version status (default: deployment,replicaset)",
    )
