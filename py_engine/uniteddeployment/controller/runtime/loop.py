"""The UnitedDeployment controller loop: work queue -> snapshot -> node fit -> plan -> writes -> requeue.

`UnitedController` is a `py_engine.runtime.reconciler.Reconciler`,
as the WorkloadSpread loop is: its `WorkQueue` (one worker per key, collapsed
duplicates, per-key back-off), workers, retry rules, failure logging and
metrics are that base's. A sync
reads the UnitedDeployment and its objects from a `UnitedSource`, asks the
subset policy which subsets have no node for a new pod (Adaptive, see
`nodefit`), runs the pure `plan`, applies it (`UnitedWriter`) and requeues the
key after the plan's `requeue_after` (plus a small slack: the planner's
deadlines are strict). A refused allocation records a Warning Event and
writes only what Kruise writes before allocating (duplicates deleted,
releases, reserved pod labels); a spec the model cannot read records one and is not retried
until the object changes (both are settled outcomes); API failures requeue with
back-off. Each failed write is logged once, here, with its cause (the writer
collects them and finishes the sync).

Two ways to drive it, as the WorkloadSpread loop: threads (`start()`/`stop()`)
fed by watch triggers and a periodic resync, or steps (`step()`,
`next_deadline()`) for `--once` and the virtual-time stack (through
`py_engine.runtime.stepped.SteppedManager`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine import logsetup
from py_engine.apiclient import KubeClient
from py_engine.model.errors import ModelError
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.runtime.reconciler import SUCCESS, Reconciler
from py_engine.runtime.triggers import queue_key
from py_engine.runtime.workqueue import RateLimit
from py_engine.semantics.clock import Clock
from py_engine.uniteddeployment.controller.plan import Plan, plan
from py_engine.uniteddeployment.controller.runtime.events import (
    FAILED_REVISION_PROVISION,
    FAILED_SPECIFY_SUBSET_REPLICAS,
    FORBIDDEN_SUBSET_PATCH,
    INVALID_SPEC,
    WARNING,
    Event,
    UnitedEventRecorder,
)
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.uniteddeployment.controller.runtime.nodefit import NodeFit, node_fit_enabled
from py_engine.uniteddeployment.controller.runtime.patchcheck import PatchCheck
from py_engine.uniteddeployment.controller.runtime.source import UnitedSource
from py_engine.uniteddeployment.controller.runtime.writer import UnitedWriter, UnitedWrites
from py_engine.uniteddeployment.controller.state import UnitedState
from py_engine.uniteddeployment.controller.status import ALLOCATED, NO_FITTING_NODE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UnitedOptions:
    workers: int = 2
    resync_seconds: float = 300.0
    rate_limit: RateLimit = field(default_factory=RateLimit)
    node_fit: bool = True
    """Ask the subset policy before allocating (Adaptive); off: Kruise's behaviour everywhere."""
    patch_check: bool = True
    """Refuse to write from a stored UnitedDeployment whose subset patch is off the allowlist."""
    allowed_patch_fields: tuple[str, ...] = ()
    """Pod fields a subset patch may set beyond the default allowlist (`--allow-patch-field`)."""


@dataclass
class UnitedReport:
    """What one sync of one key did (`outcome`: synced, gone, refused, invalid, conflict, error)."""

    key: str
    outcome: str
    writes: UnitedWrites = field(default_factory=UnitedWrites)
    plan: Plan | None = None
    error: str = ""
    requeue_after: float | None = None
    no_node_fit: frozenset[str] = frozenset()


