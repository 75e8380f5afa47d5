"""What admission reads of the target workload: its kind's facts and its replica count.

The kinds, the custom-workload whitelist and the replica readers are the workload
registry's (`py_engine/model/workloads.py`); this module adds what only admission
needs: the lookup of the workload through the context, with Kruise's
denial when `targetFilter.replicasPathList` does not resolve (docs/design-workloadspread.md §1.4).
"""

from __future__ import annotations

from py_engine.model import WorkloadSpread
from py_engine.model.workloads import (
    PathError,
    target_kind,
    webhook_replicas,
)
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError, Lookup


def is_statefulset_target(view: WorkloadSpread) -> bool:
    """StatefulSet targets (both groups) are placed by pod ordinal, without status bookkeeping."""
    kind = target_kind(view)
    return kind is not None and kind.ordinal_placement


def workload_replicas(view: WorkloadSpread, namespace: str, ctx: AdmissionContext) -> int:
    """See `current_replicas`; a missing workload counts 0, as in the reference."""
    replicas = current_replicas(view, namespace, ctx)
    return 0 if replicas is None else replicas


def current_replicas(
    view: WorkloadSpread, namespace: str, ctx: AdmissionContext, *, lookup: Lookup | None = None
) -> int | None:
    """The replica count percentages of `view` resolve against, as the webhook reads it.

    The workload is only fetched when a subset uses a percentage (otherwise 0);
    None when the workload is not found. Raises AdmissionError when the spread's
    `targetFilter.replicasPathList` does not resolve to integers (Kruise denies).
    """
    if not view.uses_percentages:
        return 0
    ref = view.target_ref
    workload = (lookup or ctx.lookup)(ref.api_version, ref.kind, namespace, ref.name)
    if workload is None:
        return None
    try:
        return webhook_replicas(view, workload, ctx.whitelist)
    except PathError as exc:
        raise AdmissionError(f"WorkloadSpread {namespace}/{view.name}: targetFilter.replicasPathList: {exc}") from None
