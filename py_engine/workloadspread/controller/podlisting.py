"""Which pods a sync looks at: the listing per target kind (docs/design-workloadspread.md §1.4).

Deployment: pods owned by any of its non-deleting ReplicaSets (or by the
Deployment itself when it has none); Job: pods matching its selector and owned
by it; every other kind: pods owned by its UID (any ownerReference, as Kruise's
owner-UID index), falling back to the scale selector for custom kinds. A
replica count of 0 lists nothing (except for Jobs). `targetFilter.selector`
then filters; a nil selector keeps every pod (the webhook reads nil as
"nothing" — the controller does not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model.pods import controller_owner
from py_engine.model.workloads import DEPLOYMENT, JOB, target_kind
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics import objects
from py_engine.semantics.labels import SelectorError, labels_of, matches_label_selector
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.workloads import listing_replicas

Obj = Mapping[str, Any]


def owner_uids(obj: Obj) -> set[str]:
    """UIDs of every ownerReference of an object."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return set()
    return {str(ref["uid"]) for ref in refs if isinstance(ref, Mapping) and ref.get("uid")}


class PodList(list[Any]):
    """A namespace's pods in list order, with an owner-UID index built on first use.

    Every spread of a namespace lists its pods out of the same candidates; a
    scan per sync makes a pass over N spreads cost N x pods (10,000 pods and
    100 spreads: a million ownerReference reads, over a second). Sources hand
    out one `PodList` per namespace and cache version, so the index is built
    once and each sync reads only its own pods. The list must not be mutated
    after the first lookup (sources treat listed objects as read-only).
    """

    _by_owner: dict[str, list[int]] | None = None

    def owned_by(self, uids: set[str]) -> list[Obj]:
        """Pods with an ownerReference to any of `uids`, in list order."""
        index = self._by_owner
        if index is None:
            index = {}
            for position, pod in enumerate(self):
                for uid in owner_uids(pod):
                    index.setdefault(uid, []).append(position)
            self._by_owner = index  # a concurrent builder computes the same index: benign
        if len(uids) == 1:
            positions: Sequence[int] = index.get(next(iter(uids)), ())
        else:
            positions = sorted({p for uid in uids for p in index.get(uid, ())})
        return [self[p] for p in positions]


def _owned_by(pods: Sequence[Obj], uids: set[str]) -> list[Obj]:
    if isinstance(pods, PodList):
        return pods.owned_by(uids)
    return [pod for pod in pods if owner_uids(pod) & uids]


class ReplicaSetList(list[Any]):
    """A namespace's ReplicaSets in list order, with a controller-UID index built on first use.

    Every Deployment-targeting sync asks for its Deployment's ReplicaSets (twice: the listing
    and the latest version); a scan per sync makes a pass over N spreads cost N x ReplicaSets
    (1,000 spreads: two million controller-owner reads, issue 28). Sources hand out one per
    namespace and cache version, as `PodList`; the list must not be mutated after the first lookup.
    """

    _by_controller: dict[str, list[Obj]] | None = None

    def controlled_by(self, uid: str) -> list[Obj]:
        """ReplicaSets whose controller ownerReference has `uid`, in list order."""
        index = self._by_controller
        if index is None:
            index = {}
            for rs in self:
                owner = controller_owner(rs)
                owner_uid = owner.get("uid") if owner is not None else None
                if isinstance(owner_uid, str):  # the scan's `owner uid == deployment uid`, as a key
                    index.setdefault(owner_uid, []).append(rs)
            self._by_controller = index  # a concurrent builder computes the same index: benign
        return index.get(uid, [])


def deployment_replicasets(deployment: Obj, replica_sets: Sequence[Obj]) -> list[Obj]:
    """Non-deleting ReplicaSets whose controller is the Deployment."""
    uid = objects.uid(deployment)
    if isinstance(replica_sets, ReplicaSetList):
        return [
            rs
            for rs in replica_sets.controlled_by(uid)
            if not (rs.get("metadata") or {}).get("deletionTimestamp")
        ]
    found = []
    for rs in replica_sets:
        owner = controller_owner(rs)
        meta = rs.get("metadata") or {}
        if owner is not None and owner.get("uid") == uid and not meta.get("deletionTimestamp"):
            found.append(rs)
    return found


def _selected(selector: Any, pod: Obj, what: str) -> bool:
    try:
        return matches_label_selector(selector, labels_of(pod))
    except SelectorError as exc:
        raise ReconcileError(f"{what}: {exc}") from None


def list_pods(
    spread: WorkloadSpread,
    workload: Obj | None,
    candidates: Sequence[Obj],
    replica_sets: Sequence[Obj] = (),
    scale_replicas: int | None = None,
    scale_selector: Obj | None = None,
) -> list[Obj]:
    """The pods of the target, in `candidates` order, after `targetFilter`."""
    if workload is None:
        return []
    kind = target_kind(spread)
    if kind is not JOB and listing_replicas(spread, workload, scale_replicas) == 0:
        return []
    uid = objects.uid(workload)
    if kind is DEPLOYMENT:
        owners = {objects.uid(rs) for rs in deployment_replicasets(workload, replica_sets)} or {uid}
        pods = _owned_by(candidates, owners)
    elif kind is JOB:
        selector = (workload.get("spec") or {}).get("selector")
        pods = [p for p in _owned_by(candidates, {uid}) if _selected(selector or {}, p, "Job selector")]
    else:
        pods = _owned_by(candidates, {uid})
        if not pods and kind is None and scale_selector is not None:
            pods = [p for p in candidates if _selected(scale_selector, p, "scale selector")]
    tf = spread.target_filter
    if tf is not None and tf.selector is not None:
        pods = [p for p in pods if _selected(tf.selector, p, "spec.targetFilter.selector")]
    return pods
