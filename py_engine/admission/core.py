"""The admission core's public interface, the one the webhook and its committer code against.

Decisions are pure functions of (objects, `ctx.now`); `ctx.lookup` is the only
read of the outside world and nothing here writes. The webhook:

1. CREATE: `find_spread(pod, spreads_of_namespace, ctx)` (OwnerNotFound -> deny
   404); `reserve_create(spread, pod, ctx, generated_uid=uuid4())` against the
   freshest spread, committing `reservation.spread` when not None (re-apply on
   a 409 with the same uid); then `inject(pod, spread, reservation.subset,
   reservation.uid)` and `make_patch(pod, mutated)`; `subset` None -> admit
   unchanged with `reservation.warnings`, except that a matched annotation it
   arrived with is removed (`without_matched_annotations`, diffed the same way).
2. DELETE / `pods/eviction` CREATE: `find_annotated_spread(pod, spreads)`, then
   `release_delete(spread, pod, ctx)`, committing `release.spread` when not None.

`AdmissionError` (its `code`, 500) means deny; `OwnerNotFound` is its 404 case.
"""

from __future__ import annotations

from py_engine.admission.context import AdmissionContext, AdmissionError, Lookup, OwnerNotFound
from py_engine.admission.eligibility import EligibilityCache
from py_engine.admission.inject import apply_subset_patch, inject, make_patch
from py_engine.admission.matched import without_matched_annotations
from py_engine.admission.release import DeleteRelease, find_annotated_spread, release_delete
from py_engine.admission.reserve import CreateReservation, reserve_create
from py_engine.admission.tracing import find_spread

__all__ = [
    "AdmissionContext",
    "AdmissionError",
    "CreateReservation",
    "DeleteRelease",
    "EligibilityCache",
    "Lookup",
    "OwnerNotFound",
    "apply_subset_patch",
    "find_annotated_spread",
    "find_spread",
    "inject",
    "make_patch",
    "release_delete",
    "reserve_create",
    "without_matched_annotations",
]
