"""Reading the fields of a stored subset status entry.

The webhook and the controller both read entries that any writer may have left
malformed (a `creatingPods` that is a string, `conditions` that is a number).
The status is Spreadgate's to rewrite, so a malformed field reads as empty —
it counts no pods and carries no condition — and the next write replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.semantics.objects import JSON_OBJECT


def pod_records(entry: Mapping[str, Any] | None, field: str, *, in_place: bool = False) -> dict[str, Any]:
    """A copy of `entry[field]` (`creatingPods` or `deletingPods`); {} when absent or not an object.

    `in_place`: the caller owns the entry's maps (a private copy of the status), so a plain
    dict is returned itself, to be extended without copying every record it holds.
    """
    records = entry.get(field) if entry else None
    if in_place and type(records) is dict:
        return records
    return dict(records) if isinstance(records, JSON_OBJECT) else {}


def subset_conditions(entry: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The entry's conditions that are objects; [] when `conditions` is absent or not a list."""
    conditions = entry.get("conditions") if entry else None
    if not isinstance(conditions, list):
        return []
    return [c for c in conditions if isinstance(c, JSON_OBJECT)]
