"""The inputs the offline commands share: a cluster snapshot file and `--now`.

`spreadgate reconcile` and `spreadgate united plan` read the same kind of
snapshot (`kubectl get ... -o yaml`, a List or several documents, `-` for
stdin), and they and `spreadgate admit` the same optional `--now`; all turn bad
input into one line and exit 2. An `InputError` carries that line.
"""

from __future__ import annotations

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
