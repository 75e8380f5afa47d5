"""Reading untrusted JSON: a value of the wrong type reads as empty.

Snapshots and stored objects may hold anything; the planner reads them through
these two functions so a malformed field never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
