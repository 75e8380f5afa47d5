"""The engine interface every backend implements (`embedded`, `opa_rest`, `isolated`).

A decision is "evaluate rule `data.<package>.<rule>` for this input": one query,
small input, a JSON-compatible result (Rego sets come back as sorted lists so
both backends answer identically). An undefined rule evaluates to `None`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol


class PolicyError(RuntimeError):
    """The policy could not be loaded or evaluated (not a policy *decision*)."""


class PolicyEngine(Protocol):
    """Evaluates one Rego rule against one input document."""

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        """Value of `rule` (e.g. `data.spreadgate.validation.violation`) or None if undefined."""
        ...

    def close(self) -> None:
        """Release connections or interpreter state."""
        ...


def normalise_result(value: Any) -> Any:
    """Make a Rego value JSON-shaped: sets become sorted lists, recursively.

    regorus returns Python sets for Rego sets while OPA's REST API returns JSON
    arrays; sorting by the canonical JSON text makes both deterministic.
    """
    if isinstance(value, (set, frozenset)):
        items = [normalise_result(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, list):
        return [normalise_result(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise_result(v) for k, v in value.items()}
    return value
