"""ReplicaSet (and ReplicationController) victim choice.

What `manageReplicas` does when a ReplicaSet has more active pods than replicas:

* `diff = len(active pods) - replicas`, capped at `burstReplicas` (500), so one
  sync deletes at most 500 pods; the next sync re-lists and ranks again.
* `rank(pod)` = number of *related* pods that are active and run on the same
  node as the pod (the pod itself included). Related pods are the pods of every
  ReplicaSet with the same controller owner (the Deployment's old and new
  ReplicaSets), so during a rollout the old pods sharing a node with new ones go
  first. A ReplicaSet without a controller owner has no related pods: every rank
  is 0.
* When every pod goes (`diff == len`), nothing is sorted: pods are taken in list
  order. Otherwise the pods are sorted with `ActivePodsWithRanks` (one `now` for
  the whole sort) and the first `diff` are deleted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from py_engine.scaledown.gates import DEFAULT_GATES, FeatureGates
from py_engine.scaledown.kubernetes import K8sOrder
from py_engine.scaledown.ordering import LAST, UNSORTED, Placement
from py_engine.scaledown.pods import INACTIVE_PHASES, PodFacts

BURST_REPLICAS = 500


def related_pod_ranks(pods: Sequence[PodFacts], related: Sequence[PodFacts] | None) -> list[int]:
    """`getPodsRankedByRelatedPodsOnSameNode`: active related pods sharing each pod's node.

    `related=None` models a ReplicaSet without a controller owner (all ranks 0).
    Unscheduled pods share the node name "" and so count each other; harmless,
    because rule 1 already separates scheduled from unscheduled pods.
    """
    if related is None:
        return [0] * len(pods)
    inactive = INACTIVE_PHASES
    per_node = Counter(pod.node_name for pod in related if not pod.terminating and pod.phase not in inactive)
    return [per_node.get(pod.node_name, 0) for pod in pods]


def merge_related(own: Sequence[PodFacts], others: Sequence[PodFacts]) -> list[PodFacts]:
    """The related-pod list of `getIndirectlyRelatedPods`: own pods plus siblings, once each.

    Upstream lists the pods of every sibling ReplicaSet (the ReplicaSet itself
    included) and skips a pod whose UID it has already seen. Pods without a UID
    (hand-written JSON only) are de-duplicated by namespace and name instead.
    """
    seen: set[tuple[str, str] | str] = set()
    merged: list[PodFacts] = []
    for pod in (*own, *others):
        identity: tuple[str, str] | str = pod.uid if pod.uid else (pod.namespace, pod.name)
        if identity in seen:
            continue
        seen.add(identity)
        merged.append(pod)
    return merged


def get_pods_to_delete(
    pods: Sequence[PodFacts],
    related: Sequence[PodFacts] | None,
    diff: int,
    *,
    now: datetime | None,
    gates: FeatureGates = DEFAULT_GATES,
    ranks: Sequence[int] | None = None,
) -> list[int]:
    """`getPodsToDelete`: input indices of the `diff` pods one sync deletes.

    `pods` are the ReplicaSet's active pods in lister order. `ranks`, when given,
    replaces the related-pod ranks. `diff` must lie in [0, len(pods)]; the burst
    cap is applied by the caller (see `scale_down_passes`).
    """
    if diff < 0 or diff > len(pods):
        raise ValueError(f"cannot delete {diff} of {len(pods)} pods")
    if diff == len(pods):
        return list(range(diff))
    if ranks is None:
        ranks = related_pod_ranks(pods, related)
    return K8sOrder(pods, ranks, now=now, gates=gates).order[:diff]


def replicaset_order(
    pods: Sequence[PodFacts],
    related: Sequence[PodFacts] | None,
    *,
    now: datetime | None,
    gates: FeatureGates = DEFAULT_GATES,
    ranks: Sequence[int] | None = None,
) -> K8sOrder:
    """The full ranked order of one sync that must delete fewer pods than it has."""
    if ranks is None:
        ranks = related_pod_ranks(pods, related)
    return K8sOrder(pods, ranks, now=now, gates=gates)


def _without(related: Sequence[PodFacts], victims: Sequence[PodFacts]) -> list[PodFacts]:
    """Related pods minus the deleted ones (the same objects, or copies with the same UID)."""
    gone_ids = {id(pod) for pod in victims}
    gone_uids = {pod.uid for pod in victims if pod.uid}
    return [pod for pod in related if id(pod) not in gone_ids and not (pod.uid and pod.uid in gone_uids)]


def scale_down_passes(
    pods: Sequence[PodFacts],
    related: Sequence[PodFacts] | None,
    count: int,
    *,
    now: datetime | None,
    gates: FeatureGates = DEFAULT_GATES,
    ranks: Sequence[int] | None = None,
    burst: int = BURST_REPLICAS,
) -> list[list[Placement]]:
    """The victims of scaling down by `count`, one list per controller sync.

    Each sync deletes at most `burst` pods and then re-ranks the survivors: the
    victims leave the related pods, so co-location counts drop between syncs
    exactly as they do in the cluster. Every sync uses the same `now` (real syncs
    are seconds apart). Explicit `ranks` (aligned with `pods`) stay fixed.
    Placements carry the input index, the rank used in that sync (None when the
    sync deleted all remaining pods unsorted) and why the pod precedes the next
    one ("next-sync" for the last victim of a sync that is followed by another).
    """
    if count < 0 or count > len(pods):
        raise ValueError(f"cannot scale down by {count}: there are {len(pods)} active pods")
    if burst < 1:
        raise ValueError("burst must be at least 1")
    if ranks is not None and len(ranks) != len(pods):
        raise ValueError(f"{len(ranks)} ranks for {len(pods)} pods")
    remaining = list(range(len(pods)))
    current_related = None if related is None else list(related)
    passes: list[list[Placement]] = []
    left = count
    while left > 0:
        diff = min(left, burst)
        if diff == len(remaining):
            chosen = [Placement(index, None, UNSORTED) for index in remaining]
        else:
            subset = [pods[index] for index in remaining]
            if ranks is not None:
                pass_ranks = [ranks[index] for index in remaining]
            else:
                pass_ranks = related_pod_ranks(subset, current_related)
            explained = K8sOrder(subset, pass_ranks, now=now, gates=gates).placements(diff)
            chosen = [p._replace(item=remaining[p.item]) for p in explained]
        left -= diff
        gone = {p.item for p in chosen}
        remaining = [index for index in remaining if index not in gone]
        if current_related is not None:
            current_related = _without(current_related, [pods[index] for index in gone])
        chosen[-1] = chosen[-1]._replace(criterion="next-sync" if left > 0 else LAST)
        passes.append(chosen)
    return passes
