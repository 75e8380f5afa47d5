"""The error a sync raises when its inputs cannot give a trustworthy result."""

from __future__ import annotations


class ReconcileError(ValueError):
    """The spread, its workload or a pod cannot be reconciled as given.

    The controller loop retries the key with back-off (the next sync may see a
    fixed object); `spreadgate reconcile` prints the message and exits 2.
    """
