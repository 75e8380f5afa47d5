"""One admission decided end to end over a snapshot, without committing anything.

The webhook splits a decision around its status commit (reserve, write, then
inject); offline users — `spreadgate admit`, the reference-vector tests — want
the whole answer at once: allowed or not, subset, patch, mutated pod, and the
spread as it would be after the write. `admit_create` and `admit_delete` chain
the core functions exactly as the webhook does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.admission.context import AdmissionContext, AdmissionError, OwnerNotFound
from py_engine.admission.inject import make_patch
from py_engine.admission.matched import SPREADGATE_KEY, without_matched_annotations
from py_engine.admission.patch_guard import inject_checked
from py_engine.admission.release import find_annotated_spread, release_delete
from py_engine.admission.reserve import reserve_create
from py_engine.admission.tracing import find_spread, name_of, namespace_of
from py_engine.model.pods import is_pod_active


@dataclass(frozen=True)
class AdmissionOutcome:
    """The answer to one pod admission, and what it would write."""

    allowed: bool
    subset: str | None
    patch: list[dict[str, Any]]
    pod: dict[str, Any]
    status_written: bool
    spread: dict[str, Any] | None
    warnings: tuple[str, ...]
    message: str
    code: int = 200

    def to_json(self) -> dict[str, Any]:
        """The `spreadgate admit -o json` document."""
        return {
            "allowed": self.allowed,
            "subset": self.subset,
            "patch": self.patch,
            "pod": self.pod,
            "statusWritten": self.status_written,
            "workloadSpread": self.spread,
            "warnings": list(self.warnings),
            "message": self.message,
        }


def _spread_label(spread: dict[str, Any]) -> str:
    return f"{namespace_of(spread)}/{name_of(spread)}"


def _unchanged(pod: dict[str, Any], spread: dict[str, Any] | None, message: str,
               warnings: tuple[str, ...] = ()) -> AdmissionOutcome:
    return AdmissionOutcome(True, None, [], pod, False, spread, warnings, message)


def _without_subset(pod: dict[str, Any], spread: dict[str, Any], warnings: tuple[str, ...]) -> AdmissionOutcome:
    """Admitted without a subset: unchanged, except that a matched annotation the pod arrived
    with is removed (`py_engine.admission.matched`)."""
    label = f"WorkloadSpread {_spread_label(spread)}: no subset chosen"
    stripped = without_matched_annotations(pod)
    if stripped is None:
        return _unchanged(pod, spread, f"{label}; pod admitted unchanged", warnings)
    return AdmissionOutcome(True, None, make_patch(pod, stripped), stripped, False, spread, warnings,
                            f"{label}; pod admitted with its matched-workloadspread annotation removed")


def _denied(pod: dict[str, Any], spread: dict[str, Any] | None, error: AdmissionError) -> AdmissionOutcome:
    return AdmissionOutcome(False, None, [], pod, False, spread, (), error.message, error.code)


def admit_create(
    pod: dict[str, Any], spreads: Sequence[dict[str, Any]], ctx: AdmissionContext, *, generated_uid: str
) -> AdmissionOutcome:
    """Pod CREATE: trace, reserve, inject, diff (docs/design-workloadspread.md §2.1)."""
    if not is_pod_active(pod):
        return _unchanged(pod, None, "pod is not active (terminating or finished); not managed")
    try:
        spread = find_spread(pod, spreads, ctx)
    except OwnerNotFound as exc:
        return _denied(pod, None, exc)
    if spread is None:
        # Spreadgate's key on a pod no spread governs is a forgery (of Kruise's, Kruise may be the author).
        stripped = without_matched_annotations(pod, SPREADGATE_KEY)
        if stripped is not None:
            return AdmissionOutcome(True, None, make_patch(pod, stripped), stripped, False, None, (),
                                    f"no WorkloadSpread governs this pod; its {SPREADGATE_KEY[0]} annotation is removed")
        return _unchanged(pod, None, "no WorkloadSpread governs this pod")
    try:
        reservation = reserve_create(spread, pod, ctx, generated_uid=generated_uid)
        if reservation.subset is None:
            return _without_subset(pod, spread, reservation.warnings)
        written = reservation.spread
        mutated, refused = inject_checked(pod, written if written is not None else spread, reservation.subset,
                                          reservation.uid, ctx)
    except AdmissionError as exc:
        return _denied(pod, spread, exc)
    return AdmissionOutcome(
        allowed=True,
        subset=reservation.subset,
        patch=make_patch(pod, mutated),
        pod=mutated,
        status_written=written is not None,
        spread=written if written is not None else spread,
        warnings=(*reservation.warnings, *refused),
        message=f"WorkloadSpread {_spread_label(spread)}: admitted into subset {reservation.subset!r}",
    )


def admit_delete(pod: dict[str, Any], spreads: Sequence[dict[str, Any]], ctx: AdmissionContext) -> AdmissionOutcome:
    """Pod DELETE or `pods/eviction` CREATE: give the slot back (docs/design-workloadspread.md §2.4).
    Always allowed unless the spread cannot be read."""
    spread = find_annotated_spread(pod, spreads)
    if spread is None:
        return _unchanged(pod, None, "pod is not annotated with an existing WorkloadSpread; nothing to release")
    try:
        release = release_delete(spread, pod, ctx)
    except AdmissionError as exc:
        return _denied(pod, spread, exc)
    if release.spread is None:
        return AdmissionOutcome(True, release.subset, [], pod, False, spread, (),
                                f"WorkloadSpread {_spread_label(spread)}: no status change")
    if not release.freed:
        return AdmissionOutcome(
            True, release.subset, [], pod, True, release.spread, (),
            f"WorkloadSpread {_spread_label(spread)}: deletion recorded; subset {release.subset!r} is at or over"
            " its cap without the pod, so no slot is given back",
        )
    return AdmissionOutcome(
        True, release.subset, [], pod, True, release.spread, (),
        f"WorkloadSpread {_spread_label(spread)}: slot of subset {release.subset!r} given back",
    )
