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


def _check_string(value: Any, path: str, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or (required and not value):
        raise ModelError(path, "must be a non-empty string")


def check_node_selector_term(term: JSON, path: str, *, key_required: bool) -> None:
    """Raise unless the NodeSelectorTerm `term` has the types Kubernetes gives it: lists of
    requirements, each with a string key (non-empty when `key_required`), a non-empty operator and
    a list of string values. The engines copy terms into pods and match them against nodes, so a
    stored object of another shape (written before validation was installed) is refused."""
    for part in ("matchExpressions", "matchFields"):
        for j, requirement in enumerate(list_field(term.get(part), f"{path}.{part}")):
            where = f"{path}.{part}[{j}]"
            entry = mapping_field(requirement, where, required=True)
            _check_string(entry.get("key"), f"{where}.key", required=key_required)
            _check_string(entry.get("operator"), f"{where}.operator", required=True)
            for k, item in enumerate(list_field(entry.get("values"), f"{where}.values")):
                if not isinstance(item, str):
                    raise ModelError(f"{where}.values[{k}]", "must be a string")


@dataclass(frozen=True)
class ScheduleType:
    """A `scheduleStrategy.type`: Fixed (the default) or Adaptive."""

    type: str

    @property
    def is_adaptive(self) -> bool:
        return self.type == "Adaptive"
