"""Rego engine adapter: one interface, two backends.

`EmbeddedEngine` runs the policies in-process with regorus (the default);
`OpaRestEngine` asks an OPA server over its REST Data API (production
sidecars). Callers depend only on `PolicyEngine` and never see which one runs.
"""

from py_engine.policy.factory import create_engine
from py_engine.policy.interface import PolicyEngine, PolicyError
from py_engine.policy.sources import PolicySource, load_policy_sources

__all__ = ["PolicyEngine", "PolicyError", "PolicySource", "create_engine", "load_policy_sources"]
