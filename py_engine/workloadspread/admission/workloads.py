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


class TargetWorkload:
    """The spread's target workload as one admission reads it (docs/design-workloadspread.md §1.4).

    Built once per reservation from the parsed view: `ordinal_placement` (StatefulSet targets,
    both groups, are placed by pod ordinal without status bookkeeping) is known at once; the
    replica count percentages resolve against is read on first use and kept, so one admission
    sees one count from the caches (`replicas`) and, at most once more, one from the API
    server (`fresh_replicas`).
    """

    __slots__ = ("_read_once", "ctx", "ordinal_placement", "view")

    def __init__(self, view: WorkloadSpread, ctx: AdmissionContext) -> None:
        self.view = view
        self.ctx = ctx
        kind = target_kind(view)
        self.ordinal_placement = kind is not None and kind.ordinal_placement
        self._read_once: tuple[int | None] | None = None
        """`(replicas(),)` once read."""

    def replicas(self) -> int | None:
        """The replica count as the webhook reads it from the caches (`ctx.lookup`): 0 without
        any percentage cap (the workload is not even fetched), None when the workload is not
        found. Read once. Raises AdmissionError when the spread's
        `targetFilter.replicasPathList` does not resolve to integers (Kruise denies)."""
        if self._read_once is None:
            self._read_once = (self._read(self.ctx.lookup),)
        return self._read_once[0]

    def fresh_replicas(self) -> int | None:
        """The count read from the API server (`ctx.fresh_lookup`), for when the caches may be
        behind a scale-up; None when there is nothing fresher to ask (no percentage cap, no
        fresh lookup) or the workload is not found."""
        if not self.view.uses_percentages or self.ctx.fresh_lookup is None:
            return None
        return self._read(self.ctx.fresh_lookup)

    def _read(self, lookup: Lookup) -> int | None:
        view = self.view
        if not view.uses_percentages:
            return 0
        namespace = view.namespace or "default"
        ref = view.target_ref
        workload = lookup(ref.api_version, ref.kind, namespace, ref.name)
        if workload is None:
            return None
        try:
            return webhook_replicas(view, workload, self.ctx.whitelist)
        except PathError as exc:
            raise AdmissionError(
                f"WorkloadSpread {namespace}/{view.name}: targetFilter.replicasPathList: {exc}"
            ) from None
