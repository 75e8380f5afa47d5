"""The engine interface and the factory that picks a backend.

A decision is "evaluate rule `data.<package>.<rule>` for this input": one query,
small input, a JSON-compatible result (Rego sets come back as sorted lists so
both backends answer identically). An undefined rule evaluates to `None`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from py_engine.policy.sources import PolicySource, load_policy_sources


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


def create_engine(
    opa_url: str | None = None,
    sources: tuple[PolicySource, ...] | None = None,
    *,
    timeout_seconds: float = 2.0,
) -> PolicyEngine:
    """The embedded regorus engine, or the OPA REST backend when `opa_url` is given."""
    if opa_url:
        from py_engine.policy.opa_rest import OpaRestEngine

        return OpaRestEngine(opa_url, timeout_seconds=timeout_seconds)
    from py_engine.policy.embedded import EmbeddedEngine

    return EmbeddedEngine(sources if sources is not None else load_policy_sources())


def normalise_result(value: Any) -> Any:
    """Make a Rego value JSON-shaped: sets become sorted lists, recursively.

    regorus returns Python sets for Rego sets while OPA's REST API returns JSON
    arrays; sorting by the canonical JSON text makes both deterministic.
    """
    import json

    if isinstance(value, (set, frozenset)):
        items = [normalise_result(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, list):
        return [normalise_result(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise_result(v) for k, v in value.items()}
    return value
