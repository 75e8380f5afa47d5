"""What the WorkloadSpread and UnitedDeployment views share: the strict readers of a field
(its value, or a `ModelError` naming its path) and the Fixed/Adaptive schedule type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from py_engine.model.errors import ModelError
from py_engine.semantics.objects import JSON_OBJECT

JSON = dict[str, Any]


def mapping_field(value: Any, path: str, *, required: bool = False) -> JSON:
    """A copy of the object at `path`; `{}` when it is absent and not `required`."""
    if value is None and not required:
        return {}
    if not isinstance(value, JSON_OBJECT):
        raise ModelError(path, "must be an object" if value is not None else "is required")
    return dict(value)


def list_field(value: Any, path: str) -> list[Any]:
    """The list at `path`; `[]` when it is absent."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelError(path, "must be a list")
    return value


@dataclass(frozen=True)
class ScheduleType:
    """A `scheduleStrategy.type`: Fixed (the default) or Adaptive."""

    type: str

    @property
    def is_adaptive(self) -> bool:
        return self.type == "Adaptive"
