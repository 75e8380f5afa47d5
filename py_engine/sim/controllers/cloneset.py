"""OpenKruise's CloneSet, run by the embedded cluster once its CRD is installed.

A UnitedDeployment with a `cloneSetTemplate` creates CloneSets; without a controller they never
got pods on the playground. This one keeps Kruise's behaviour where Spreadgate depends on it:

* it runs at whichever version the CRD stores: v1beta1 reads `spec.updateStrategy.rollingUpdate`
  (`partition`, `maxUnavailable`), v1alpha1 the same fields directly under `updateStrategy`, as
  Kruise's two API versions lay them out;
* pods are `<name>-<5 chars>` with `controller-revision-hash: <name>-<template hash>` and the
  CloneSet as controlling owner;
* scale-in deletes old-revision pods first (as many as exceed `partition`), then update-revision
  pods, each group in the Kruise comparator's order with SameNodeRanker ranks
  (py_engine/sim/controllers/cloneset_victims.py, docs/design-scaledown.md §2.5); ready pods only
  within `maxUnavailable` (default 20 %, rounded up), not-ready ones always;
* the rolling update is ReCreate: old-revision pods beyond `partition` are deleted, not-ready
  ones first, while at most `maxUnavailable` pods are unavailable, and their replacements are
  created at the update revision; `partition` may be an integer or a percentage of replicas;
* status: replicas, ready/available/updated counts, the revisions, `labelSelector` (for /scale).

Not modelled (docs/embedded-cluster.md, "Kruise's workloads"): in-place updates, lifecycle
hooks, `scaleStrategy.podsToDelete` and the specified-delete label, surge, the spread-constraints
ranker, and creating old-revision pods on scale-out to keep `partition` (new pods always get
the update revision).
"""

from __future__ import annotations

import math
from typing import Any

from py_engine.semantics.labels import selector_from_label_selector
from py_engine.sim.controllers.base import (
    CRDS,
    ObjectController,
    controller_ref,
    controller_uid,
    crd_storage_resource,
    object_key,
)
from py_engine.sim.controllers.cloneset_victims import choose, kruise_available, kruise_order
from py_engine.sim.controllers.podutil import is_active, is_available, is_ready, template_hash
from py_engine.sim.controllers.replicaset import pod_from_template
from py_engine.sim.controllers.writes import delete_through, patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = ["CLONESET_CRD", "CloneSetController", "rolling_update_fields"]

CLONESET_CRD = "clonesets.apps.kruise.io"
PODS = "v1/pods"
REVISION_LABEL = "controller-revision-hash"
INSTANCE_LABEL = "apps.kruise.io/cloneset-instance-id"
_DEFAULT_MAX_UNAVAILABLE = "20%"


def rolling_update_fields(cloneset: JSON, version: str) -> JSON:
    """`partition` and `maxUnavailable` where the CloneSet's API version keeps them."""
    strategy = (cloneset.get("spec") or {}).get("updateStrategy") or {}
    if version == "v1alpha1":
        return strategy
    rolling = strategy.get("rollingUpdate")
    return rolling if isinstance(rolling, dict) else {}


def _scaled(value: Any, replicas: int, default: str) -> int:
    """An int-or-percent of `replicas`, percentages rounded up; bad values read as `default`."""
    if value is None:
        value = default
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    text = str(value)
    if text.endswith("%") and text[:-1].isdigit():
        return math.ceil(int(text[:-1]) * replicas / 100)
    return _scaled(default, replicas, default) if text != default else 0


