"""The StatefulSet controller: stable ordinal pods `<name>-<ordinal>`.

Follows `pkg/controller/statefulset` (`defaultStatefulSetControl`):

* pods are named `<name>-<i>` for i in `[start, start+replicas)` (`spec.ordinals.start`),
  labelled `controller-revision-hash`, `statefulset.kubernetes.io/pod-name` and
  `apps.kubernetes.io/pod-index`, with `hostname`/`subdomain` set;
* `OrderedReady` (default): create the lowest missing ordinal only when every
  lower one is Running and Ready; scale down from the highest ordinal, one pod
  at a time, only while the others are healthy; `Parallel`: create and delete
  all at once;
* Failed pods are deleted and recreated;
* `RollingUpdate` replaces pods whose revision differs from the update revision,
  highest ordinal first, one at a time, down to `partition`; `OnDelete` leaves them.

The revision is `<name>-<hash of the template>`; no ControllerRevision objects
are written and volumeClaimTemplates are ignored (no PVCs in the emulator).

`AdvancedStatefulSetController` runs OpenKruise's Advanced StatefulSet
(`apps.kruise.io` `statefulsets`, `partition` under `updateStrategy.rollingUpdate` at both
v1alpha1 and v1beta1) with the same rules, at the version its CRD stores, once the CRD is
installed; Kruise's additions (in-place update, `reserveOrdinals`, `maxUnavailable` for
parallel updates, scale strategies) are not modelled.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from py_engine.sim.controllers.base import (
    CRDS,
    ObjectController,
    crd_storage_resource,
    new_owner_ref,
    object_key,
)
from py_engine.sim.controllers.podutil import is_available, is_ready, is_terminal, template_hash
from py_engine.sim.controllers.writes import delete_through, patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = [
    "REVISION_LABEL",
    "AdvancedStatefulSetController",
    "StatefulSetController",
    "ordinal_of",
    "revision_of",
    "statefulset_pod",
]

ADVANCED_CRD = "statefulsets.apps.kruise.io"


STATEFULSETS = "apps/v1/statefulsets"
PODS = "v1/pods"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def revision_of(sts: JSON) -> str:
    """The update revision name: `<name>-<template hash>`."""
    return f"{sts['metadata']['name']}-{template_hash(sts.get('spec', {}).get('template') or {})}"


def ordinal_of(sts_name: str, pod_name: str) -> int | None:
    """The ordinal of a pod named `<sts>-<i>`, or None if the name is not one."""
    match = re.fullmatch(re.escape(sts_name) + r"-(\d+)", pod_name)
    return int(match.group(1)) if match else None


def statefulset_pod(sts: JSON, ordinal: int, revision: str, api_version: str = "apps/v1") -> JSON:
    """`newVersionedStatefulSetPod`: the pod for one ordinal."""
    meta = sts["metadata"]
    spec = sts.get("spec", {})
    template = spec.get("template") or {}
    name = f"{meta['name']}-{ordinal}"
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update({REVISION_LABEL: revision, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)})
    pod_meta: dict[str, Any] = {
        "name": name,
        "namespace": meta.get("namespace", "default"),
        "labels": labels,
        "ownerReferences": [new_owner_ref(sts, api_version, "StatefulSet")],
    }
    annotations = (template.get("metadata") or {}).get("annotations")
    if annotations:
        pod_meta["annotations"] = dict(annotations)
    pod_spec = copy.deepcopy(template.get("spec") or {})
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def _running_and_ready(pod: JSON) -> bool:
    return pod.get("status", {}).get("phase") == "Running" and is_ready(pod)


def _healthy(pod: JSON) -> bool:
    return _running_and_ready(pod) and not pod["metadata"].get("deletionTimestamp")


class StatefulSetController(ObjectController):
    """Reconciles `apps/v1` StatefulSets into ordinal pods."""

    name = "statefulset"
    component = "statefulset-controller"
    resource: str | None = STATEFULSETS
    api_version = "apps/v1"

    def setup(self) -> None:
        self.pod_informer = self.watch_owned(PODS, "StatefulSet")
        if self.resource is not None:
            self._watch(self.resource)

    def _watch(self, resource: str) -> None:
        self.resource = resource
        self.sts_informer = self.watch_primary(resource)

    def reconcile(self, sts: JSON) -> int:
        spec = sts.get("spec", {})
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        revision = revision_of(sts)
        name = sts["metadata"]["name"]
        pods: dict[int, JSON] = {}
        for pod in self.pod_informer.by_index("controller", str(sts["metadata"]["uid"])):
            ordinal = ordinal_of(name, pod["metadata"]["name"])
            if ordinal is not None:
                pods[ordinal] = pod
        writes = 0
        if not sts["metadata"].get("deletionTimestamp"):
            writes += self._reconcile(sts, pods, range(start, start + replicas), parallel, revision)
        return writes + self._update_status(sts, revision)

    def _reconcile(
        self, sts: JSON, pods: dict[int, JSON], wanted: range, parallel: bool, revision: str
    ) -> int:
        writes = 0
        # Failed (or Succeeded) pods in range are deleted, to be recreated next sync.
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is not None and is_terminal(pod) and not pod["metadata"].get("deletionTimestamp"):
                writes += self._delete(sts, pod)
                if not parallel:
                    return writes
        # Create missing ordinals in order.
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is None:
                created = self._create(sts, ordinal, revision)
                if created is None:
                    return writes
                writes += 1
                pods[ordinal] = created
                if not parallel:
                    return writes
                continue
            if not parallel and not _healthy(pod):
                return writes  # OrderedReady: wait for this ordinal before the next
        # Condemned pods: highest ordinal first.
        condemned = sorted((o for o in pods if o not in wanted), reverse=True)
        for ordinal in condemned:
            pod = pods[ordinal]
            if pod["metadata"].get("deletionTimestamp"):
                if not parallel:
                    return writes  # wait for it to go away
                continue
            if not parallel and any(not _healthy(p) for o, p in pods.items() if o != ordinal):
                return writes
            writes += self._delete(sts, pod)
            if not parallel:
                return writes
        if condemned:
            return writes
        return writes + self._rolling_update(sts, pods, wanted, revision)

    def _rolling_update(self, sts: JSON, pods: dict[int, JSON], wanted: range, revision: str) -> int:
        strategy = sts.get("spec", {}).get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return 0
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        if any(not _healthy(pods[o]) for o in wanted if o in pods):
            return 0
        for ordinal in sorted(wanted, reverse=True):
            if ordinal < wanted.start + partition:
                break
            pod = pods.get(ordinal)
            if pod is not None and (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision:
                return self._delete(sts, pod)
        return 0

    def _create(self, sts: JSON, ordinal: int, revision: str) -> JSON | None:
        pod = statefulset_pod(sts, ordinal, revision, self.api_version)
        try:
            created = self.api.create(PODS, pod["metadata"]["namespace"], pod)
        except ApiError as exc:
            if exc.code == 409:  # the old incarnation is still terminating
                self.queue.add_after(object_key(sts), 0.2)
                return None
            raise
        self.pod_informer.apply_local(created)
        self.events.normal(
            sts,
            "SuccessfulCreate",
            f"create Pod {created['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
        )
        return created

    def _delete(self, sts: JSON, pod: JSON) -> int:
        if delete_through(self.api, self.pod_informer, pod) is None:
            return 0
        self.events.normal(
            sts,
            "SuccessfulDelete",
            f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
        )
        return 1

    def _update_status(self, sts: JSON, revision: str) -> int:
        pods = [
            p
            for p in self.pod_informer.by_index("controller", str(sts["metadata"]["uid"]))
            if ordinal_of(sts["metadata"]["name"], p["metadata"]["name"]) is not None
        ]
        min_ready = int(sts.get("spec", {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        counted = [p for p in pods if not is_terminal(p)]
        current_revision = (sts.get("status") or {}).get("currentRevision") or revision
        updated = sum(
            1 for p in counted if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision
        )
        spec_replicas = 1 if sts.get("spec", {}).get("replicas") is None else int(sts["spec"]["replicas"])
        if updated == len(counted) == spec_replicas:
            current_revision = revision
        status: JSON = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(counted),
            "readyReplicas": sum(1 for p in counted if is_ready(p)),
            "availableReplicas": sum(1 for p in counted if is_available(p, min_ready, now)),
            "currentReplicas": sum(
                1
                for p in counted
                if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == current_revision
            ),
            "updatedReplicas": updated,
            "currentRevision": current_revision,
            "updateRevision": revision,
        }
        current = sts.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return 0
        return patch_status(self.api, self.sts_informer, sts, status)


class AdvancedStatefulSetController(StatefulSetController):
    """OpenKruise's Advanced StatefulSet, idle until its CRD is installed (module docstring)."""

    name = "advanced-statefulset"
    component = "statefulset-controller"
    resource = None

    def setup(self) -> None:
        super().setup()
        self.informers.get(CRDS).add_handler(self._on_crd)

    def _on_crd(self, event: str, crd: JSON) -> None:
        if event == "DELETED" or (crd.get("metadata") or {}).get("name") != ADVANCED_CRD or self.resource:
            return
        stored = crd_storage_resource(crd)
        if stored is not None:
            self.api_version = stored[0].rsplit("/", 1)[0]
            self._watch(stored[0])
