"""Events a sync asks to record on the spread: Kruise's reasons, on the neutral `Event` body
(`py_engine.semantics.events`)."""

from __future__ import annotations

from py_engine.semantics.events import NORMAL, WARNING, Event

__all__ = [
    "CREATE_POD_FAILED",
    "DELETE_POD_FAILED",
    "NORMAL",
    "RECOVER_SCHEDULABLE",
    "WARNING",
    "Event",
    "unique",
]

CREATE_POD_FAILED = "CreatePodFailed"
DELETE_POD_FAILED = "DeletePodFailed"
RECOVER_SCHEDULABLE = "RecoverSchedulable"


def unique(events: list[Event]) -> list[Event]:
    """Drop repeats (the aggregate and the per-version lists see the same expiries)."""
    seen: set[Event] = set()
    kept = []
    for event in events:
        if event not in seen:
            seen.add(event)
            kept.append(event)
    return kept