class UnitedController(Reconciler[UnitedReport]):
    """See the module docstring."""

    log = log
    thread_prefix = "united"
    settled = SUCCESS | {"refused", "invalid"}

    def __init__(
        self,
        client: KubeClient,
        source: UnitedSource,
        clock: Clock,
        options: UnitedOptions | None = None,
        metrics: UnitedMetrics | None = None,
        recorder: UnitedEventRecorder | None = None,
        node_fit: NodeFit | None = None,
        patch_check: PatchCheck | None = None,
    ) -> None:
        self.client, self.source = client, source
        self.options = options or UnitedOptions()
        self.metrics = metrics or UnitedMetrics()
        super().__init__(
            clock,
            self.options,
            self.metrics,
            ("spreadgate_united_queue_depth", "UnitedDeployment keys waiting to be synced."),
        )
        self.recorder = recorder or UnitedEventRecorder(client, clock)
        self.writer = UnitedWriter(client, source, self.metrics, self.recorder)
        self.node_fit = node_fit if node_fit is not None else NodeFit()
        self.patch_check = (
            patch_check
            if patch_check is not None
            else PatchCheck(allowed_patch_fields=self.options.allowed_patch_fields)
        )
        self._inventory_version = 0

    # ----------------------------------------------------------------- keys

    def keys(self) -> list[str]:
        return [queue_key(ud) for ud in self.source.united_deployments()]

    def key_fields(self, key: str) -> dict[str, Any]:
        return {"uniteddeployment": key}

    def inventory_changed(self) -> None:
        """Nodes or bound pods changed: the next node-fit check rebuilds the inventory."""
        with self._lock:
            self._inventory_version += 1

    # ----------------------------------------------------------------- sync

    def state(self, ud: UnitedDeployment, obj: Mapping[str, Any] | None = None) -> UnitedState:
        """The snapshot one sync plans over, with the node-fit verdict when it applies and the
        subset patch fields off the allowlist (`patchcheck`)."""
        forbidden = (
            self.patch_check.forbidden(obj, ud) if obj is not None and self.options.patch_check else ()
        )
        no_fit: frozenset[str] = frozenset()
        if self.options.node_fit and node_fit_enabled(ud):
            with self._lock:
                version = self._inventory_version
            inventory = self.node_fit.inventory(version, self.source.nodes, self.source.all_pods)
            no_fit = self.node_fit.unfit(ud, inventory)
        return UnitedState(
            ud=ud,
            workloads=tuple(self.source.workloads(ud.namespace, ud.uid, ud.selector)),
            pods=tuple(self.source.pods(ud.namespace, ud.selector)),
            revisions=tuple(self.source.revisions(ud.namespace, ud.uid, ud.selector)),
            no_node_fit=no_fit,
            forbidden_patches=forbidden,
        )

    def sync(self, key: str) -> UnitedReport:
        """One sync of `key`; raises KubeError on API failure (`process` requeues)."""
        namespace, _, name = key.partition("/")
        obj = self.source.united_deployment(namespace, name)
        if obj is None:
            return UnitedReport(key, "gone")
        try:
            ud = UnitedDeployment.from_object(obj)
        except ModelError as exc:
            self.recorder.record(obj, Event(WARNING, INVALID_SPEC, str(exc)))
            return UnitedReport(key, "invalid", error=str(exc))
        state = self.state(ud, obj)
        now = self.clock.now()
        result = plan(state, now)
        if result.refused:
            message = "; ".join(result.errors)
            reason = {"revision": FAILED_REVISION_PROVISION, "patch": FORBIDDEN_SUBSET_PATCH}.get(
                result.refusal, FAILED_SPECIFY_SUBSET_REPLICAS
            )
            self.recorder.record(obj, Event(WARNING, reason, message))
            log.warning(
                "sync refused",
                extra=logsetup.fields(uniteddeployment=key, refusal=result.refusal, reason=message),
            )
            # What Kruise does before allocating still happens (duplicates, releases, pod labels).
            writes = self.writer.apply(obj, result, now)
            self._log_failures(key, writes)
            return UnitedReport(key, "refused", writes, plan=result, error=message)
        writes = self.writer.apply(obj, result, now)
        self._log_failures(key, writes)
        if result.placement_changed and result.unplaced:
            self._report_unplaced(key, obj, result)
        if writes.total:
            log.info(
                "synced",
                extra=logsetup.fields(
                    uniteddeployment=key,
                    created=writes.created,
                    updated=writes.updated,
                    deleted=writes.deleted,
                    pod_labels=writes.pod_labels,
                    released=writes.released or None,
                    status=writes.status,
                    errors=len(writes.errors) or None,
                    no_node_fit=",".join(sorted(state.no_node_fit)) or None,
                    replicas=",".join(f"{n}={s.replicas}" for n, s in result.subsets.items()),
                ),
            )
        outcome = "error" if writes.errors else "synced"
        return UnitedReport(
            key,
            outcome,
            writes,
            result,
            error="; ".join(writes.errors),
            requeue_after=result.requeue_after,
            no_node_fit=state.no_node_fit,
        )

    def _report_unplaced(self, key: str, obj: Mapping[str, Any], result: Plan) -> None:
        """Node fit left replicas without a subset (the `ReplicasAllocated` condition turned False
        or its count changed): a Warning Event and a log line, once per change."""
        desired = (obj.get("spec") or {}).get("replicas")
        message = next(
            (
                str(c.get("message") or "")
                for c in result.status.get("conditions") or []
                if c.get("type") == ALLOCATED
            ),
            "",
        )
        self.recorder.record(obj, Event(WARNING, NO_FITTING_NODE, message))
        log.warning(
            "replicas cannot all be placed",
            extra=logsetup.fields(
                uniteddeployment=key,
                unplaced=result.unplaced,
                replicas=desired,
                no_node_fit=",".join(result.no_node_fit),
            ),
        )

    @staticmethod
    def _log_failures(key: str, writes: UnitedWrites) -> None:
        for failed in writes.failed:
            log.warning(
                "%s write failed",
                failed.write,
                extra=logsetup.fields(
                    uniteddeployment=key,
                    write=failed.write,
                    object=f"{failed.kind}/{failed.name}",
                    cause=failed.cause,
                ),
            )

    def failed_report(self, key: str, outcome: str, error: str) -> UnitedReport:
        return UnitedReport(key, outcome, error=error)

    # ---------------------------------------------------------------- steps

    def step(self) -> list[UnitedReport]:
        """Enqueue every UnitedDeployment and process what is ready (one level-triggered pass)."""
        self.inventory_changed()
        return super().step()

    # -------------------------------------------------------------- threads

    def stop(self, timeout: float = 10.0) -> None:
        super().stop(timeout)
        self.node_fit.close()
        self.patch_check.close()
