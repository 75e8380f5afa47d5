"""What the allocators read about one existing subset workload.

Kept apart from discovery so the allocators can be driven directly by the
reference vectors (docs/uniteddeployment.md, "Allocation").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SubsetObservation:
    """One existing subset workload as the allocators see it.

    `spec_replicas` is the workload's desired size, `ready_replicas` its
    `status.readyReplicas`; `unschedulable` is this sync's verdict (Adaptive), and
    `marked_unschedulable` whether the stored `Schedulable` condition was False
    before this sync (reservation mode); `reserved_pods` counts reserved pods;
    `placed_replicas` counts active pods bound to a node (Adaptive node fit).
    """

    spec_replicas: int = 0
    ready_replicas: int = 0
    reserved_pods: int = 0
    unschedulable: bool = False
    marked_unschedulable: bool = False
    placed_replicas: int = 0
