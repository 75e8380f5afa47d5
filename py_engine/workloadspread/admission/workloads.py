"""What admission reads of the target workload: its kind's facts and its replica count.

The kinds, the custom-workload whitelist and the replica readers are the workload
registry's (`py_engine/model/workloads.py`); this module adds what only admission
needs: the whitelist as the admission context carries it (entries, parsed once per
distinct sequence) and the lookup of the workload through the context, with Kruise's
denial when `targetFilter.replicasPathList` does not resolve (docs/design-workloadspread.md §1.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model import WorkloadSpread
from py_engine.model.workloads import (
    EMPTY_WHITELIST,
    PathError,
    Whitelist,
    target_kind,
    webhook_replicas,
    whitelist_from_entries,
)
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError, Lookup

# The last entries parsed and their whitelist: a service hands every request the same tuple,
# so it is parsed once, not per admission. A tuple assignment is atomic: no lock needed.
_parsed: tuple[Sequence[Mapping[str, Any]], Whitelist] = ((), EMPTY_WHITELIST)


def context_whitelist(ctx: AdmissionContext) -> Whitelist:
    """The custom kinds of the admission context (its whitelist entries, see the registry)."""
    global _parsed
    entries = ctx.custom_workloads
    if not entries:
        return EMPTY_WHITELIST
    last_entries, last = _parsed
    if last_entries is entries:
        return last
    whitelist = whitelist_from_entries(entries, "custom workloads")
    _parsed = (entries, whitelist)
    return whitelist


_UNREAD = object()


class TargetWorkload:
    """The spread's target workload as one admission reads it (docs/design-workloadspread.md §1.4).

    Built once per reservation from the parsed view: `ordinal_placement` (StatefulSet targets,
    both groups, are placed by pod ordinal without status bookkeeping) is known at once; the
    replica count percentages resolve against is read on first use and kept, so one admission
    sees one count from the caches (`replicas`) and, at most once more, one from the API
    server (`fresh_replicas`).
    """

    __slots__ = ("_replicas", "ctx", "ordinal_placement", "view")

    def __init__(self, view: WorkloadSpread, ctx: AdmissionContext) -> None:
        self.view = view
        self.ctx = ctx
        kind = target_kind(view)
        self.ordinal_placement = kind is not None and kind.ordinal_placement
        self._replicas: Any = _UNREAD

    def replicas(self) -> int | None:
        """The replica count as the webhook reads it from the caches (`ctx.lookup`): 0 without
        any percentage cap (the workload is not even fetched), None when the workload is not
        found. Read once. Raises AdmissionError when the spread's
        `targetFilter.replicasPathList` does not resolve to integers (Kruise denies)."""
        if self._replicas is _UNREAD:
            self._replicas = self._read(self.ctx.lookup)
        replicas: int | None = self._replicas
        return replicas

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
            return webhook_replicas(view, workload, context_whitelist(self.ctx))
        except PathError as exc:
            raise AdmissionError(f"WorkloadSpread {namespace}/{view.name}: targetFilter.replicasPathList: {exc}") from None
