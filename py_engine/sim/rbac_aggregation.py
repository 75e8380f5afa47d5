"""ClusterRole aggregation written back, as kube-controller-manager's aggregation controller does.

The authorizer computes an aggregated ClusterRole's rules on its own (py_engine/sim/rbac.py),
so decisions never wait for this; writing them into the stored object as well makes what
people read match what is enforced: `kubectl get clusterrole edit -o yaml` lists the rules
of `view` and of every role labelled `rbac.authorization.k8s.io/aggregate-to-edit`, as on a
real cluster. After any ClusterRole write, each aggregated role whose stored `rules` differ
from the computed ones is updated (its own writes do not start another round; a conflict
with a concurrent writer is retried, a bounded number of times).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping

from py_engine.sim.interface import JSON
from py_engine.sim.rbac import aggregated_rules
from py_engine.sim.store import Store, StoreConflict, StoreMissing

CLUSTER_ROLES = "clusterroles.rbac.authorization.k8s.io"
MAX_ROUNDS = 8


class ClusterRoleAggregator:
    """Registers itself on `store.on_written`; see the module docstring."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._local = threading.local()
        store.on_written.append(self._on_written)

    def _on_written(self, resource: str, _obj: JSON) -> None:
        if resource != CLUSTER_ROLES or getattr(self._local, "active", False):
            return
        self._local.active = True
        try:
            for _ in range(MAX_ROUNDS):
                if not self._sync_once():
                    return
        finally:
            self._local.active = False

    def _sync_once(self) -> bool:
        """Write every stale aggregated role once; True when anything was written or raced."""
        roles = self._store.list(CLUSTER_ROLES)[0]
        effective = aggregated_rules(roles)
        busy = False
        for role in roles:
            meta = role.get("metadata") or {}
            name = str(meta.get("name") or "")
            if not isinstance(role.get("aggregationRule"), Mapping) or role.get("rules") == effective.get(
                name
            ):
                continue
            updated = dict(role)
            updated["rules"] = copy.deepcopy(effective.get(name, []))
            busy = True
            try:
                self._store.update(CLUSTER_ROLES, "", name, updated, str(meta.get("resourceVersion", "")))
            except (StoreConflict, StoreMissing):
                continue
        return busy
