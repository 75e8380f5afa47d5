"""`maxReplicas`: an integer or a percentage string, resolved against the workload size.

Percentages round **up**, as Kruise does everywhere (status initialisation,
missingReplicas, deletion cost): `ceil(pct * replicas / 100)`. With 34%/33%/33%
of 10 replicas the caps are 4/4/4, summing above the replica count; that is the
reference behaviour and keeps every subset able to take its share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from py_engine.model.errors import ModelError

_PERCENT = re.compile(r"^([0-9]+)%$")


@dataclass(frozen=True)
class MaxReplicas:
    """A subset's cap: `value` replicas, or `value` percent of the workload when `percent`."""

    value: int
    percent: bool = False

    def resolve(self, replicas: int) -> int:
        """The cap in pods for a workload of `replicas` replicas (ceil for percentages)."""
        if not self.percent:
            return self.value
        return -(-self.value * max(replicas, 0) // 100)

    def to_json(self) -> int | str:
        return f"{self.value}%" if self.percent else self.value


def parse_max_replicas(raw: Any, field: str = "maxReplicas") -> MaxReplicas | None:
    """Read an int-or-string cap; None means unlimited. Raises ModelError when malformed."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise ModelError(field, f"must be an integer or a percentage string, not {raw!r}")
    if isinstance(raw, int):
        if raw < 0:
            raise ModelError(field, f"must not be negative, got {raw}")
        return MaxReplicas(raw)
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return MaxReplicas(int(raw))
    if isinstance(raw, str):
        match = _PERCENT.match(raw.strip())
        if match is None:
            raise ModelError(field, f'{raw!r} is not a whole percentage like "20%"')
        return MaxReplicas(int(match.group(1)), percent=True)
    raise ModelError(field, f"must be an integer or a percentage string, not {raw!r}")
