"""One admission decided offline, end to end, by the webhook's own service.

`spreadgate admit` and the reference-vector tests want the whole answer at
once: allowed or not, subset, patch, the pod as admitted, and the spread as it
would be after the write. `OfflineAdmission` runs `AdmissionService` (the
pipeline the webhook runs) over a `SnapshotReader` and a `RecordingCommitter`,
sends it the AdmissionReview request the API server would send, and reads the
answer back as an `AdmissionOutcome`. Nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.policy import PolicyEngine
from py_engine.semantics import objects
from py_engine.semantics.clock import FixedClock
from py_engine.workloadspread.admission.recording import RecordingCommitter
from py_engine.workloadspread.admission.service import AdmissionService, Decision, ServiceConfig
from py_engine.workloadspread.admission.snapshot import SnapshotReader

JSON = dict[str, Any]
POD_RESOURCE = {"group": "", "version": "v1", "resource": "pods"}


@dataclass(frozen=True)
class AdmissionOutcome:
    """The answer to one pod admission, and what it would write."""

    allowed: bool
    subset: str | None
    patch: list[JSON]
    pod: JSON
    status_written: bool
    spread: JSON | None
    warnings: tuple[str, ...]
    message: str
    code: int = 200
    spread_before: JSON | None = None
    """The spread as it was before the recorded write (not part of `to_json`)."""

    def to_json(self) -> JSON:
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


def _summary(decision: Decision, spread: JSON | None, operation: str) -> str:
    """The decision in words: the service's own message when it gave one."""
    if decision.message or not decision.allowed:
        return decision.message
    if spread is None:
        return "no WorkloadSpread governs this pod"
    label = f"WorkloadSpread {objects.namespace(spread)}/{objects.name(spread)}"
    if operation != "CREATE":
        if decision.outcome == "released":
            return f"{label}: slot of subset {decision.subset!r} given back"
        return f"{label}: no status change"
    if decision.subset is None:
        admitted = "with its annotation removed" if decision.patch else "unchanged"
        return f"{label}: no subset chosen; pod admitted {admitted}"
    return f"{label}: admitted into subset {decision.subset!r}"


class OfflineAdmission:
    """The admission service over a snapshot of `items`, deciding at `now` (see the module docstring).

    `engine` None skips the subset policy (the reference's checks only);
    `validation_engine` checks subset patches against the allowlist (with
    `config.check_subset_patches`); `generated_uid` keys the `creatingPods` entry
    of a pod with only `generateName`.
    """

    def __init__(
        self,
        items: Iterable[JSON],
        now: datetime,
        *,
        generated_uid: str,
        engine: PolicyEngine | None = None,
        validation_engine: PolicyEngine | None = None,
        config: ServiceConfig | None = None,
    ) -> None:
        self.snapshot = SnapshotReader(items)
        self.committer = RecordingCommitter(self.snapshot)
        self.service = AdmissionService(
            self.snapshot,
            self.committer,
            FixedClock(now),
            engine=engine,
            validation_engine=validation_engine,
            config=config,
            decision_cache=EligibilityCache(16),
            node_classes=NodeClassCache(),
            new_uid=lambda: generated_uid,
        )

    def create(self, pod: JSON) -> AdmissionOutcome:
        """A pod CREATE through the mutating webhook's path."""
        request = _pod_request("CREATE", pod, object=pod)
        return self._decided(pod, "CREATE", lambda: self.service.mutate_pod(request))

    def delete(self, pod: JSON) -> AdmissionOutcome:
        """A pod DELETE through the validating webhook's path."""
        request = _pod_request("DELETE", pod, oldObject=pod)
        return self._decided(pod, "DELETE", lambda: self.service.validate_pod(request))

    def evict(self, pod: JSON) -> AdmissionOutcome:
        """A `pods/eviction` CREATE: the service reads the pod by name, so it joins the snapshot."""
        self.snapshot.add(pod)
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": objects.name(pod)}}
        request = _pod_request("CREATE", pod, subResource="eviction", object=eviction)
        return self._decided(pod, "EVICT", lambda: self.service.validate_pod(request))

    def _decided(self, pod: JSON, operation: str, decide: Callable[[], Decision]) -> AdmissionOutcome:
        spreads_before = {objects.name(s): s for s in self.snapshot.spreads_in(objects.namespace(pod))}
        writes_before = len(self.committer.writes)
        decision = decide()
        spread = (
            self.snapshot.spread(objects.namespace(pod), decision.spread)
            if decision.spread is not None
            else None
        )
        return AdmissionOutcome(
            allowed=decision.allowed,
            subset=decision.subset,
            patch=list(decision.patch or []),
            pod=decision.pod if decision.pod is not None else pod,
            status_written=len(self.committer.writes) > writes_before,
            spread=spread,
            warnings=decision.warnings,
            message=_summary(decision, spread, operation),
            code=decision.code,
            spread_before=spreads_before.get(decision.spread) if decision.spread is not None else None,
        )


def _pod_request(operation: str, pod: JSON, **fields: Any) -> JSON:
    """The AdmissionReview request the API server would send for `operation` on `pod`."""
    return {
        "uid": "offline",
        "operation": operation,
        "namespace": objects.namespace(pod),
        "name": objects.name(pod),
        "resource": POD_RESOURCE,
        **fields,
    }
