"""`--help` of every command shows each option's default.

Commands keep `argparse.RawDescriptionHelpFormatter` (their module docstring is
the description, laid out by hand); `show_defaults(parser)` switches every such
parser, sub-commands' parsers included, to `DefaultsHelpFormatter`, which appends
`(default: X)` to an option's help unless the help already mentions its default
or the default says nothing (None, False, an empty list).
"""

from __future__ import annotations

import argparse
from typing import Any

_NO_DEFAULT_ACTIONS = (
    argparse._HelpAction,
    argparse._VersionAction,
    argparse._StoreTrueAction,
    argparse._StoreFalseAction,
    argparse._SubParsersAction,
)


def meaningful_default(action: argparse.Action) -> bool:
    """True when `action`'s default is worth printing."""
    default: Any = action.default
    if isinstance(action, _NO_DEFAULT_ACTIONS) or default is argparse.SUPPRESS:
        return False
    return default is not None and default is not False and default != [] and default != ()


def _with_default(action: argparse.Action) -> str:
    text = action.help or ""
    if meaningful_default(action) and "default" not in text.lower():
        text = f"{text} (default: %(default)s)" if text else "(default: %(default)s)"
    return text


class DefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """RawDescription layout plus `(default: X)` after options' help (see the module docstring)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        return _with_default(action)


class WrappedDefaultsHelpFormatter(argparse.HelpFormatter):
    """argparse's default layout plus `(default: X)` after options' help."""

    def _get_help_string(self, action: argparse.Action) -> str:
        return _with_default(action)


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Show defaults in `parser` and every sub-command parser below it (layouts kept)."""
    if parser.formatter_class is argparse.RawDescriptionHelpFormatter:
        parser.formatter_class = DefaultsHelpFormatter
    elif parser.formatter_class is argparse.HelpFormatter:
        parser.formatter_class = WrappedDefaultsHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                show_defaults(child)
        elif action.help is None and action.option_strings and meaningful_default(action):
            action.help = "(default: %(default)s)"


def command_parser(
    subparsers: Any, name: str, description: str | None, *, help: str
) -> argparse.ArgumentParser:
    """A sub-command's parser: `help` is its line in the command list, `description` (the
    module docstring, laid out by hand) heads its `--help`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser
