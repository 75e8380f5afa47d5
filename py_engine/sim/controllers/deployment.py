"""The Deployment controller: ReplicaSets per pod template, rolling or recreate.

Follows `pkg/controller/deployment`: the new ReplicaSet is `<name>-<hash>` where
the hash is over the pod template (see `podutil.template_hash`), it carries the
`pod-template-hash` label in its selector and template, and the revision
annotation `deployment.kubernetes.io/revision`. Each sync takes one step:

* RollingUpdate: scale the new RS up within `replicas + maxSurge` (surge rounds
  up), else scale old RSs down while keeping `replicas - maxUnavailable`
  available (unavailable rounds down; both zero means unavailable 1): first
  the old RSs' unhealthy replicas, then the oldest RSs first.
* Recreate: scale every old RS to 0, wait until no old pod is running, then
  create/scale the new RS to `replicas`.

A pure scaling event (replicas changed, one active ReplicaSet) resizes that
ReplicaSet directly. Proportional scaling of several active ReplicaSets
during a rollout is NOT implemented: the rolling-update step then moves the
new RS toward the new size and drains the old ones under the same bounds.
Old ReplicaSets beyond `revisionHistoryLimit` (default 10) are deleted once
the rollout is complete. `paused` stops rollouts (status and scaling only).
Orphan ReplicaSets are not adopted.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from py_engine.sim.controllers.base import (
    Informer,
    ObjectController,
    controller_uid,
    new_owner_ref,
    object_key,
    owner_key,
)
from py_engine.sim.controllers.podutil import set_condition, strip_label, template_hash
from py_engine.sim.controllers.writes import delete_through, merge_patch, patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = [
    "DeploymentController",
    "deployment_status",
    "max_revision",
    "new_rs_replicas",
    "resolve_fenceposts",
    "scale_down_old_plan",
    "scaled_value",
]

DEPLOYMENTS = "apps/v1/deployments"
REPLICASETS = "apps/v1/replicasets"
PODS = "v1/pods"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
# Deployment annotations that must not be copied onto its ReplicaSets.
_NOT_COPIED = {
    REVISION,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision-history",
}


def scaled_value(value: int | str | None, total: int, round_up: bool, default: str) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`: an int, or a percent of `total`."""
    if value is None:
        value = default
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text.endswith("%"):
        return int(text)
    fraction = int(text[:-1]) * total
    return math.ceil(fraction / 100) if round_up else fraction // 100


def resolve_fenceposts(deployment: JSON) -> tuple[int, int]:
    """`ResolveFenceposts`: (maxSurge, maxUnavailable); both zero becomes (0, 1)."""
    spec = deployment.get("spec", {})
    replicas = _replicas(deployment)
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = scaled_value(rolling.get("maxSurge"), replicas, True, "25%")
    unavailable = scaled_value(rolling.get("maxUnavailable"), replicas, False, "25%")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _replicas(obj: JSON) -> int:
    replicas = obj.get("spec", {}).get("replicas")
    return 1 if replicas is None else int(replicas)


def _status_int(obj: JSON, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def _revision(rs: JSON) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rss: Sequence[JSON]) -> int:
    return max((_revision(rs) for rs in rss), default=0)


def _strategy(deployment: JSON) -> str:
    return str((deployment.get("spec", {}).get("strategy") or {}).get("type") or "RollingUpdate")


def new_rs_replicas(deployment: JSON, all_rss: Sequence[JSON], new_rs: JSON | None) -> int:
    """`NewRSNewReplicas`: the new RS's size for this step."""
    replicas = _replicas(deployment)
    if _strategy(deployment) == "Recreate":
        return replicas
    new_current = _replicas(new_rs) if new_rs is not None else 0
    surge, _ = resolve_fenceposts(deployment)
    current_total = sum(_replicas(rs) for rs in all_rss)
    max_total = replicas + surge
    if current_total >= max_total:
        return new_current
    scale_up = min(max_total - current_total, replicas - new_current)
    return new_current + max(scale_up, 0)


def _created(rs: JSON) -> tuple[str, str]:
    meta = rs["metadata"]
    return (str(meta.get("creationTimestamp", "")), str(meta.get("name", "")))


def scale_down_old_plan(deployment: JSON, new_rs: JSON | None, old_rss: Sequence[JSON]) -> dict[str, int]:
    """`reconcileOldReplicaSets`: new sizes for old RSs (by name) in this step."""
    old_total = sum(_replicas(rs) for rs in old_rss)
    if old_total == 0:
        return {}
    all_rss = [*old_rss, *([new_rs] if new_rs is not None else [])]
    all_total = sum(_replicas(rs) for rs in all_rss)
    _, max_unavailable = resolve_fenceposts(deployment)
    min_available = _replicas(deployment) - max_unavailable
    new_unavailable = (_replicas(new_rs) - _status_int(new_rs, "availableReplicas")) if new_rs else 0
    max_scaled_down = all_total - min_available - new_unavailable
    if max_scaled_down <= 0:
        return {}
    plan: dict[str, int] = {}
    sizes = {rs["metadata"]["name"]: _replicas(rs) for rs in old_rss}
    # cleanupUnhealthyReplicas: old RSs' unavailable replicas go first.
    cleaned = 0
    for rs in sorted(old_rss, key=_created):
        name = rs["metadata"]["name"]
        if cleaned >= max_scaled_down:
            break
        if sizes[name] == 0:
            continue
        unhealthy = sizes[name] - _status_int(rs, "availableReplicas")
        if unhealthy <= 0:
            continue
        step = min(max_scaled_down - cleaned, unhealthy)
        sizes[name] -= step
        plan[name] = sizes[name]
        cleaned += step
    # scaleDownOldReplicaSetsForRollingUpdate: only available pods above the floor.
    available = sum(_status_int(rs, "availableReplicas") for rs in all_rss)
    if available > min_available:
        remaining = available - min_available
        for rs in sorted(old_rss, key=_created):
            name = rs["metadata"]["name"]
            if remaining <= 0:
                break
            if sizes[name] == 0:
                continue
            step = min(sizes[name], remaining)
            sizes[name] -= step
            plan[name] = sizes[name]
            remaining -= step
    return plan


def deployment_status(deployment: JSON, new_rs: JSON | None, all_rss: Sequence[JSON], now: datetime) -> JSON:
    """`calculateStatus` plus the Available and Progressing conditions."""
    current = deployment.get("status") or {}
    replicas = _replicas(deployment)
    available = sum(_status_int(rs, "availableReplicas") for rs in all_rss)
    total_spec = sum(_replicas(rs) for rs in all_rss)
    status: JSON = {
        "observedGeneration": deployment.get("metadata", {}).get("generation", 1),
        "replicas": sum(_status_int(rs, "replicas") for rs in all_rss),
        "updatedReplicas": _status_int(new_rs, "replicas") if new_rs else 0,
        "readyReplicas": sum(_status_int(rs, "readyReplicas") for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(total_spec - available, 0),
    }
    if current.get("collisionCount") is not None:
        status["collisionCount"] = current["collisionCount"]
    conditions = list(current.get("conditions") or [])
    _, max_unavailable = resolve_fenceposts(deployment)
    if available >= replicas - max_unavailable:
        availability = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    else:
        availability = (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    conditions = set_condition(conditions, "Available", *availability, now, update_time=True)
    if new_rs is not None:
        name = new_rs["metadata"]["name"]
        complete = (
            status["updatedReplicas"] == replicas and status["replicas"] == replicas and available == replicas
        )
        if complete:
            progress = ("NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.')
        else:
            progress = ("ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.')
        conditions = set_condition(conditions, "Progressing", "True", *progress, now, update_time=True)
    status["conditions"] = conditions
    return status


def _complete(deployment: JSON, status: JSON) -> bool:
    replicas = _replicas(deployment)
    return (
        status.get("updatedReplicas") == replicas
        and status.get("replicas") == replicas
        and status.get("availableReplicas") == replicas
    )


class DeploymentController(ObjectController):
    """Reconciles `apps/v1` Deployments into ReplicaSets."""

    name = "deployment"
    component = "deployment-controller"

    def setup(self) -> None:
        self.d_informer = self.watch_primary(DEPLOYMENTS)
        self.rs_informer = self.watch_owned(REPLICASETS, "Deployment")
        self.pod_informer = self.informers.get(PODS)
        self.pod_informer.add_index("controller", controller_uid)
        self.pod_informer.add_handler(self._on_pod)

    def _on_pod(self, event: str, pod: JSON) -> None:
        # Recreate waits for old pods to disappear; only deletions matter here.
        if event != "DELETED":
            return
        rs_key = owner_key(pod, "ReplicaSet")
        rs = self.rs_informer.get_key(rs_key) if rs_key else None
        if rs is not None:
            self.enqueue(owner_key(rs, "Deployment"))

    # ------------------------------------------------------------------- sync

    def reconcile(self, deployment: JSON) -> int:
        rss = [
            rs
            for rs in self.rs_informer.by_index("controller", str(deployment["metadata"]["uid"]))
            if not rs["metadata"].get("deletionTimestamp")
        ]
        new_rs, old_rss = self._split(deployment, rss)
        if deployment["metadata"].get("deletionTimestamp"):
            return self._sync_status(deployment, new_rs, rss)
        paused = bool(deployment.get("spec", {}).get("paused"))
        active = [rs for rs in rss if _replicas(rs) > 0]
        if paused:
            return self._scale_single(deployment, active) + self._sync_status(deployment, new_rs, rss)
        if _strategy(deployment) == "Recreate":
            return self._recreate(deployment, new_rs, old_rss)
        return self._rolling(deployment, new_rs, old_rss)

    def _split(self, deployment: JSON, rss: list[JSON]) -> tuple[JSON | None, list[JSON]]:
        """`FindNewReplicaSet`: the oldest RS whose template equals the Deployment's
        ignoring the hash label; all others are old."""
        template = strip_label(deployment.get("spec", {}).get("template") or {}, HASH_LABEL)
        matching = sorted(
            (
                rs
                for rs in rss
                if strip_label(rs.get("spec", {}).get("template") or {}, HASH_LABEL) == template
            ),
            key=_created,
        )
        new_rs = matching[0] if matching else None
        return new_rs, [rs for rs in rss if rs is not new_rs]

    def _scale_single(self, deployment: JSON, active: list[JSON]) -> int:
        if len(active) != 1 or _replicas(active[0]) == _replicas(deployment):
            return 0
        return self._scale_rs(deployment, active[0], _replicas(deployment))

    # -------------------------------------------------------------- strategies

    def _ensure_new_rs(
        self, deployment: JSON, new_rs: JSON | None, old_rss: list[JSON]
    ) -> tuple[JSON | None, int]:
        """The ReplicaSet of the current template, created when missing (None when that failed)
        or brought to the current revision, and the writes that took; both strategies start so."""
        if new_rs is None:
            return self._create_new_rs(deployment, old_rss)
        writes = self._sync_revision(deployment, new_rs, old_rss)
        return self.rs_informer.get_key(object_key(new_rs)) or new_rs, writes

    def _rolling(self, deployment: JSON, new_rs: JSON | None, old_rss: list[JSON]) -> int:
        new_rs, writes = self._ensure_new_rs(deployment, new_rs, old_rss)
        if new_rs is None:
            return writes
        all_rss = [new_rs, *old_rss]
        # reconcileNewReplicaSet
        target = _replicas(deployment)
        if _replicas(new_rs) > target:
            writes += self._scale_rs(deployment, new_rs, target)
            return writes + self._sync_status_now(deployment)
        if _replicas(new_rs) < target:
            size = new_rs_replicas(deployment, all_rss, new_rs)
            if size != _replicas(new_rs):
                writes += self._scale_rs(deployment, new_rs, size)
                return writes + self._sync_status_now(deployment)
        # reconcileOldReplicaSets
        plan = scale_down_old_plan(deployment, new_rs, old_rss)
        for rs in old_rss:
            planned = plan.get(rs["metadata"]["name"])
            if planned is not None and planned != _replicas(rs):
                writes += self._scale_rs(deployment, rs, planned)
        if writes:
            return writes + self._sync_status_now(deployment)
        writes += self._annotate_all(deployment, all_rss)
        status = deployment_status(deployment, new_rs, self._fresh(all_rss), self.clock.now())
        if _complete(deployment, status):
            writes += self._cleanup(deployment, old_rss)
        return writes + self._sync_status_now(deployment)

    def _recreate(self, deployment: JSON, new_rs: JSON | None, old_rss: list[JSON]) -> int:
        writes = 0
        for rs in old_rss:
            if _replicas(rs) != 0:
                writes += self._scale_rs(deployment, rs, 0)
        if writes:
            return writes + self._sync_status_now(deployment)
        if self._old_pods_running(old_rss):
            return self._sync_status_now(deployment)
        existed = new_rs is not None
        new_rs, writes = self._ensure_new_rs(deployment, new_rs, old_rss)
        if new_rs is None:
            return writes
        if existed and _replicas(new_rs) != _replicas(deployment):
            writes += self._scale_rs(deployment, new_rs, _replicas(deployment))
        status = deployment_status(deployment, new_rs, self._fresh([new_rs, *old_rss]), self.clock.now())
        if _complete(deployment, status):
            writes += self._cleanup(deployment, old_rss)
        return writes + self._sync_status_now(deployment)

    def _old_pods_running(self, old_rss: list[JSON]) -> bool:
        """`oldPodsRunning`: any old pod not Succeeded/Failed (terminating ones count)."""
        for rs in old_rss:
            for pod in self.pod_informer.by_index("controller", str(rs["metadata"]["uid"])):
                if pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    # ----------------------------------------------------------------- writes

    def _desired_annotation(self, rs: JSON) -> int | None:
        try:
            return int((rs["metadata"].get("annotations") or {})[DESIRED_REPLICAS])
        except (KeyError, ValueError):
            return None

    def _rs_annotations(self, deployment: JSON, revision: int | None) -> dict[str, str]:
        surge, _ = resolve_fenceposts(deployment)
        replicas = _replicas(deployment)
        out = {
            k: v for k, v in (deployment["metadata"].get("annotations") or {}).items() if k not in _NOT_COPIED
        }
        out[DESIRED_REPLICAS] = str(replicas)
        out[MAX_REPLICAS] = str(replicas + (surge if _strategy(deployment) != "Recreate" else 0))
        if revision is not None:
            out[REVISION] = str(revision)
        return out

    def _create_new_rs(self, deployment: JSON, old_rss: list[JSON]) -> tuple[JSON | None, int]:
        meta = deployment["metadata"]
        spec = deployment.get("spec", {})
        collision = (deployment.get("status") or {}).get("collisionCount")
        template = copy.deepcopy(spec.get("template") or {})
        pod_hash = template_hash(strip_label(template, HASH_LABEL), collision)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        revision = max_revision(old_rss) + 1
        size = new_rs_replicas(deployment, old_rss, None)
        rs: JSON = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta.get("namespace", "default"),
                "labels": dict(template["metadata"]["labels"]),
                "annotations": self._rs_annotations(deployment, revision),
                "ownerReferences": [new_owner_ref(deployment, "apps/v1", "Deployment")],
            },
            "spec": {
                "replicas": size,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            created = self.api.create(REPLICASETS, meta.get("namespace"), rs)
        except ApiError as exc:
            if exc.code != 409:
                raise
            existing = self.api.get(REPLICASETS, meta.get("namespace"), rs["metadata"]["name"])
            same = strip_label(existing.get("spec", {}).get("template") or {}, HASH_LABEL) == strip_label(
                template, HASH_LABEL
            )
            if same and controller_uid(existing) == [meta["uid"]]:
                self.rs_informer.apply_local(existing)
                return existing, 0
            # A hash collision: bump collisionCount so the next hash differs.
            body = {"status": {"collisionCount": int(collision or 0) + 1}}
            merge_patch(self.api, DEPLOYMENTS, deployment, body, subresource="status", tolerated=())
            self.queue.add(object_key(deployment))
            return None, 1
        self.rs_informer.apply_local(created)
        if size > 0:
            self.events.normal(
                deployment,
                "ScalingReplicaSet",
                f"Scaled up replica set {created['metadata']['name']} from 0 to {size}",
            )
        self._set_deployment_revision(deployment, revision)
        return created, 1

    def _sync_revision(self, deployment: JSON, new_rs: JSON, old_rss: list[JSON]) -> int:
        """A rollback makes an old RS new again: it gets revision max(old)+1."""
        wanted = max(max_revision(old_rss) + 1, _revision(new_rs))
        writes = 0
        if _revision(new_rs) != wanted:
            self._annotate_revision(self.rs_informer, new_rs, wanted)
            writes += 1
        return writes + self._set_deployment_revision(deployment, wanted)

    def _set_deployment_revision(self, deployment: JSON, revision: int) -> int:
        if (deployment["metadata"].get("annotations") or {}).get(REVISION) == str(revision):
            return 0
        self._annotate_revision(self.d_informer, deployment, revision)
        return 1

    def _annotate_revision(self, informer: Informer, obj: JSON, revision: int) -> None:
        """The Deployment and its new ReplicaSet carry the same revision annotation."""
        body = {"metadata": {"annotations": {REVISION: str(revision)}}}
        merge_patch(self.api, informer, obj, body, tolerated=())

    def _scale_rs(self, deployment: JSON, rs: JSON, size: int) -> int:
        meta = rs["metadata"]
        annotations = self._rs_annotations(deployment, None)
        patch: dict[str, Any] = {
            "spec": {"replicas": size},
            "metadata": {"annotations": {k: annotations[k] for k in (DESIRED_REPLICAS, MAX_REPLICAS)}},
        }
        before = int(rs.get("spec", {}).get("replicas") or 0)
        merge_patch(self.api, self.rs_informer, rs, patch, tolerated=())
        if size != before:
            direction = "up" if size > before else "down"
            self.events.normal(
                deployment,
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {meta['name']} from {before} to {size}",
            )
        return 1

    def _annotate_all(self, deployment: JSON, rss: list[JSON]) -> int:
        """Keep desired/max-replicas annotations current on RSs that have replicas."""
        writes = 0
        wanted = self._rs_annotations(deployment, None)
        for rs in rss:
            current = rs["metadata"].get("annotations") or {}
            if _replicas(rs) > 0 and any(
                current.get(k) != wanted[k] for k in (DESIRED_REPLICAS, MAX_REPLICAS)
            ):
                writes += self._scale_rs(deployment, rs, _replicas(rs))
        return writes

    def _cleanup(self, deployment: JSON, old_rss: list[JSON]) -> int:
        raw_limit = deployment.get("spec", {}).get("revisionHistoryLimit")
        limit = 10 if raw_limit is None else int(raw_limit)
        idle = [rs for rs in old_rss if _replicas(rs) == 0 and _status_int(rs, "replicas") == 0]
        excess = len(idle) - limit
        if excess <= 0:
            return 0
        writes = 0
        for rs in sorted(idle, key=lambda r: (_revision(r), _created(r)))[:excess]:
            if delete_through(self.api, self.rs_informer, rs) is not None:
                writes += 1
        return writes

    def _fresh(self, rss: list[JSON]) -> list[JSON]:
        return [self.rs_informer.get_key(object_key(rs)) or rs for rs in rss]

    def _sync_status_now(self, deployment: JSON) -> int:
        deployment = self.d_informer.get_key(object_key(deployment)) or deployment
        rss = [
            rs
            for rs in self.rs_informer.by_index("controller", str(deployment["metadata"]["uid"]))
            if not rs["metadata"].get("deletionTimestamp")
        ]
        new_rs, _ = self._split(deployment, rss)
        return self._sync_status(deployment, new_rs, rss)

    def _sync_status(self, deployment: JSON, new_rs: JSON | None, rss: list[JSON]) -> int:
        status = deployment_status(deployment, new_rs, rss, self.clock.now())
        current = deployment.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return 0
        return patch_status(self.api, self.d_informer, deployment, status)
