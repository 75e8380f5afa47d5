"""Applying one UnitedDeployment plan: creates, deletes, updates, the status, Events.

Order and rules (docs/uniteddeployment.md, "The controller"):

* **Creates** in the plan's order (the ControllerRevision first, then the subset
  workloads, sorted by subset name) in slow-start batches of 1, 2, 4, ...,
  stopping after a batch with an error. A ControllerRevision that already exists
  with identical data counts as created (a snapshot or a stale cache listed it
  as missing). Workloads are written at a version the cluster serves, a
  CloneSet in that version's layout (`py_engine.uniteddeployment.controller.kruise_layout`).
* **Deletes** with background propagation; an object already gone is skipped.
* **Updates**: ControllerRevisions (renumbered on rollback) and workloads are
  replaced; on 409 the object is read again, the plan's labels, annotations,
  owner references and spec are re-applied onto it, and the write retried, up to
  5 attempts. Pods in the plan's updates are merge-patched with the reserved
  label only.
* **Releases**: an owned workload the selector no longer matches is written
  without the controller reference (on 409 the reference is dropped from a
  fresh read), as Kruise's ref manager releases it.
* **Status** through the status subresource, only when it differs from the
  stored one. Failed creates or deletes set `SubsetProvisioned=False`, failed
  updates `SubsetUpdated=False` (reason `Error`), so a failure is visible in
  the status; the next sync recomputes both. A 409 retries with a fresh object.
* **Events** last: `SuccessfulUpdateSubset` (`Create N Subset (Kind)`,
  `Delete N Subset (Kind)`), `FailedUpdateSubset` per failed write
  (`FailedRevisionProvision` for a ControllerRevision that cannot be created).

Every written object goes back into the source (`remember`). A failed write is
never raised or logged here: it is recorded (`UnitedWrites.failed`: which write,
which object, the API's error) and the sync goes on; the loop logs each once
with those fields, as the WorkloadSpread controller's loop does its writer's
(docs/operations.md, "What is logged, at which level").
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from py_engine import logsetup
from py_engine.apiclient import PODS, AlreadyExists, Conflict, KubeClient, KubeError, NotFound, Resource
from py_engine.model.ud_constants import RESERVED_POD_LABEL
from py_engine.semantics import objects
from py_engine.semantics.objects import meta
from py_engine.uniteddeployment.controller.conditions import make, set_condition
from py_engine.uniteddeployment.controller.kruise_layout import to_version
from py_engine.uniteddeployment.controller.plan import Plan
from py_engine.uniteddeployment.controller.runtime.events import (
    FAILED_REVISION_PROVISION,
    FAILED_UPDATE_SUBSET,
    NORMAL,
    SUCCESSFUL_UPDATE_SUBSET,
    WARNING,
    Event,
    UnitedEventRecorder,
)
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.uniteddeployment.controller.runtime.resources import (
    CONTROLLER_REVISIONS,
    UNITED_DEPLOYMENTS,
    typed,
)
from py_engine.uniteddeployment.controller.runtime.source import UnitedSource
from py_engine.uniteddeployment.controller.status import PROVISIONED, SUBSET_UPDATED

log = logging.getLogger(__name__)

JSON = dict[str, Any]
ATTEMPTS = 5


@dataclass(frozen=True)
class FailedWrite:
    """One write that failed: `write` (create, delete, update), the object's kind and name,
    and the API's error, `cause` (the loop logs each once with these fields)."""

    write: str
    kind: str
    name: str
    cause: str

    def __str__(self) -> str:
        return f"{self.write} {self.kind} {self.name}: {self.cause}"


@dataclass
class UnitedWrites:
    """What one sync wrote; `errors` are the API failures (the sync still finished), `failed`
    the same with their fields."""

    created: int = 0
    updated: int = 0
    deleted: int = 0
    pod_labels: int = 0
    released: int = 0
    status: int = 0
    events: int = 0
    errors: list[str] = field(default_factory=list)
    failed: list[FailedWrite] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.deleted + self.pod_labels + self.released + self.status


