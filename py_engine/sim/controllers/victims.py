"""The call site of the scale-down model: which active pods a ReplicaSet deletes.

The ranking itself (`getPodsToDelete` / `ActivePodsWithRanks`, with the
PodDeletionCost and LogarithmicScaleDown gates on, as in current Kubernetes)
belongs to `py_engine.scaledown`; this module only adapts the controller's view
(active pods in lister order, indirectly related pods, how many to remove, now)
to that package and maps the chosen indices back to pod objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from py_engine.scaledown.gates import DEFAULT_GATES, FeatureGates
from py_engine.scaledown.pods import read_pod
from py_engine.scaledown.replicaset import get_pods_to_delete
from py_engine.sim.interface import JSON

__all__ = ["choose_victims"]


def choose_victims(active: Sequence[JSON], related: Sequence[JSON] | None, diff: int, now: datetime, *,
                   gates: FeatureGates = DEFAULT_GATES) -> list[JSON]:
    """The `diff` pods of `active` the ReplicaSet controller deletes, in deletion order.

    `related` is None for a ReplicaSet without a controller owner (upstream then
    ranks every pod 0), else the pods of every ReplicaSet sharing its owner.
    """
    if diff <= 0:
        return []
    diff = min(diff, len(active))
    facts = [read_pod(pod, i) for i, pod in enumerate(active)]
    related_facts = None if related is None else [read_pod(pod, i) for i, pod in enumerate(related)]
    indices = get_pods_to_delete(facts, related_facts, diff, now=now, gates=gates)
    return [active[i] for i in indices]
