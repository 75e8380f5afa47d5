"""Garbage collection by ownerReferences, and pod GC for vanished nodes.

`GarbageCollector` implements the three propagation policies the API server
records on a deleted owner:

* **Background**: the owner is gone at once; any dependent all of whose owners
  are gone (checked with a live GET, as upstream's `isDangling` does, so a
  stale cache never deletes a live object's children) is deleted. A dependent
  with some owner still present only loses the dangling references.
* **Foreground**: the owner keeps `metadata.finalizers: [foregroundDeletion]`
  with a deletionTimestamp; its dependents are deleted (Foreground again when
  they have dependents of their own, so the cascade nests), and once no
  dependent with `blockOwnerDeletion: true` exists the finalizer is removed.
* **Orphan**: the owner keeps the `orphan` finalizer; the GC strips the owner's
  reference from every dependent, then removes the finalizer.

Like kube-controller-manager's, it collects dependents of every kind: besides the built-in
resources above, the storage version of every CustomResourceDefinition is watched as soon as
the CRD appears, so a UnitedDeployment's CloneSets go with it.

`PodGC` plays the role of the pod garbage collector: a pod bound to a node that
no longer exists is marked Failed (condition `DisruptionTarget`, reason
`DeletionByPodGC`) and force-deleted; a terminating pod that was never
scheduled is force-deleted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from py_engine.semantics import objects
from py_engine.semantics.timeutil import format_time
from py_engine.sim.controllers.base import CRDS, Controller, crd_storage_resource, object_key
from py_engine.sim.controllers.writes import delete_through, merge_patch
from py_engine.sim.interface import JSON, ApiError

__all__ = ["DEFAULT_GC_RESOURCES", "GarbageCollector", "PodGC"]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

DEFAULT_GC_RESOURCES: dict[str, str] = {
    "v1/pods": "Pod",
    "apps/v1/replicasets": "ReplicaSet",
    "apps/v1/deployments": "Deployment",
    "apps/v1/statefulsets": "StatefulSet",
    "apps/v1/controllerrevisions": "ControllerRevision",
    "batch/v1/jobs": "Job",
    "v1/configmaps": "ConfigMap",
    "v1/secrets": "Secret",
    "v1/services": "Service",
}


def _uid(obj: JSON) -> list[str]:
    uid = objects.meta(obj).get("uid")
    return [str(uid)] if uid else []


def _owner_uids(obj: JSON) -> list[str]:
    return [str(r["uid"]) for r in objects.meta(obj).get("ownerReferences") or [] if r.get("uid")]


class GarbageCollector(Controller):
    """Cascading deletion over a fixed set of resources (`resource -> kind`)."""

    name = "garbage-collector"

    def __init__(self, *args: object, resources: Mapping[str, str] | None = None, **kwargs: object) -> None:
        self.resources = dict(resources if resources is not None else DEFAULT_GC_RESOURCES)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def setup(self) -> None:
        for resource in list(self.resources):
            self._watch_resource(resource)
        self.informers.get(CRDS).add_handler(self._on_crd)

    def _on_crd(self, event: str, crd: JSON) -> None:
        """Collect the custom resource a CRD defines, at its storage version."""
        if event == "DELETED":
            return
        stored = crd_storage_resource(crd)
        if stored is not None:
            self.add_resource(*stored)

    def add_resource(self, resource: str, kind: str) -> None:
        """Also collect a custom resource (e.g. a CRD whose objects own pods)."""
        if resource not in self.resources:
            self.resources[resource] = kind
            self._watch_resource(resource)

    def _watch_resource(self, resource: str) -> None:
        informer = self.informers.get(resource)
        informer.add_index("uid", _uid)
        informer.add_index("owner", _owner_uids)

        def handler(event: str, obj: JSON) -> None:
            self.enqueue(f"{resource}|{object_key(obj)}")
            if event == "DELETED":
                # Dependents of a vanished owner become dangling.
                for uid in _uid(obj):
                    for dependent_resource, dependent in self._dependents(uid):
                        self.enqueue(f"{dependent_resource}|{object_key(dependent)}")
            owners = objects.meta(obj).get("ownerReferences") or []
            for ref in owners:
                owner = self._find_owner(ref)
                if owner is not None:
                    self.enqueue(f"{owner[0]}|{object_key(owner[1])}")

        informer.add_handler(handler)

    def _resource_for(self, api_version: str, kind: str) -> str | None:
        group = objects.api_group(api_version)
        for resource, known_kind in list(self.resources.items()):
            if known_kind == kind and objects.api_group(resource.rpartition("/")[0]) == group:
                return resource
        return None

    def _find_owner(self, ref: Mapping[str, object]) -> tuple[str, JSON] | None:
        resource = self._resource_for(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if resource is None:
            return None
        found = self.informers.get(resource).by_index("uid", str(ref.get("uid")))
        return (resource, found[0]) if found else None

    def _dependents(self, uid: str) -> list[tuple[str, JSON]]:
        out: list[tuple[str, JSON]] = []
        for resource in list(self.resources):
            out.extend((resource, obj) for obj in self.informers.get(resource).by_index("owner", uid))
        return out

    def all_keys(self) -> Sequence[str]:
        keys: list[str] = []
        for resource in list(self.resources):
            for obj in self.informers.get(resource).items():
                meta = objects.meta(obj)
                finalizers = meta.get("finalizers") or []
                if meta.get("ownerReferences") or (
                    meta.get("deletionTimestamp") and (FOREGROUND in finalizers or ORPHAN in finalizers)
                ):
                    keys.append(f"{resource}|{object_key(obj)}")
        return sorted(keys)

    # ------------------------------------------------------------------- sync

    def sync(self, key: str) -> int:
        resource, _, obj_key = key.partition("|")
        if resource not in self.resources:
            return 0
        obj = self.informers.get(resource).get_key(obj_key)
        if obj is None:
            return 0
        meta = obj["metadata"]
        finalizers = meta.get("finalizers") or []
        writes = 0
        if meta.get("deletionTimestamp"):
            if ORPHAN in finalizers:
                return self._orphan(resource, obj)
            if FOREGROUND in finalizers:
                writes += self._foreground(resource, obj)
        if meta.get("ownerReferences") and not meta.get("deletionTimestamp"):
            writes += self._collect_if_dangling(resource, obj)
        return writes

    def _live_owner_absent(self, namespace: str | None, ref: Mapping[str, object]) -> bool | None:
        """True if the owner is really gone (404 or a different uid); None if unknown kind."""
        resource = self._resource_for(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if resource is None:
            return None
        cached = self.informers.get(resource).by_index("uid", str(ref.get("uid")))
        if cached:
            return False
        try:
            live = self.api.get(resource, namespace if resource != "v1/nodes" else None, str(ref.get("name")))
        except ApiError as exc:
            if exc.code == 404:
                return True
            raise
        return str(live.get("metadata", {}).get("uid")) != str(ref.get("uid"))

    def _owner_waiting(self, ref: Mapping[str, object]) -> bool:
        found = self._find_owner(ref)
        if found is None:
            return False
        meta = found[1]["metadata"]
        return bool(meta.get("deletionTimestamp")) and FOREGROUND in (meta.get("finalizers") or [])

    def _collect_if_dangling(self, resource: str, obj: JSON) -> int:
        meta = obj["metadata"]
        refs = meta.get("ownerReferences") or []
        dangling: list[str] = []
        solid = 0
        for ref in refs:
            absent = self._live_owner_absent(meta.get("namespace"), ref)
            if absent:
                dangling.append(str(ref.get("uid")))
            elif not self._owner_waiting(ref):
                solid += 1
        if not dangling:
            return 0
        if solid or len(dangling) < len(refs):
            return self._remove_refs(resource, obj, set(dangling))
        return self._delete(resource, obj, "Background")

    def _foreground(self, resource: str, owner: JSON) -> int:
        uid = str(owner["metadata"]["uid"])
        writes = 0
        blocking = 0
        for dep_resource, dependent in self._dependents(uid):
            dep_meta = dependent["metadata"]
            refs = dep_meta.get("ownerReferences") or []
            mine = [r for r in refs if str(r.get("uid")) == uid]
            if any(r.get("blockOwnerDeletion") for r in mine):
                blocking += 1
            if dep_meta.get("deletionTimestamp"):
                continue
            others_solid = any(
                str(r.get("uid")) != uid
                and not self._owner_waiting(r)
                and self._live_owner_absent(dep_meta.get("namespace"), r) is not True
                for r in refs
            )
            if others_solid:
                writes += self._remove_refs(dep_resource, dependent, {uid})
                continue
            has_own = bool(self._dependents(str(dep_meta.get("uid"))))
            writes += self._delete(dep_resource, dependent, "Foreground" if has_own else "Background")
        if blocking == 0:
            writes += self._remove_finalizer(resource, owner, FOREGROUND)
        return writes

    def _orphan(self, resource: str, owner: JSON) -> int:
        uid = str(owner["metadata"]["uid"])
        writes = 0
        for dep_resource, dependent in self._dependents(uid):
            writes += self._remove_refs(dep_resource, dependent, {uid})
        return writes + self._remove_finalizer(resource, owner, ORPHAN)

    # ----------------------------------------------------------------- writes

    def _remove_refs(self, resource: str, obj: JSON, uids: set[str]) -> int:
        meta = obj["metadata"]
        refs = [r for r in meta.get("ownerReferences") or [] if str(r.get("uid")) not in uids]
        body = {
            "metadata": {
                "ownerReferences": refs or None,
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            }
        }
        return int(merge_patch(self.api, self.informers.get(resource), obj, body) is not None)

    def _remove_finalizer(self, resource: str, obj: JSON, finalizer: str) -> int:
        meta = obj["metadata"]
        remaining = [f for f in meta.get("finalizers") or [] if f != finalizer]
        body = {"metadata": {"finalizers": remaining or None, "resourceVersion": meta.get("resourceVersion")}}
        result = merge_patch(self.api, resource, obj, body)
        if result is None:
            return 0
        if result.get("metadata"):
            self.informers.get(resource).delete_local(result)
        return 1

    def _delete(self, resource: str, obj: JSON, policy: str) -> int:
        informer = self.informers.get(resource)
        result = delete_through(
            self.api, informer, obj, by_uid=True, propagation_policy=policy, tolerated=(404, 409)
        )
        return int(result is not None)


class PodGC(Controller):
    """Fails and removes pods whose node is gone; removes unscheduled terminating pods."""

    name = "pod-gc"

    def setup(self) -> None:
        self.pod_informer = self.informers.get("v1/pods")
        self.node_informer = self.informers.get("v1/nodes")
        self.pod_informer.add_handler(lambda _e, obj: self.enqueue(object_key(obj)))
        self.node_informer.add_handler(self._on_node)

    def _on_node(self, event: str, node: JSON) -> None:
        if event == "DELETED":
            for pod in self.pod_informer.items():
                if pod.get("spec", {}).get("nodeName") == node["metadata"]["name"]:
                    self.enqueue(object_key(pod))

    def all_keys(self) -> Sequence[str]:
        return sorted(object_key(p) for p in self.pod_informer.items() if self._orphaned(p))

    def _orphaned(self, pod: JSON) -> bool:
        node = pod.get("spec", {}).get("nodeName")
        if node:
            return self.node_informer.get(None, str(node)) is None
        return bool(pod["metadata"].get("deletionTimestamp"))

    def sync(self, key: str) -> int:
        pod = self.pod_informer.get_key(key)
        if pod is None or not self._orphaned(pod):
            return 0
        node = pod.get("spec", {}).get("nodeName")
        writes = 0
        if node:
            try:  # confirm with the server before failing a pod
                self.api.get("v1/nodes", None, str(node))
                return 0
            except ApiError as exc:
                if exc.code != 404:
                    raise
            if pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                now = format_time(self.clock.now())
                conditions = [
                    c
                    for c in pod.get("status", {}).get("conditions") or []
                    if c.get("type") != "DisruptionTarget"
                ]
                conditions.append(
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "DeletionByPodGC",
                        "message": "PodGC: node no longer exists",
                        "lastTransitionTime": now,
                    }
                )
                status = {"phase": "Failed", "reason": "NodeLost", "conditions": conditions}
                if merge_patch(self.api, "v1/pods", pod, {"status": status}, subresource="status") is None:
                    return 0
                writes += 1
        if delete_through(self.api, self.pod_informer, pod, grace_period_seconds=0) is None:
            return writes
        return writes + 1
