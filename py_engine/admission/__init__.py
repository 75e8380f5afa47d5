"""Pod admission: tracing a pod to its WorkloadSpread, choosing a subset,
counting slots, and building the JSON patch. Decisions are pure functions of
(objects, clock); the committer is the one place that writes.

The interface lives in `py_engine.admission.core` and is re-exported here.
"""

from py_engine.admission.core import (
    AdmissionContext,
    AdmissionError,
    CreateReservation,
    DeleteRelease,
    EligibilityCache,
    Lookup,
    OwnerNotFound,
    apply_subset_patch,
    find_annotated_spread,
    find_spread,
    inject,
    make_patch,
    release_delete,
    reserve_create,
)

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
]
