"""The offline `SpreadCommitter` (`py_engine.workloadspread.admission.ports`): records what would be written.

`spreadgate admit` and the reference-vector tests run the admission service
exactly as the webhook does, but nothing may be written: each reservation is
applied to the snapshot's copy of its spread, and the spread it would write is
kept in `writes` (and in the snapshot, so a second admission of the same run
counts the first).
"""

from __future__ import annotations

from typing import Any, TypeVar

from py_engine.semantics.jsoncopy import json_copy
from py_engine.workloadspread.admission.ports import Apply, SpreadCommitter, SpreadNotFound
from py_engine.workloadspread.admission.snapshot import SnapshotReader

R = TypeVar("R")


class RecordingCommitter(SpreadCommitter):
    """Applies reservations to `snapshot`'s spreads and records the writes (see the module docstring);
    `submit_async` is the port's default (answered before returning: nothing here waits)."""

    def __init__(self, snapshot: SnapshotReader) -> None:
        self.snapshot = snapshot
        self.writes: list[dict[str, Any]] = []

    def submit(
        self, namespace: str, name: str, apply: Apply[R], deadline: float, *, dry_run: bool = False
    ) -> R:
        current = self.snapshot.spread(namespace, name)
        if current is None:
            raise SpreadNotFound(f"WorkloadSpread {namespace}/{name} not found")
        written, result = apply(json_copy(current))
        if written is not None and not dry_run:
            self.writes.append(written)
            self.snapshot.replace_spread(written)
        return result
