"""Taking a slot for a pod being created (docs/design-workloadspread.md §2.1.1 and §2.1.3).

`reserve_create` is a pure, deterministic function of (spread as stored,
pod, context, generated uid): the committer applies it to the freshest copy
of the spread, writes `reservation.spread` with its resourceVersion, and after
a 409 re-applies it to the re-read object. Everything it returns is a new
object and the inputs are never mutated, except the `creatingPods` map of a
status the caller hands over (`status_owned`: the committer's private copy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model import ModelError, WorkloadSpread
from py_engine.semantics import objects
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.workloadspread.admission.caches import AdmissionCaches
from py_engine.workloadspread.admission.choose import Eligibility, choose_by_ordinal, eligibility, pod_ordinal
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError
from py_engine.workloadspread.admission.ledger import SubsetLedger, version_of
from py_engine.workloadspread.admission.workloads import TargetWorkload

# Kubernetes truncates each admission warning; keep ours well below its limit.
MAX_WARNING_CHARS = 240


@dataclass(frozen=True)
class CreateReservation:
    """The outcome of `reserve_create`.

    `subset`: the chosen subset, None = admit the pod unchanged. `spread`: the
    spread with its updated status to write, None = no write needed. `uid`:
    the key of the pod in `creatingPods` — the pod's name, or for a pod with
    only `generateName` the generated uid when an entry was recorded under it
    (`""` when nothing was recorded). Pass it to `inject`.
    """

    subset: str | None
    spread: dict[str, Any] | None
    uid: str
    warnings: tuple[str, ...] = ()


def read_spread(spread: Mapping[str, Any], caches: AdmissionCaches | None = None) -> WorkloadSpread:
    """The typed view of a stored spread (parsed once per version with `caches`); AdmissionError
    when it cannot be read."""
    try:
        return caches.spreads.view(spread) if caches is not None else WorkloadSpread.from_object(spread)
    except ModelError as exc:
        raise AdmissionError(
            f"WorkloadSpread {objects.namespace(spread)}/{objects.name(spread)} cannot be read: {exc}"
        ) from None


def _no_room_warning(spread: str, detail: str, eligible: Eligibility) -> str:
    """The warning of a pod admitted without a subset; `spread` is "namespace/name"."""
    text = (
        f"WorkloadSpread {spread}: no subset has room for this pod ({detail}); "
        "admitted without subset constraints"
    )
    skipped = [f"{name}: {reasons[0]}" for name, reasons in eligible.rejected.items() if reasons]
    if skipped:
        text += "; skipped " + "; ".join(skipped)
    return text if len(text) <= MAX_WARNING_CHARS else text[: MAX_WARNING_CHARS - 3] + "..."


def reserve_create(
    spread: dict[str, Any],
    pod: dict[str, Any],
    ctx: AdmissionContext,
    *,
    generated_uid: str,
    status_owned: bool = False,
) -> CreateReservation:
    """Choose a subset for `pod` (already traced to `spread`) and record it in the status.

    Follows docs/design-workloadspread.md §2.1.1, on the spread's typed view and the ledger of
    the pod's version (`SubsetLedger`, initialised from the spec when empty): single unlimited
    subset shortcut; a pod whose key is already in `creatingPods`/`deletingPods` keeps its
    subset with no write; else the first eligible subset with `missingReplicas > 0` or `-1`;
    `-1` writes nothing, otherwise `creatingPods[key] = now` and `missingReplicas`
    decremented. Spreadgate refinements (`SubsetLedger.follow_caps`): percentage caps follow
    the workload's current replicas, and while the spec is ahead of the status
    (`generation > observedGeneration`) every entry's room is counted from the spec's cap, so
    a lowered cap holds before the controller syncs; when no subset has room under percentage
    caps, the API server's count is asked once (the caches may be behind a scale-up). No
    subset -> admit unchanged with a warning. StatefulSet targets are placed by ordinal
    without any write (§2.1.3).

    The key is the pod's name, or `generated_uid` for a pod with only `generateName` (a
    re-application after a conflict passes the same uid and finds its own entry when the first
    write did land). Raises AdmissionError (deny) when the spread cannot be read or its replica
    paths do not resolve. The pod has passed the service's guards (active, with a controller
    owner).

    `status_owned`: `spread["status"]` is the caller's private copy (the committer's working
    copy of a batch, `Apply` in py_engine/workloadspread/admission/ports.py), so the chosen entry's
    `creatingPods` map is extended in place instead of copied. It holds every pod admitted
    since the controller's last sync, and a copy per reservation made each admission cost
    O(that backlog). Only the returned spread is to be used afterwards; nothing changes in
    place when no write is needed or the function raises.
    """
    view = read_spread(spread, ctx.caches)
    name = objects.name(pod)
    target = TargetWorkload(view, ctx)
    if target.ordinal_placement:
        return _reserve_statefulset(view, pod, ctx)
    if len(view.subsets) == 1 and view.subsets[0].max_replicas is None:
        return CreateReservation(view.subsets[0].name, None, name)

    replicas = target.replicas()  # the workload is read (at most) once, before the counts
    ledger = SubsetLedger(view, version_of(pod, ctx), target.replicas)
    # Caps the controller has not resolved yet (a spec change it has not synced) are
    # counted from the spec and the slots each entry holds; percentages always are.
    ledger.follow_caps(replicas)
    key = name or generated_uid
    recorded = ledger.recorded(key)
    if recorded is not None:
        if recorded not in ledger.subsets:
            warning = (
                f"WorkloadSpread {view.namespace}/{view.name}: "
                f"recorded subset {recorded!r} is no longer in the spec"
            )
            return CreateReservation(None, None, key, (warning,))
        return CreateReservation(recorded, None, key)

    eligible = eligibility(pod, view, ledger.entries, ctx)
    entry = ledger.first_with_room(eligible.names)
    if entry is None:
        # "Full" under percentage caps may only mean the cached workload is behind a
        # scale-up (its pods can reach us before its watch event), also when this
        # version's entries were just initialised from that cached count: ask the API once.
        fresh = target.fresh_replicas()
        if fresh is not None:
            ledger.follow_caps(fresh)
            entry = ledger.first_with_room(eligible.names)
    if entry is None:
        spread_name = f"{view.namespace or 'default'}/{view.name}"
        return CreateReservation(
            None, None, name, (_no_room_warning(spread_name, f"version {ledger.version}", eligible),)
        )
    subset = str(entry["name"])
    if not ledger.reserve(entry, key, ctx.now, in_place=status_owned):
        return CreateReservation(subset, None, name)  # unlimited: nothing to count
    return CreateReservation(subset, ledger.written(), key)


def _reserve_statefulset(
    view: WorkloadSpread, pod: Mapping[str, Any], ctx: AdmissionContext
) -> CreateReservation:
    """Ordinal placement; the aggregate status only supplies Schedulable conditions."""
    name = objects.name(pod)
    aggregate = view.stored_status.get("subsetStatuses")
    entries = [e for e in aggregate if isinstance(e, JSON_OBJECT)] if isinstance(aggregate, list) else []
    eligible = eligibility(pod, view, entries, ctx)
    subset = choose_by_ordinal(view, name, eligible)
    if subset is None:
        warning = _no_room_warning(
            f"{view.namespace or 'default'}/{view.name}", f"ordinal {pod_ordinal(name)}", eligible
        )
        return CreateReservation(None, None, name, (warning,))
    return CreateReservation(subset, None, name)
