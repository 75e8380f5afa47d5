"""Writing one sync's result: only the differences, in the reference's order.

Order (docs/design-workloadspread.md §2.5): adoption patches, deletion costs, the status, then the pods
Adaptive rescheduling deletes; Events last and best-effort. Why each rule:

* Costs are merge-patched only for pods whose value changed (`cost_patches`),
  so a steady state writes nothing and a scale-up writes only the new pods.
* The status goes through the status subresource with the resourceVersion of
  the spread object the sync computed from. The webhook writes the same status
  (creatingPods/deletingPods) concurrently; a 409 means our input was stale, so
  it is raised to the loop, which requeues (no in-place retry: a blind retry
  would overwrite the webhook's reservations with a status computed from an
  older object). On success the written object goes back into the source.
* A pod that disappeared under a patch or delete (404) is simply skipped: the
  next sync will not see it.
* Any other failed write is raised as `WriteFailed` (which write, which pod,
  the API's error), which the loop logs once with those fields; a failed Event
  is logged here, once, and never raised.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine.apiclient import PODS, Conflict, KubeClient, KubeError, NotFound
from py_engine.model.resource import SPREADS
from py_engine.runtime.events import ObjectEventRecorder
from py_engine.semantics.objects import meta
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from py_engine.workloadspread.controller.reconcile import SyncResult
from py_engine.workloadspread.controller.runtime.sources import Source

log = logging.getLogger(__name__)

COMPONENT = "spreadgate-controller"


class WriteFailed(KubeError):
    """A write of one sync failed: `kind` (adoption, deletion_cost, status, pod_delete), the
    `pod` it was for (None for the status) and the API's error, `cause`."""

    def __init__(self, kind: str, pod: str | None, cause: KubeError) -> None:
        super().__init__(cause.status, cause.reason, cause.message, cause.body)
        self.kind, self.pod, self.cause = kind, pod, cause


@dataclass
class WriteCounts:
    """How many writes of each kind one sync made."""

    adoption: int = 0
    deletion_cost: int = 0
    status: int = 0
    pod_delete: int = 0
    event: int = 0
    deleted_pods: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.adoption + self.deletion_cost + self.status + self.pod_delete


class EventRecorder(ObjectEventRecorder):
    """Creates core/v1 Events on a spread (`events.ObjectEventRecorder`).

    Failures are logged, never raised."""

    component = COMPONENT
    log = log

    def involved_type(self, spread: Mapping[str, Any]) -> tuple[Any, Any]:
        return spread.get("apiVersion") or SPREADS.api_version, "WorkloadSpread"

    def failure_fields(self, namespace: str, name: str) -> dict[str, Any]:
        return {"namespace": namespace, "spread": name}


class Writer:
    """Applies a `SyncResult` to the cluster (see the module docstring)."""

    def __init__(
        self, client: KubeClient, source: Source, metrics: ControllerMetrics, recorder: EventRecorder
    ) -> None:
        self.client, self.source, self.metrics, self.recorder = client, source, metrics, recorder

    def apply(self, spread: Mapping[str, Any], result: SyncResult) -> WriteCounts:
        """Write the differences; raises `Conflict` on a stale status, `WriteFailed` on other failures."""
        ns = str(meta(spread).get("namespace") or "default")
        counts = WriteCounts()
        for adoption in result.adoptions:
            if self._pod_write(
                "adoption",
                adoption.pod,
                lambda a=adoption: self.client.patch(PODS, ns, a.pod, a.patch, "strategic"),
            ):
                counts.adoption += 1
                self.metrics.writes.inc(kind="adoption")
        for name, value in sorted(result.cost_patches.items()):
            patch = {"metadata": {"annotations": {DELETION_COST_ANNOTATION: value}}}
            if self._pod_write(
                "deletion_cost", name, lambda n=name, p=patch: self.client.patch(PODS, ns, n, p, "merge")
            ):
                counts.deletion_cost += 1
                self.metrics.writes.inc(kind="deletion_cost")
        if result.status_changed:
            self._write_status(spread, result.status)
            counts.status += 1
            self.metrics.writes.inc(kind="status")
        uids = {str(meta(p).get("name")): meta(p).get("uid") for p in result.pods}
        for name in result.pods_to_delete:
            uid = uids.get(name)
            if self._pod_write(
                "pod_delete",
                name,
                lambda n=name, u=uid: self.client.delete(
                    PODS, ns, n, preconditions={"uid": str(u)} if u else None
                ),
            ):
                counts.pod_delete += 1
                counts.deleted_pods.append(name)
                self.metrics.writes.inc(kind="pod_delete")
        for event in result.events:
            if self.recorder.record(spread, event):
                counts.event += 1
                self.metrics.writes.inc(kind="event")
        return counts

    @staticmethod
    def _pod_write(kind: str, pod: str, call: Any) -> bool:
        try:
            call()
        except NotFound:
            return False
        except Conflict as exc:
            # A uid precondition that failed: the name now belongs to a new pod.
            if "precondition" in exc.message.lower() or "uid" in exc.message.lower():
                return False
            raise WriteFailed(kind, pod, exc) from exc
        except KubeError as exc:
            raise WriteFailed(kind, pod, exc) from exc
        return True

    def _write_status(self, spread: Mapping[str, Any], status: dict[str, Any]) -> None:
        body = copy.deepcopy(dict(spread))
        body["status"] = status
        body.setdefault("apiVersion", SPREADS.api_version)
        body.setdefault("kind", SPREADS.kind)
        m = meta(spread)
        ns, name = str(m.get("namespace") or "default"), str(m.get("name") or "")
        try:
            written = self.client.replace_status(SPREADS, ns, name, body)
        except Conflict:
            self.metrics.conflicts.inc()
            raise
        except KubeError as exc:
            raise WriteFailed("status", None, exc) from exc
        self.source.remember(written)