def _name(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name") or meta(obj).get("generateName") or "")


def _failed(writes: UnitedWrites, write: str, obj: Mapping[str, Any], exc: KubeError) -> str:
    """Record a failed write on `writes`; its text, for the status condition."""
    failure = FailedWrite(write, str(obj.get("kind") or ""), _name(obj), str(exc))
    writes.failed.append(failure)
    return str(failure)


def _is_workload(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") not in ("ControllerRevision", "Pod")


def _merge_keys(fresh: Mapping[str, Any], desired: Mapping[str, Any], cached: Mapping[str, Any]) -> JSON:
    """`fresh` with the keys the plan set (from `desired`) and without those it removed
    (in `cached`, not in `desired`); keys others added since are kept."""
    removed = set(cached) - set(desired)
    return {**{k: v for k, v in fresh.items() if k not in removed}, **desired}


def reapply(fresh: Mapping[str, Any], desired: Mapping[str, Any], cached: Mapping[str, Any] | None) -> JSON:
    """The plan's changes re-applied onto a freshly read object (after a 409)."""
    body = copy.deepcopy(dict(fresh))
    body_meta = body.setdefault("metadata", {})
    want_meta, old_meta = meta(desired), meta(cached or {})
    for key in ("labels", "annotations"):
        body_meta[key] = _merge_keys(
            body_meta.get(key) or {}, want_meta.get(key) or {}, old_meta.get(key) or {}
        )
    if "ownerReferences" in want_meta:
        body_meta["ownerReferences"] = copy.deepcopy(want_meta["ownerReferences"])
    for key in ("spec", "data", "revision"):
        if key in desired:
            body[key] = copy.deepcopy(desired[key])
    return body


class UnitedWriter:
    """Applies a `Plan` (see the module docstring)."""

    def __init__(
        self, client: KubeClient, source: UnitedSource, metrics: UnitedMetrics, recorder: UnitedEventRecorder
    ) -> None:
        self.client, self.source, self.metrics, self.recorder = client, source, metrics, recorder

    # ----------------------------------------------------------- resources

    def resource_for(self, obj: Mapping[str, Any]) -> Resource:
        kind = str(obj.get("kind") or "")
        if kind == "Pod":
            return PODS
        if kind == "ControllerRevision":
            return CONTROLLER_REVISIONS
        resource = self.source.resources.get((objects.group_of(obj), kind))
        if resource is None:
            raise KubeError(404, "NotServed", f"{obj.get('apiVersion')} {kind} is not served by this cluster")
        return resource

    # --------------------------------------------------------------- apply

    def apply(self, ud_obj: Mapping[str, Any], plan: Plan, now: datetime) -> UnitedWrites:
        ns = str(meta(ud_obj).get("namespace") or "default")
        writes = UnitedWrites()
        events: list[Event] = []
        provision_errors = self._creates(ns, plan, writes, events)
        provision_errors += self._deletes(ns, plan, writes, events)
        update_errors = self._updates(ns, plan, writes, events)
        update_errors += self._releases(ns, plan, writes, str(meta(ud_obj).get("uid") or ""))
        status = plan.served_status()
        if provision_errors or update_errors:
            conditions = list(status.get("conditions") or [])
            if provision_errors:
                conditions = set_condition(
                    conditions, make(PROVISIONED, False, "Error", "; ".join(provision_errors), now)
                )
            if update_errors:
                conditions = set_condition(
                    conditions, make(SUBSET_UPDATED, False, "Error", "; ".join(update_errors), now)
                )
            status = {**status, "conditions": conditions}
        if (not plan.refused or plan.status_changed) and status != (ud_obj.get("status") or {}):
            self._write_status(ud_obj, status)
            writes.status += 1
            self.metrics.writes.inc(kind="status")
        for event in events:
            if self.recorder.record(ud_obj, event):
                writes.events += 1
                self.metrics.writes.inc(kind="event")
        writes.errors = provision_errors + update_errors
        return writes

    # -------------------------------------------------------------- creates

    def _create_one(self, ns: str, obj: Mapping[str, Any]) -> JSON:
        resource = self.resource_for(obj)
        body = {**to_version(obj, resource.api_version), "kind": resource.kind}
        try:
            created = self.client.create(resource, ns, body)
        except AlreadyExists:
            if obj.get("kind") != "ControllerRevision":
                raise
            existing = self.client.get(resource, ns, _name(obj))
            if existing.get("data") != obj.get("data"):
                raise
            created = existing
        self.source.remember(typed(created, resource))
        return created

    def _creates(self, ns: str, plan: Plan, writes: UnitedWrites, events: list[Event]) -> list[str]:
        errors: list[str] = []
        kinds: Counter[str] = Counter()
        pending = list(plan.create)
        batch = 1
        while pending and not errors:
            for obj in pending[:batch]:
                try:
                    self._create_one(ns, obj)
                except KubeError as exc:
                    errors.append(_failed(writes, "create", obj, exc))
                    reason = (
                        FAILED_REVISION_PROVISION
                        if obj.get("kind") == "ControllerRevision"
                        else FAILED_UPDATE_SUBSET
                    )
                    events.append(
                        Event(WARNING, reason, f"Error creating {obj.get('kind')} {_name(obj)}: {exc}")
                    )
                    continue
                writes.created += 1
                self.metrics.writes.inc(kind="create")
                if _is_workload(obj):
                    kinds[str(obj.get("kind"))] += 1
            pending = pending[batch:]
            batch *= 2
        for kind, count in sorted(kinds.items()):
            events.append(Event(NORMAL, SUCCESSFUL_UPDATE_SUBSET, f"Create {count} Subset ({kind})"))
        return errors

    # -------------------------------------------------------------- deletes

    def _deletes(self, ns: str, plan: Plan, writes: UnitedWrites, events: list[Event]) -> list[str]:
        errors: list[str] = []
        kinds: Counter[str] = Counter()
        for ref in plan.delete:
            try:
                resource = self.resource_for(ref)
                self.client.delete(resource, ns, _name(ref), propagation_policy="Background")
            except NotFound:
                continue
            except KubeError as exc:
                errors.append(_failed(writes, "delete", ref, exc))
                events.append(
                    Event(
                        WARNING, FAILED_UPDATE_SUBSET, f"Error deleting {ref.get('kind')} {_name(ref)}: {exc}"
                    )
                )
                continue
            self.source.forget(ref)
            writes.deleted += 1
            self.metrics.writes.inc(kind="delete")
            if _is_workload(ref):
                kinds[str(ref.get("kind"))] += 1
        for kind, count in sorted(kinds.items()):
            events.append(Event(NORMAL, SUCCESSFUL_UPDATE_SUBSET, f"Delete {count} Subset ({kind})"))
        return errors

    # -------------------------------------------------------------- updates

    def _updates(self, ns: str, plan: Plan, writes: UnitedWrites, events: list[Event]) -> list[str]:
        errors: list[str] = []
        for obj in plan.update:
            kind = str(obj.get("kind") or "")
            try:
                if kind == "Pod":
                    if self._label_pod(ns, obj):
                        writes.pod_labels += 1
                        self.metrics.writes.inc(kind="pod_label")
                    continue
                self._replace(ns, obj)
            except NotFound:
                continue
            except KubeError as exc:
                errors.append(_failed(writes, "update", obj, exc))
                events.append(
                    Event(
                        WARNING,
                        FAILED_UPDATE_SUBSET,
                        f"Error updating PodSet ({kind}) {_name(obj)} when updating: {exc}",
                    )
                )
                continue
            writes.updated += 1
            self.metrics.writes.inc(kind="update")
        return errors

    def _label_pod(self, ns: str, pod: Mapping[str, Any]) -> bool:
        value = (meta(pod).get("labels") or {}).get(RESERVED_POD_LABEL)
        patch = {"metadata": {"labels": {RESERVED_POD_LABEL: value}}}
        self.client.patch(PODS, ns, _name(pod), patch, "merge")
        return True

    def _replace(self, ns: str, desired: Mapping[str, Any]) -> JSON | None:
        resource = self.resource_for(desired)
        desired = {**to_version(desired, resource.api_version), "kind": resource.kind}
        return self._replace_retrying(ns, resource, desired, lambda fresh: reapply(fresh, desired, None))

    def _replace_retrying(
        self,
        ns: str,
        resource: Resource,
        body: JSON,
        again: Callable[[JSON], JSON | None],
        *,
        status: bool = False,
    ) -> JSON | None:
        """Replace with `body` (its status subresource when `status`); on 409 read the object
        again and replace with `again(fresh)` (None: nothing left to write), up to ATTEMPTS
        writes in all."""
        name = _name(body)
        replace = self.client.replace_status if status else self.client.replace
        for attempt in range(ATTEMPTS):
            try:
                written = replace(resource, ns, name, body)
            except Conflict:
                self.metrics.conflicts.inc()
                if attempt == ATTEMPTS - 1:
                    raise
                retry = again(self.client.get(resource, ns, name))
                if retry is None:
                    return None
                body = retry
                continue
            self.source.remember(typed(written, resource))
            return written
        raise AssertionError("unreachable")  # pragma: no cover

    # -------------------------------------------------------------- releases

    def _releases(self, ns: str, plan: Plan, writes: UnitedWrites, ud_uid: str) -> list[str]:
        errors: list[str] = []
        for obj in plan.release:
            try:
                self._release(ns, obj, ud_uid)
            except NotFound:
                continue
            except KubeError as exc:
                errors.append(_failed(writes, "release", obj, exc))
                continue
            writes.released += 1
            self.metrics.writes.inc(kind="release")
        return errors

    def _release(self, ns: str, released: Mapping[str, Any], ud_uid: str) -> None:
        """Write `released` (the workload without the UnitedDeployment's controller reference)
        at its resourceVersion; on 409 drop the reference from a fresh read, if it is still there."""
        resource = self.resource_for(released)

        def again(fresh: JSON) -> JSON | None:
            refs = meta(fresh).get("ownerReferences") or []
            kept = [
                r
                for r in refs
                if not (
                    isinstance(r, Mapping)
                    and r.get("controller") is True
                    and ud_uid
                    and r.get("uid") == ud_uid
                )
            ]
            if len(kept) == len(refs):
                return None
            body = copy.deepcopy(fresh)
            body.setdefault("metadata", {})["ownerReferences"] = kept
            return body

        self._replace_retrying(
            ns, resource, {**to_version(released, resource.api_version), "kind": resource.kind}, again
        )

    # --------------------------------------------------------------- status

    def _write_status(self, ud_obj: Mapping[str, Any], status: JSON) -> None:
        m = meta(ud_obj)
        ns, name = str(m.get("namespace") or "default"), str(m.get("name") or "")
        body = copy.deepcopy(dict(ud_obj))
        body["status"] = status
        body.setdefault("apiVersion", UNITED_DEPLOYMENTS.api_version)
        body.setdefault("kind", UNITED_DEPLOYMENTS.kind)
        self._replace_retrying(
            ns, UNITED_DEPLOYMENTS, body, lambda fresh: {**fresh, "status": status}, status=True
        )
        log.debug("status written", extra=logsetup.fields(uniteddeployment=f"{ns}/{name}"))
