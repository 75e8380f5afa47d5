"""Tunables of one sync: the reference's constants, overridable for tests and operators."""

from __future__ import annotations

from dataclasses import dataclass, field

from py_engine.model.constants import (
    CREATING_POD_TIMEOUT_SECONDS,
    DEFAULT_RECOVERY_WINDOW_SECONDS,
    DELETING_POD_TIMEOUT_SECONDS,
)

# Kruise's `--ws-enabled-versioned-status` default; "deployment" implies "replicaset".
DEFAULT_VERSIONED_KINDS: frozenset[str] = frozenset({"deployment", "replicaset"})


@dataclass(frozen=True)
class ReconcileOptions:
    """How long webhook bookkeeping lives and which workload kinds get per-version status.

    `recovery_window_seconds` is the default of a spread without the
    `spreadgate.dev/recovery-window-seconds` annotation.
    """

    creating_timeout_seconds: float = CREATING_POD_TIMEOUT_SECONDS
    deleting_timeout_seconds: float = DELETING_POD_TIMEOUT_SECONDS
    recovery_window_seconds: int = DEFAULT_RECOVERY_WINDOW_SECONDS
    versioned_kinds: frozenset[str] = field(default=DEFAULT_VERSIONED_KINDS)

    def versioned(self, kind: str) -> bool:
        """Whether pods of a target of this kind are bucketed by version."""
        kinds = {k.lower() for k in self.versioned_kinds}
        if "deployment" in kinds:
            kinds.add("replicaset")
        return kind.lower() in kinds


DEFAULT_OPTIONS = ReconcileOptions()
