"""The embedded scheduler: filter nodes, score them, bind through `pods/binding`.

Filters run in the upstream plugin order and a node fails at the first plugin
that rejects it, so the "0/N nodes are available" message counts one reason per
node like kube-scheduler does: NodeUnschedulable, TaintToleration
(NoSchedule/NoExecute), NodeAffinity (nodeSelector + required affinity),
NodeResourcesFit (pod count, cpu, memory, any other requested resource,
against allocatable minus the requests of non-terminal pods bound there).

Scoring is lexicographic, which makes placements predictable for tests:
highest sum of matching preferred node-affinity weights, then fewest untolerated
PreferNoSchedule taints, then fewest pods on the node (spreads replicas), then
node name. (kube-scheduler sums normalised plugin scores instead; the ordering
of the first two criteria is this emulator's choice.)

Pods are considered when `spec.schedulerName` is unset or `default-scheduler`,
`spec.nodeName` is empty and they are not being deleted, oldest first (higher
`spec.priority` first). An unplaceable pod gets `PodScheduled=False`,
reason `Unschedulable`; every pod or node change re-queues all pending pods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from py_engine.semantics.scheduling import (
    insufficient_resources,
    intolerable_prefer_no_schedule_count,
    node_allocatable,
    pod_matches_node_selector_and_affinity,
    pod_requests,
    preferred_affinity_score,
    tolerates_unschedulable,
    untolerated_taint,
)
from py_engine.semantics.timeutil import format_time
from py_engine.sim.controllers.base import Controller, object_key, resource_version
from py_engine.sim.controllers.podutil import is_terminal
from py_engine.sim.controllers.writes import patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = ["NodeState", "Scheduler", "filter_node", "fit_error_message", "pick_node", "snapshot"]

PODS = "v1/pods"
NODES = "v1/nodes"
SCHEDULER_NAME = "default-scheduler"


@dataclass
class NodeState:
    """A node plus what is already committed to it (the scheduler cache's NodeInfo)."""

    node: JSON
    allocatable: dict[str, Fraction]
    requested: dict[str, Fraction] = field(default_factory=dict)
    pods: int = 0

    @property
    def name(self) -> str:
        return str(self.node["metadata"]["name"])

    def add(self, pod: JSON) -> None:
        self.pods += 1
        for resource, amount in pod_requests(pod).items():
            self.requested[resource] = self.requested.get(resource, Fraction(0)) + amount


def snapshot(nodes: Sequence[JSON], pods: Sequence[JSON]) -> dict[str, NodeState]:
    """NodeInfo for every node from the pods bound to it (terminal pods free their resources)."""
    states = {str(n["metadata"]["name"]): NodeState(n, node_allocatable(n)) for n in nodes}
    for pod in pods:
        node_name = pod.get("spec", {}).get("nodeName")
        if node_name and node_name in states and not is_terminal(pod):
            states[node_name].add(pod)
    return states


def filter_node(pod: JSON, state: NodeState) -> list[str]:
    """Reasons this node cannot take the pod (empty: it can), first failing plugin only."""
    node = state.node
    if node.get("spec", {}).get("unschedulable") and not tolerates_unschedulable(pod):
        return ["node(s) were unschedulable"]
    taint = untolerated_taint(
        node.get("spec", {}).get("taints") or [], pod.get("spec", {}).get("tolerations") or []
    )
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"]
    if not pod_matches_node_selector_and_affinity(pod, node):
        return ["node(s) didn't match Pod's node affinity/selector"]
    return insufficient_resources(pod_requests(pod), state.allocatable, state.requested, state.pods)


def fit_error_message(total: int, reasons: dict[str, int]) -> str:
    """`FitError.Error()`: "0/N nodes are available: <count> <reason>, ...", sorted."""
    if total == 0:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{total} nodes are available: {', '.join(parts)}."


def pick_node(pod: JSON, states: dict[str, NodeState]) -> tuple[NodeState | None, dict[str, int]]:
    """The best feasible node, or None and the histogram of filter reasons."""
    reasons: dict[str, int] = {}
    feasible: list[NodeState] = []
    for state in states.values():
        failed = filter_node(pod, state)
        if failed:
            for reason in failed:
                reasons[reason] = reasons.get(reason, 0) + 1
        else:
            feasible.append(state)
    if not feasible:
        return None, reasons
    tolerations = pod.get("spec", {}).get("tolerations") or []

    def rank(state: NodeState) -> tuple[int, int, int, str]:
        taints = state.node.get("spec", {}).get("taints") or []
        return (
            -preferred_affinity_score(pod, state.node),
            intolerable_prefer_no_schedule_count(taints, tolerations),
            state.pods,
            state.name,
        )

    return min(feasible, key=rank), reasons


def _uid(pod: JSON) -> str:
    return str(pod.get("metadata", {}).get("uid") or "")


def _wants_scheduling(pod: JSON) -> bool:
    spec = pod.get("spec", {})
    return (
        not spec.get("nodeName")
        and spec.get("schedulerName", SCHEDULER_NAME) in (SCHEDULER_NAME, None, "")
        and not pod.get("metadata", {}).get("deletionTimestamp")
        and not is_terminal(pod)
    )


class Scheduler(Controller):
    """Binds pending pods to nodes; one snapshot per batch of pending pods."""

    name = "scheduler"
    component = "default-scheduler"

    def setup(self) -> None:
        self.pod_informer = self.informers.get(PODS)
        self.node_informer = self.informers.get(NODES)
        # Pods this scheduler bound whose binding the server has not shown yet (uid ->
        # node and the resourceVersion the pod had when it was bound), as kube-scheduler's
        # "assumed pods". Our own reflection of the binding keeps that resourceVersion, so
        # a late watch event of the pod as it was before binding may replace it; only an
        # event at a newer version (the server's bound pod) or the pod's deletion confirms
        # or forgets the assumption. Without this the next snapshot counted the node short.
        self._assumed: dict[str, tuple[str, int | None]] = {}
        self.pod_informer.add_handler(self._on_pod)
        self.node_informer.add_handler(lambda _e, _obj: self._requeue_pending())

    def assumed_pods(self) -> dict[str, str]:
        """uid -> node of every binding not yet confirmed by the server (for tests)."""
        return {uid: node for uid, (node, _version) in self._assumed.items()}

    def _assumed_node(self, pod: JSON) -> str | None:
        assumed = self._assumed.get(_uid(pod))
        return None if assumed is None else assumed[0]

    def _confirms_assumption(self, event: str, pod: JSON) -> bool:
        """A deletion, or the server's copy of the pod bound (newer than the one we bound)."""
        if event == "DELETED":
            return True
        assumed = self._assumed.get(_uid(pod))
        if assumed is None or not pod.get("spec", {}).get("nodeName"):
            return False
        version, bound_from = resource_version(pod), assumed[1]
        return version is None or bound_from is None or version > bound_from

    def _with_assumed_binding(self, pod: JSON) -> JSON:
        node = None if pod.get("spec", {}).get("nodeName") else self._assumed_node(pod)
        return pod if node is None else {**pod, "spec": {**pod.get("spec", {}), "nodeName": node}}

    def _on_pod(self, event: str, pod: JSON) -> None:
        if self._confirms_assumption(event, pod):
            self._assumed.pop(_uid(pod), None)
        if _wants_scheduling(pod) and self._assumed_node(pod) is None:
            self.enqueue(object_key(pod))
        elif event == "DELETED" or is_terminal(pod) or pod.get("metadata", {}).get("deletionTimestamp"):
            self._requeue_pending()  # resources were freed

    def _requeue_pending(self) -> None:
        for key in self._pending_keys():
            self.enqueue(key)

    def _pending_keys(self) -> list[str]:
        return [
            object_key(p)
            for p in self.pod_informer.items()
            if _wants_scheduling(p) and self._assumed_node(p) is None
        ]

    def all_keys(self) -> Sequence[str]:
        return self._pending_keys()

    def sync(self, key: str) -> int:
        return self.sync_keys([key])

    def sync_keys(self, keys: Sequence[str]) -> int:
        pending = [
            p
            for k in keys
            if (p := self.pod_informer.get_key(k)) is not None
            and _wants_scheduling(p)
            and self._assumed_node(p) is None
        ]
        if not pending:
            return 0
        pending.sort(
            key=lambda p: (
                -int(p.get("spec", {}).get("priority") or 0),
                str(p["metadata"].get("creationTimestamp", "")),
                object_key(p),
            )
        )
        states = snapshot(
            self.node_informer.items(), [self._with_assumed_binding(p) for p in self.pod_informer.items()]
        )
        writes = 0
        for pod in pending:
            try:
                writes += self._schedule_one(pod, states)
            except ApiError as exc:
                self._record(f"{object_key(pod)}: {exc.code} {exc}")
                self.queue.add_after(object_key(pod), 0.5)
        return writes

    def _schedule_one(self, pod: JSON, states: dict[str, NodeState]) -> int:
        meta = pod["metadata"]
        chosen, reasons = pick_node(pod, states)
        if chosen is None:
            # Retried when a node or pod changes (handlers) and on the periodic resync.
            return self._mark_unschedulable(pod, fit_error_message(len(states), reasons))
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace"), "uid": meta.get("uid")},
            "target": {"apiVersion": "v1", "kind": "Node", "name": chosen.name},
        }
        # Assumed before the binding is sent, as kube-scheduler does: the server's event of
        # the bound pod can reach the informer before `create` returns here, and it must
        # find the assumption to confirm it.
        uid = _uid(pod)
        if uid:
            self._assumed[uid] = (chosen.name, resource_version(pod))
        try:
            self.api.create(PODS, meta.get("namespace"), binding, subresource="binding", name=meta["name"])
        except ApiError as exc:
            self._assumed.pop(uid, None)  # forgotten: the binding did not happen
            if exc.code in (404, 409):  # deleted, or bound by someone else meanwhile
                return 0
            raise
        chosen.add(pod)
        self.events.normal(
            pod, "Scheduled", f"Successfully assigned {meta.get('namespace')}/{meta['name']} to {chosen.name}"
        )
        bound = dict(pod)
        bound["spec"] = {**pod.get("spec", {}), "nodeName": chosen.name}
        self.pod_informer.apply_local(bound)
        return 1

    def _mark_unschedulable(self, pod: JSON, message: str) -> int:
        conditions = [dict(c) for c in pod.get("status", {}).get("conditions") or []]
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if current is not None and current.get("status") == "False" and current.get("message") == message:
            return 0
        now = format_time(self.clock.now())
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now,
        }
        if current is not None and current.get("status") == "False":
            condition["lastTransitionTime"] = current.get("lastTransitionTime", now)
        conditions = [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]
        if not patch_status(self.api, self.pod_informer, pod, {"conditions": conditions}):
            return 0
        self.events.warning(pod, "FailedScheduling", message)
        return 1
