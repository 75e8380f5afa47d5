"""The inputs the offline commands share: a cluster snapshot file and `--now`.

`spreadgate reconcile` and `spreadgate united plan` read the same kind of
snapshot (`kubectl get ... -o yaml`, a List or several documents, `-` for
stdin), and they and `spreadgate admit` the same optional `--now`; all turn bad
input into one line and exit 2. An `InputError` carries that line.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any


class InputError(ValueError):
    """Unreadable input; the message is the one line the command prints."""


def read_objects(path: str) -> list[dict[str, Any]]:
    """Every object of the snapshot at `path` (Lists flattened); InputError when unreadable."""
    from py_engine.validation.documents import DocumentError, read_documents

    objects = []
    for item in read_documents([path]):
        if isinstance(item, DocumentError):
            raise InputError(str(item))
        objects.append(item.obj)
    return objects


def add_snapshot_flags(parser: argparse.ArgumentParser, *, objects_help: str, name_help: str) -> None:
    """`--state`, `--now` and `--name` of a command that syncs one object offline; the helps
    say what it does with the objects and which object `--name` picks."""
    parser.add_argument(
        "--state", required=True, metavar="STATE.yaml|-", help=f"{objects_help}; - reads stdin"
    )
    parser.add_argument("--now", metavar="RFC3339", help="the sync's clock (default: now)")
    parser.add_argument("--name", help=f"{name_help} when the state holds several")


def read_snapshot(args: argparse.Namespace) -> tuple[list[dict[str, Any]], datetime]:
    """The objects of `--state` and the time of `--now`; InputError when either is bad."""
    return read_objects(args.state), now_from(args.now)


def now_from(text: str | None) -> datetime:
    """`--now` as given (RFC 3339), else the real clock's now; InputError for a bad timestamp."""
    from py_engine.semantics.clock import RealClock
    from py_engine.semantics.timeutil import TimestampError, parse_time

    if text is None:
        return RealClock().now()
    try:
        return parse_time(text)
    except TimestampError as exc:
        raise InputError(f"--now: {exc}") from None
