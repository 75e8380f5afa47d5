"""A snapshot of the objects one UnitedDeployment's sync reads.

Built from any list of Kubernetes objects (`kubectl get sgud,deploy,sts,pods,nodes
-o yaml`, optionally with CloneSets, Advanced StatefulSets and ControllerRevisions):
the UnitedDeployment, the workloads of the four subset kinds, the pods, the
ControllerRevisions and the nodes (which the planner does not read: `spreadgate
united plan` asks the node-fit check with them, as the controller does). Anything
else is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model.uniteddeployment import UnitedDeployment, is_uniteddeployment
from py_engine.semantics.objects import name as object_name
from py_engine.uniteddeployment.controller.discovery import WORKLOAD_KINDS, kind_key

Obj = Mapping[str, Any]


class StateError(ValueError):
    """The snapshot does not name one UnitedDeployment to plan."""


@dataclass(frozen=True)
class UnitedState:
    """`no_node_fit`: subsets in which no node can take a new pod, as the subset policy
    judged it (the controller runtime asks it for Adaptive UnitedDeployments; offline
    snapshots leave it empty). docs/uniteddeployment.md, "Node fit before allocating"."""

    ud: UnitedDeployment
    workloads: tuple[Obj, ...] = ()
    pods: tuple[Obj, ...] = ()
    revisions: tuple[Obj, ...] = ()
    no_node_fit: frozenset[str] = frozenset()
    nodes: tuple[Obj, ...] = ()
    forbidden_patches: tuple[str, ...] = ()
    """Subset patch fields off the allowlist (`py_engine.uniteddeployment.controller.runtime.patchcheck`): nothing is written
    from such a UnitedDeployment but its status (docs/uniteddeployment.md, "Subset patch allowlist")."""


def state_from_objects(objects: Iterable[Any], name: str | None = None) -> UnitedState:
    """Sort a snapshot's objects; raises StateError (or ModelError for a malformed UD)."""
    items = [o for o in objects if isinstance(o, Mapping)]
    candidates = [o for o in items if is_uniteddeployment(o) and (name is None or object_name(o) == name)]
    if not candidates:
        raise StateError(f"no UnitedDeployment{f' named {name!r}' if name else ''} in the state")
    if len(candidates) > 1:
        names = ", ".join(sorted(object_name(o) for o in candidates))
        raise StateError(f"several UnitedDeployments in the state ({names}); choose one with --name")
    return UnitedState(
        ud=UnitedDeployment.from_object(candidates[0]),
        workloads=tuple(o for o in items if kind_key(o) in WORKLOAD_KINDS),
        pods=tuple(o for o in items if o.get("kind") == "Pod"),
        revisions=tuple(o for o in items if o.get("kind") == "ControllerRevision"),
        nodes=tuple(o for o in items if o.get("kind") == "Node"),
    )
