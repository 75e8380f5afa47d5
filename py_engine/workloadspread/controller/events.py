"""Events a sync asks to record on the spread (reasons as Kruise's)."""

from __future__ import annotations

from dataclasses import dataclass

NORMAL, WARNING = "Normal", "Warning"
CREATE_POD_FAILED = "CreatePodFailed"
DELETE_POD_FAILED = "DeletePodFailed"
RECOVER_SCHEDULABLE = "RecoverSchedulable"


@dataclass(frozen=True)
class Event:
    """One event: `type` Normal or Warning, a CamelCase `reason`, a human `message`."""

    type: str
    reason: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "reason": self.reason, "message": self.message}


def unique(events: list[Event]) -> list[Event]:
    """Drop repeats (the aggregate and the per-version lists see the same expiries)."""
    seen: set[Event] = set()
    kept = []
    for event in events:
        if event not in seen:
            seen.add(event)
            kept.append(event)
    return kept