class CloneSetController(ObjectController):
    """Reconciles `apps.kruise.io` CloneSets against their pods (module docstring)."""

    name = "cloneset"
    component = "cloneset-controller"

    def setup(self) -> None:
        self.resource: str | None = None
        self.version = ""
        self.pod_informer = self.informers.get(PODS)
        self.pod_informer.add_index("controller", controller_uid)
        self.pod_informer.add_handler(self._on_pod)
        self.informers.get(CRDS).add_handler(self._on_crd)

    def _on_crd(self, event: str, crd: JSON) -> None:
        if event == "DELETED" or (crd.get("metadata") or {}).get("name") != CLONESET_CRD or self.resource:
            return
        stored = crd_storage_resource(crd)
        if stored is None:
            return
        self.resource = stored[0]
        self.version = self.resource.split("/")[1]
        self.watch_primary(self.resource)

    def _on_pod(self, _event: str, pod: JSON) -> None:
        ref = controller_ref(pod)
        if ref is not None and ref.get("kind") == "CloneSet" and ref.get("name"):
            namespace = pod["metadata"].get("namespace")
            self.enqueue(f"{namespace}/{ref['name']}" if namespace else str(ref["name"]))

    # ------------------------------------------------------------------- sync

    def reconcile(self, cloneset: JSON) -> int:
        if cloneset["metadata"].get("deletionTimestamp"):
            return 0
        spec = cloneset.get("spec") or {}
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        revision = f"{cloneset['metadata']['name']}-{template_hash(spec.get('template') or {})}"
        pods = [p for p in self._owned(cloneset) if is_active(p)]
        fields = rolling_update_fields(cloneset, self.version)
        partition = min(_scaled(fields.get("partition"), replicas, "0"), replicas)
        max_unavailable = max(_scaled(fields.get("maxUnavailable"), replicas, _DEFAULT_MAX_UNAVAILABLE), 1)
        now = self.clock.now()
        min_ready = int(spec.get("minReadySeconds") or 0)
        available = kruise_available(min_ready, now)
        writes = 0
        if len(pods) < replicas:
            writes += self._create(cloneset, revision, replicas - len(pods))
        elif len(pods) > replicas:
            writes += self._scale_in(
                cloneset, pods, revision, replicas, partition, max_unavailable, available
            )
        else:
            writes += self._update(cloneset, pods, revision, partition, max_unavailable, available)
        return writes + self._update_status(cloneset, revision, min_ready)

    def _owned(self, cloneset: JSON) -> list[JSON]:
        return self.pod_informer.by_index("controller", str(cloneset["metadata"]["uid"]))

    def _create(self, cloneset: JSON, revision: str, count: int) -> int:
        template = (cloneset.get("spec") or {}).get("template") or {}
        created = 0
        for _ in range(count):
            pod = pod_from_template(
                cloneset, template, str(cloneset.get("apiVersion", "apps.kruise.io/v1beta1")), "CloneSet"
            )
            pod["metadata"]["labels"][REVISION_LABEL] = revision
            try:
                stored = self.api.create(PODS, cloneset["metadata"].get("namespace"), pod)
            except ApiError as exc:
                self.events.warning(cloneset, "FailedCreate", f"failed to create pod: {exc}")
                self.queue.add_after(object_key(cloneset), 1.0)
                break
            self.pod_informer.apply_local(stored)
            name = stored["metadata"]["name"]
            self.events.normal(cloneset, "SuccessfulCreate", f"succeed to create pod {name}")
            created += 1
        return created

    def _scale_in(
        self,
        cloneset: JSON,
        pods: list[JSON],
        revision: str,
        replicas: int,
        partition: int,
        max_unavailable: int,
        available: Any,
    ) -> int:
        old = [p for p in pods if _revision(p) != revision]
        new = [p for p in pods if _revision(p) == revision]
        count = len(pods) - replicas
        from_old = min(max(len(old) - partition, 0), count)
        chosen = choose(old, from_old, available) + choose(new, count - from_old, available)
        unavailable = sum(1 for p in pods if not is_ready(p))
        ready_limit = max(max_unavailable + (len(pods) - replicas) - unavailable, 0)
        return self._delete_within(cloneset, chosen, is_ready, ready_limit, stop_when_spent=False)

    def _update(
        self,
        cloneset: JSON,
        pods: list[JSON],
        revision: str,
        partition: int,
        max_unavailable: int,
        available: Any,
    ) -> int:
        old = [p for p in pods if _revision(p) != revision]
        to_update = max(len(old) - partition, 0)
        if to_update == 0:
            return 0
        unavailable = sum(1 for p in pods if not available(p))
        budget = max(max_unavailable - unavailable, 0)
        ordered = kruise_order(old, {}, available)  # not-ready and unavailable pods first
        return self._delete_within(cloneset, ordered[:to_update], available, budget, stop_when_spent=True)

    def _delete_within(
        self, cloneset: JSON, pods: list[JSON], counts: Any, budget: int, *, stop_when_spent: bool
    ) -> int:
        """Delete `pods` in order; each pod `counts` (ready, available) spends one of `budget`.
        Once it is spent, a scale-in still deletes the pods that do not count (skips the rest),
        a rolling update stops (its order puts those pods first)."""
        writes = 0
        for pod in pods:
            if counts(pod):
                if budget <= 0:
                    if stop_when_spent:
                        break
                    continue
                budget -= 1
            writes += self._delete(cloneset, pod)
        return writes

    def _delete(self, cloneset: JSON, pod: JSON) -> int:
        if delete_through(self.api, self.pod_informer, pod, by_uid=True) is None:
            return 0
        self.events.normal(cloneset, "SuccessfulDelete", f"succeed to delete pod {pod['metadata']['name']}")
        return 1

    def _update_status(self, cloneset: JSON, revision: str, min_ready: int) -> int:
        assert self.resource is not None
        now = self.clock.now()
        pods = [p for p in self._owned(cloneset) if is_active(p)]
        updated = [p for p in pods if _revision(p) == revision]
        spec = cloneset.get("spec") or {}
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        partition = min(
            _scaled(rolling_update_fields(cloneset, self.version).get("partition"), replicas, "0"), replicas
        )
        current = cloneset.get("status") or {}
        selector = selector_from_label_selector(spec.get("selector"))
        status: JSON = {
            "observedGeneration": cloneset["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if is_ready(p)),
            "availableReplicas": sum(1 for p in pods if is_available(p, min_ready, now)),
            "updatedReplicas": len(updated),
            "updatedReadyReplicas": sum(1 for p in updated if is_ready(p)),
            "updatedAvailableReplicas": sum(1 for p in updated if is_available(p, min_ready, now)),
            "expectedUpdatedReplicas": max(replicas - partition, 0),
            "updateRevision": revision,
            "currentRevision": revision
            if len(updated) == len(pods)
            else current.get("currentRevision", revision),
            "labelSelector": selector.to_string(),
        }
        if all(current.get(key) == value for key, value in status.items()):
            return 0
        return patch_status(self.api, self.informers.get(self.resource), cloneset, status)


def _revision(pod: JSON) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL) or "")
