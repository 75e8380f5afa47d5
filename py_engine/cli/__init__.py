"""The `spreadgate` command line: one sub-command per module of this package.

Each command module exposes `HELP` (its line in `spreadgate --help`; its docstring
heads its own `--help`), `add_arguments(parser)` and `run(args)`, the handler taking
the parsed namespace and returning the exit code; `build_parser` makes the parser.
A command with sub-commands of its own (`united`) exposes `register(subparsers)`
instead. Command modules import their heavy dependencies inside the handler so
that `spreadgate validate` does not pay for Flask or the Kubernetes client.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from py_engine import __version__
from py_engine.cli.helpformat import command_parser, show_defaults

# Order is the order of `spreadgate --help`.
COMMAND_MODULES: tuple[str, ...] = (
    "demo",
    "simulate",
    "cluster",
    "webhook",
    "controller",
    "admit",
    "reconcile",
    "rank",
    "united",
    "validate",
    "gatekeeper",
)

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """Assemble the top-level parser from every command module that is present."""
    parser = argparse.ArgumentParser(
        prog="spreadgate",
        description="Spread a workload's pods over ordered subsets of nodes, enforced at admission.",
    )
    parser.add_argument("--version", action="version", version=f"spreadgate {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"py_engine.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"py_engine.cli.{name}":
                continue  # command not built in this checkout
            raise
        if hasattr(module, "register"):  # a command with sub-commands of its own
            module.register(subparsers)
            continue
        command = command_parser(subparsers, name, module.__doc__, help=module.HELP)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    show_defaults(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `spreadgate` console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `spreadgate rank ... | head` closes our stdout early; that is not an error.
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover - `python -m py_engine.cli`
    sys.exit(main())
