"""The ReplicaSet controller: keep `spec.replicas` active pods.

Mirrors `pkg/controller/replicaset`: pods are created from the template with
`generateName: <rs>-` and a controlling ownerReference, in slow-start batches
(1, 2, 4, ...) of concurrent creates, at most 500 per sync (`burstReplicas`);
a failed batch stops the rest so a webhook that rejects pods is not hammered.
Scale-down asks the scale-down model (`py_engine.scaledown`, the exact
`getPodsToDelete` ranking) which pods to delete, so pod-deletion-cost and
every other tiebreak Spreadgate relies on is honoured. Orphan pods matching
the selector are adopted; pods that no longer match are released.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from py_engine.semantics.labels import selector_from_label_selector
from py_engine.sim.controllers import victims as victim_model
from py_engine.sim.controllers.base import (
    Informer,
    ObjectController,
    controller_ref,
    controller_uid,
    new_owner_ref,
    object_key,
    owner_key,
)
from py_engine.sim.controllers.podutil import (
    available_at,
    is_active,
    is_available,
    is_ready,
    set_condition,
)
from py_engine.sim.controllers.writes import delete_through, merge_patch, patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = [
    "BURST_REPLICAS",
    "PodOwnerController",
    "ReplicaSetController",
    "pod_from_template",
    "replicaset_status",
    "slow_start",
]

BURST_REPLICAS = 500
MAX_CONCURRENT_CALLS = 16
PODS = "v1/pods"
REPLICASETS = "apps/v1/replicasets"


def pod_from_template(
    owner: JSON, template: JSON, api_version: str, kind: str, generate_name: str | None = None
) -> JSON:
    """`controller.GetPodFromTemplate`: labels, annotations, finalizers and spec of
    the template, a controlling ownerReference, `generateName: <owner>-`."""
    meta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {
        "generateName": generate_name if generate_name is not None else f"{owner['metadata']['name']}-",
        "namespace": owner["metadata"].get("namespace", "default"),
        "labels": dict(meta.get("labels") or {}),
        "ownerReferences": [new_owner_ref(owner, api_version, kind)],
    }
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    if meta.get("finalizers"):
        pod_meta["finalizers"] = list(meta["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def slow_start(
    count: int,
    call: Callable[[], Exception | None],
    *,
    initial_batch: int = 1,
    max_workers: int = MAX_CONCURRENT_CALLS,
) -> tuple[int, list[Exception]]:
    """`slowStartBatch`: run `call` `count` times in batches 1, 2, 4, ... each batch
    concurrently; stop after the first batch with an error. Returns successes and errors."""
    remaining = count
    successes = 0
    batch = min(remaining, initial_batch)
    while batch > 0:
        if batch == 1:
            results = [call()]
        else:
            with ThreadPoolExecutor(max_workers=min(batch, max_workers)) as pool:
                results = list(pool.map(lambda _: call(), range(batch)))
        errors = [r for r in results if r is not None]
        successes += batch - len(errors)
        if errors:
            return successes, errors
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, []


def concurrently(
    items: Sequence[Any], call: Callable[[Any], Exception | None], max_workers: int = MAX_CONCURRENT_CALLS
) -> list[Exception]:
    """Run `call` on every item with bounded concurrency; return the errors."""
    if len(items) <= 1:
        results = [call(item) for item in items]
    else:
        with ThreadPoolExecutor(max_workers=min(len(items), max_workers)) as pool:
            results = list(pool.map(call, items))
    return [r for r in results if r is not None]


def replicaset_status(rs: JSON, pods: Sequence[JSON], now: datetime) -> JSON:
    """`calculateStatus` over the RS's active pods (conditions are kept as they are)."""
    spec = rs.get("spec", {})
    template_labels = (spec.get("template") or {}).get("metadata", {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    active = [p for p in pods if is_active(p)]
    fully = [
        p
        for p in active
        if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items())
    ]
    status: JSON = {
        "replicas": len(active),
        "fullyLabeledReplicas": len(fully),
        "readyReplicas": sum(1 for p in active if is_ready(p)),
        "availableReplicas": sum(1 for p in active if is_available(p, min_ready, now)),
        "observedGeneration": rs.get("metadata", {}).get("generation", 1),
    }
    conditions = rs.get("status", {}).get("conditions")
    if conditions:
        status["conditions"] = conditions
    return status


class PodOwnerController(ObjectController):
    """A controller that creates pods from its objects' template (ReplicaSet, Job): the
    slow-start create loop and its events are the same for both, as upstream's
    `controller.PodControlInterface` is."""

    # How many pod creates run at once; 1 makes the order of creates (and so of generated
    # names and admission decisions) reproducible, for a seeded cluster.
    concurrent_creates = MAX_CONCURRENT_CALLS
    pod_informer: Informer

    def _create_pods_of(
        self, owner: JSON, template: JSON, owner_type: tuple[str, str], count: int
    ) -> tuple[int, str | None]:
        """Create `count` pods of `owner` (`owner_type`: its apiVersion and kind) in slow-start
        batches; returns how many were created and the first error, if any (retried in 1 s)."""
        namespace = owner["metadata"].get("namespace")

        def create_one() -> Exception | None:
            pod = pod_from_template(owner, template, *owner_type)
            try:
                created = self.api.create(PODS, namespace, pod)
            except ApiError as exc:
                self.events.warning(owner, "FailedCreate", f"Error creating: {exc}")
                return exc
            self.pod_informer.apply_local(created)
            self.events.normal(owner, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
            return None

        created, errors = slow_start(count, create_one, max_workers=self.concurrent_creates)
        if errors:
            self._record(f"{object_key(owner)}: create pods: {errors[0]}")
            self.queue.add_after(object_key(owner), 1.0)
            return created, str(errors[0])
        return created, None


class ReplicaSetController(PodOwnerController):
    """Reconciles `apps/v1` ReplicaSets against their pods."""

    name = "replicaset"
    component = "replicaset-controller"

    def setup(self) -> None:
        self.rs_informer = self.watch_primary(REPLICASETS)
        self.rs_informer.add_index("controller", controller_uid)
        self.pod_informer = self.informers.get(PODS)
        self.pod_informer.add_index("controller", controller_uid)
        self.pod_informer.add_index("namespace", lambda o: [str(o["metadata"].get("namespace", ""))])
        self.pod_informer.add_handler(self._on_pod)

    def _on_pod(self, _event: str, pod: JSON) -> None:
        key = owner_key(pod, "ReplicaSet")
        if key is not None:
            self.enqueue(key)
        elif not controller_ref(pod):
            # An orphan may be adopted by any RS in its namespace.
            namespace = pod["metadata"].get("namespace")
            for rs in self.rs_informer.items():
                if rs["metadata"].get("namespace") == namespace:
                    self.enqueue(object_key(rs))

    # ------------------------------------------------------------------- sync

    def reconcile(self, rs: JSON) -> int:
        writes = 0
        pods, adopt_writes = self._claim_pods(rs)
        writes += adopt_writes
        active = [p for p in pods if is_active(p)]
        create_error: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            replicas = rs.get("spec", {}).get("replicas")
            desired = 1 if replicas is None else int(replicas)
            diff = len(active) - desired
            if diff < 0:
                created, create_error = self._create_pods(rs, min(-diff, BURST_REPLICAS))
                writes += created
                active = [p for p in self._owned(rs) if is_active(p)]
            elif diff > 0:
                writes += self._delete_pods(rs, active, min(diff, BURST_REPLICAS))
                active = [p for p in self._owned(rs) if is_active(p)]
        writes += self._update_status(rs, self._owned(rs), create_error)
        return writes

    def _owned(self, rs: JSON) -> list[JSON]:
        return self.pod_informer.by_index("controller", str(rs["metadata"]["uid"]))

    def _claim_pods(self, rs: JSON) -> tuple[list[JSON], int]:
        """`ClaimPods`: adopt matching orphans, release owned pods that stopped matching."""
        selector = selector_from_label_selector(rs.get("spec", {}).get("selector"))
        owned = self._owned(rs)
        writes = 0
        if rs["metadata"].get("deletionTimestamp") or selector.empty():
            return owned, 0
        claimed = []
        for pod in owned:
            if selector.matches(pod["metadata"].get("labels")):
                claimed.append(pod)
            elif not pod["metadata"].get("deletionTimestamp"):
                writes += self._set_owner_refs(
                    pod,
                    [
                        r
                        for r in pod["metadata"].get("ownerReferences") or []
                        if r.get("uid") != rs["metadata"]["uid"]
                    ],
                )
        namespace = str(rs["metadata"].get("namespace", ""))
        for pod in self.pod_informer.by_index("namespace", namespace):
            if (
                controller_ref(pod) is None
                and not pod["metadata"].get("deletionTimestamp")
                and selector.matches(pod["metadata"].get("labels"))
            ):
                refs = [
                    *(pod["metadata"].get("ownerReferences") or []),
                    new_owner_ref(rs, "apps/v1", "ReplicaSet"),
                ]
                if self._set_owner_refs(pod, refs):
                    writes += 1
                    claimed.append(self.pod_informer.get_key(object_key(pod)) or pod)
        return claimed, writes

    def _set_owner_refs(self, pod: JSON, refs: list[JSON]) -> int:
        body = {"metadata": {"ownerReferences": refs, "uid": pod["metadata"]["uid"]}}
        patched = merge_patch(self.api, self.pod_informer, pod, body, tolerated=(404, 409, 422))
        return int(patched is not None)

    def _create_pods(self, rs: JSON, count: int) -> tuple[int, str | None]:
        template = rs.get("spec", {}).get("template") or {}
        return self._create_pods_of(rs, template, ("apps/v1", "ReplicaSet"), count)

    def _related_pods(self, rs: JSON) -> list[JSON] | None:
        """`getIndirectlyRelatedPods`: pods selected by every RS sharing this RS's
        controller (None when the RS has no controller: upstream ranks all pods 0)."""
        ref = controller_ref(rs)
        if ref is None or not ref.get("uid"):
            return None
        namespace = rs["metadata"].get("namespace")
        seen: set[str] = set()
        related: list[JSON] = []
        siblings = sorted(
            self.rs_informer.by_index("controller", str(ref["uid"])), key=lambda r: r["metadata"]["name"]
        )
        pods = self.pod_informer.by_index("namespace", str(namespace or ""))
        for sibling in siblings:
            selector = selector_from_label_selector(sibling.get("spec", {}).get("selector"))
            for pod in pods:
                uid = str(pod["metadata"].get("uid"))
                if uid not in seen and selector.matches(pod["metadata"].get("labels")):
                    seen.add(uid)
                    related.append(pod)
        return related

    def _delete_pods(self, rs: JSON, active: list[JSON], diff: int) -> int:
        victims = victim_model.choose_victims(active, self._related_pods(rs), diff, self.clock.now())

        def delete_one(pod: JSON) -> Exception | None:
            try:
                if delete_through(self.api, self.pod_informer, pod, by_uid=True) is None:
                    self.pod_informer.apply_event("DELETED", pod)  # gone already: forget it now
                    return None
            except ApiError as exc:
                return exc
            self.events.normal(rs, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
            return None

        errors = concurrently(victims, delete_one)
        if errors:
            self._record(f"{object_key(rs)}: delete pods: {errors[0]}")
            self.queue.add_after(object_key(rs), 0.5)
        return len(victims) - len(errors)

    def _update_status(self, rs: JSON, pods: list[JSON], create_error: str | None) -> int:
        now = self.clock.now()
        status = replicaset_status(rs, pods, now)
        conditions = list(status.get("conditions") or [])
        has_failure = any(c.get("type") == "ReplicaFailure" for c in conditions)
        if create_error is not None:
            status["conditions"] = set_condition(
                conditions, "ReplicaFailure", "True", "FailedCreate", create_error, now
            )
        elif has_failure:
            status["conditions"] = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        min_ready = int(rs.get("spec", {}).get("minReadySeconds") or 0)
        if min_ready > 0:
            pending = [
                at
                for p in pods
                if is_active(p)
                and is_ready(p)
                and (at := available_at(p, min_ready)) is not None
                and at > now
            ]
            if pending:
                self.queue.add_after(object_key(rs), (min(pending) - now).total_seconds())
        current = rs.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()) and (
            "conditions" in status or not current.get("conditions")
        ):
            return 0
        body = dict(status)
        if "conditions" not in body:
            body["conditions"] = None
        return patch_status(self.api, self.rs_informer, rs, body)
