"""The body of a Kubernetes Event a controller asks to record: type, reason, message.

Pure and neutral: the WorkloadSpread core returns these from a sync, the UnitedDeployment
runtime builds them for its warnings, and `py_engine.runtime.events.ObjectEventRecorder`
turns one into a core/v1 Event on the involved object.
"""

from __future__ import annotations

from dataclasses import dataclass

NORMAL, WARNING = "Normal", "Warning"


@dataclass(frozen=True)
class Event:
    """One event: `type` Normal or Warning, a CamelCase `reason`, a human `message`."""

    type: str
    reason: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "reason": self.reason, "message": self.message}
