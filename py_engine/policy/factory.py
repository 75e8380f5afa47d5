"""The factory that picks a backend: embedded regorus, or an OPA server over REST.

It sits above the backends, which import only the interface (`py_engine.policy.interface`).
"""

from __future__ import annotations

from py_engine.policy.embedded import EmbeddedEngine
from py_engine.policy.interface import PolicyEngine
from py_engine.policy.opa_rest import OpaRestEngine
from py_engine.policy.sources import PolicySource, load_policy_sources


def create_engine(
    opa_url: str | None = None,
    sources: tuple[PolicySource, ...] | None = None,
    *,
    timeout_seconds: float = 2.0,
) -> PolicyEngine:
    """The embedded regorus engine, or the OPA REST backend when `opa_url` is given."""
    if opa_url:
        return OpaRestEngine(opa_url, timeout_seconds=timeout_seconds)
    return EmbeddedEngine(sources if sources is not None else load_policy_sources())
