"""The simulated kubelet of every node: runs bound pods through their lifecycle.

No containers exist; the kubelet only writes the status a real one would:

* **Pending -> Running** `start_delay` seconds after it first sees the pod bound
  (phase Running, `startTime`, `hostIP`/`podIP`, conditions PodReadyToStartContainers,
  Initialized=True, containerStatuses `running`);
* **Running -> Ready** `ready_delay` seconds after start (Ready and
  ContainersReady become True, containers `ready: true`); with both delays 0
  (the default) one status write does both;
* **run to completion**: pods owned by a Job (after `job_run_seconds`, default
  5 s), or any pod annotated `sim.spreadgate.dev/run-seconds: "<s>"`, end as
  Succeeded (exit code 0) or Failed when annotated
  `sim.spreadgate.dev/exit-code: "<n>"` with n != 0; Ready turns False
  (reason PodCompleted);
* **graceful deletion**: a pod with a deletionTimestamp on one of our nodes is
  confirmed with `delete(gracePeriodSeconds=0)`, immediately (default) or only
  once its grace period has elapsed (`honor_grace_period=True`).

Every condition carries a `lastTransitionTime` from the injected clock, so
virtual-time tests can assert exact times. Pods bound to a node that does not
exist are left alone here; `PodGC` fails and removes them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from py_engine.semantics.timeutil import TimestampError, format_time, parse_time
from py_engine.sim.controllers.base import Controller, controller_ref, object_key
from py_engine.sim.controllers.writes import delete_through, patch_status
from py_engine.sim.interface import JSON

__all__ = ["EXIT_CODE_ANNOTATION", "RUN_SECONDS_ANNOTATION", "Kubelet", "KubeletConfig"]

PODS = "v1/pods"
NODES = "v1/nodes"
RUN_SECONDS_ANNOTATION = "sim.spreadgate.dev/run-seconds"
EXIT_CODE_ANNOTATION = "sim.spreadgate.dev/exit-code"


@dataclass(frozen=True)
class KubeletConfig:
    """Delays are in seconds of the cluster's clock (virtual or real)."""

    start_delay: float = 0.0
    ready_delay: float = 0.0
    job_run_seconds: float | None = 5.0
    honor_grace_period: bool = False


def _condition(kind: str, status: str, at: str, reason: str | None = None) -> JSON:
    out: JSON = {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": at}
    if reason:
        out["reason"] = reason
    return out


def _merge_conditions(current: list[JSON], wanted: list[JSON]) -> list[JSON]:
    """Keep lastTransitionTime of conditions whose status does not change."""
    by_type = {c.get("type"): c for c in current}
    out = []
    for condition in wanted:
        old = by_type.pop(condition["type"], None)
        if old is not None and old.get("status") == condition["status"]:
            condition = {
                **condition,
                "lastTransitionTime": old.get("lastTransitionTime", condition["lastTransitionTime"]),
            }
        out.append(condition)
    out.extend(by_type.values())
    return out


class Kubelet(Controller):
    """One loop standing in for the kubelets of all nodes."""

    name = "kubelet"

    def __init__(self, *args: object, config: KubeletConfig | None = None, **kwargs: object) -> None:
        self.config = config or KubeletConfig()
        self._first_seen: dict[str, datetime] = {}
        self._started: dict[str, datetime] = {}
        self._ips: dict[str, str] = {}
        self._ip_lock = threading.Lock()
        self._next_ip = 0
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def setup(self) -> None:
        self.pod_informer = self.informers.get(PODS)
        self.node_informer = self.informers.get(NODES)
        self.pod_informer.add_handler(self._on_pod)

    def _on_pod(self, event: str, pod: JSON) -> None:
        if event == "DELETED":
            uid = str(pod["metadata"].get("uid"))
            self._first_seen.pop(uid, None)
            self._started.pop(uid, None)
            with self._ip_lock:
                self._ips.pop(uid, None)
        elif pod.get("spec", {}).get("nodeName"):
            self.enqueue(object_key(pod))

    def all_keys(self) -> Sequence[str]:
        return sorted(object_key(p) for p in self.pod_informer.items() if self._needs_work(p))

    def _needs_work(self, pod: JSON) -> bool:
        if not pod.get("spec", {}).get("nodeName"):
            return False
        if pod["metadata"].get("deletionTimestamp"):
            return True
        return pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")

    # ------------------------------------------------------------------- sync

    def sync(self, key: str) -> int:
        pod = self.pod_informer.get_key(key)
        if pod is None or not self._needs_work(pod):
            return 0
        node = self.node_informer.get(None, str(pod["spec"]["nodeName"]))
        if node is None:
            return 0  # PodGC's job
        now = self.clock.now()
        if pod["metadata"].get("deletionTimestamp"):
            return self._confirm_deletion(pod, now)
        uid = str(pod["metadata"].get("uid"))
        first_seen = self._first_seen.setdefault(uid, now)
        phase = pod.get("status", {}).get("phase", "Pending")
        if phase == "Pending":
            due = first_seen + timedelta(seconds=self.config.start_delay)
            if now < due:
                return self._later(key, due, now)
            return self._start(pod, node, now)
        if phase == "Running":
            started = self._started_at(pod, now)
            finish = self._run_seconds(pod)
            if finish is not None and now >= started + timedelta(seconds=finish):
                return self._complete(pod, now)
            writes = 0
            if not self._ready(pod):
                ready_at = started + timedelta(seconds=self.config.ready_delay)
                if now < ready_at:
                    return self._later(key, ready_at, now)
                writes += self._make_ready(pod, now)
            if finish is not None:
                self._later(key, started + timedelta(seconds=finish), now)
            return writes
        return 0

    def _later(self, key: str, due: datetime, now: datetime) -> int:
        self.queue.add_after(key, (due - now).total_seconds())
        return 0

    @staticmethod
    def _ready(pod: JSON) -> bool:
        return any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in pod.get("status", {}).get("conditions") or []
        )

    def _started_at(self, pod: JSON, now: datetime) -> datetime:
        """When the pod started: our exact memory, else its whole-second startTime."""
        uid = str(pod["metadata"].get("uid"))
        if uid in self._started:
            return self._started[uid]
        try:
            return parse_time(str(pod.get("status", {}).get("startTime", "")))
        except TimestampError:
            return now

    def _run_seconds(self, pod: JSON) -> float | None:
        annotations = pod["metadata"].get("annotations") or {}
        raw = annotations.get(RUN_SECONDS_ANNOTATION)
        if raw is not None:
            try:
                return float(raw)
            except ValueError:
                return None
        ref = controller_ref(pod)
        if (
            ref is not None
            and ref.get("kind") == "Job"
            and pod.get("spec", {}).get("restartPolicy") != "Always"
        ):
            return self.config.job_run_seconds
        return None

    def _pod_ip(self, pod: JSON) -> str:
        uid = str(pod["metadata"].get("uid"))
        with self._ip_lock:
            ip = self._ips.get(uid)
            if ip is None:
                self._next_ip += 1
                n = self._next_ip
                ip = f"10.244.{(n >> 8) & 255}.{n & 255}"
                self._ips[uid] = ip
            return ip

    @staticmethod
    def _host_ip(node: JSON) -> str:
        for address in node.get("status", {}).get("addresses") or []:
            if address.get("type") == "InternalIP":
                return str(address.get("address"))
        return "10.0.0.1"

    def _containers(
        self,
        pod: JSON,
        ready: bool,
        started_at: str,
        terminated: int | None = None,
        finished_at: str | None = None,
    ) -> list[JSON]:
        out = []
        for container in pod.get("spec", {}).get("containers") or []:
            state: JSON
            if terminated is not None:
                state = {
                    "terminated": {
                        "exitCode": terminated,
                        "reason": "Completed" if terminated == 0 else "Error",
                        "startedAt": started_at,
                        "finishedAt": finished_at,
                    }
                }
            else:
                state = {"running": {"startedAt": started_at}}
            image = str(container.get("image", ""))
            out.append(
                {
                    "name": container.get("name", ""),
                    "image": image,
                    "imageID": f"sim://{image}",
                    "containerID": f"sim://{pod['metadata'].get('uid', '')}/{container.get('name', '')}",
                    "ready": ready,
                    "started": terminated is None,
                    "restartCount": 0,
                    "state": state,
                }
            )
        return out

    def _write(self, pod: JSON, status: JSON) -> int:
        return patch_status(self.api, self.pod_informer, pod, status)

    def _start(self, pod: JSON, node: JSON, now: datetime) -> int:
        stamp = format_time(now)
        ready = self.config.ready_delay <= 0 and self._run_seconds(pod) != 0
        current = pod.get("status", {}).get("conditions") or []
        scheduled_at = next(
            (
                c.get("lastTransitionTime")
                for c in current
                if c.get("type") == "PodScheduled" and c.get("status") == "True"
            ),
            stamp,
        )
        flag = "True" if ready else "False"
        conditions = _merge_conditions(
            current,
            [
                _condition("PodReadyToStartContainers", "True", stamp),
                _condition("Initialized", "True", stamp),
                _condition("Ready", flag, stamp, None if ready else "ContainersNotReady"),
                _condition("ContainersReady", flag, stamp, None if ready else "ContainersNotReady"),
                _condition("PodScheduled", "True", str(scheduled_at)),
            ],
        )
        status: JSON = {
            "phase": "Running",
            "startTime": stamp,
            "hostIP": self._host_ip(node),
            "hostIPs": [{"ip": self._host_ip(node)}],
            "podIP": self._pod_ip(pod),
            "podIPs": [{"ip": self._pod_ip(pod)}],
            "conditions": conditions,
            "containerStatuses": self._containers(pod, ready, stamp),
        }
        writes = self._write(pod, status)
        self._started[str(pod["metadata"].get("uid"))] = now
        key = object_key(pod)
        if not ready:
            self.queue.add_after(key, self.config.ready_delay)
        finish = self._run_seconds(pod)
        if finish is not None:
            self.queue.add_after(key, finish)
        return writes

    def _make_ready(self, pod: JSON, now: datetime) -> int:
        stamp = format_time(now)
        current = pod.get("status", {}).get("conditions") or []
        conditions = _merge_conditions(
            current, [_condition("Ready", "True", stamp), _condition("ContainersReady", "True", stamp)]
        )
        started = str(pod.get("status", {}).get("startTime", stamp))
        return self._write(
            pod, {"conditions": conditions, "containerStatuses": self._containers(pod, True, started)}
        )

    def _complete(self, pod: JSON, now: datetime) -> int:
        stamp = format_time(now)
        try:
            code = int((pod["metadata"].get("annotations") or {}).get(EXIT_CODE_ANNOTATION, "0"))
        except ValueError:
            code = 1
        current = pod.get("status", {}).get("conditions") or []
        conditions = _merge_conditions(
            current,
            [
                _condition("Ready", "False", stamp, "PodCompleted"),
                _condition("ContainersReady", "False", stamp, "PodCompleted"),
            ],
        )
        started = str(pod.get("status", {}).get("startTime", stamp))
        return self._write(
            pod,
            {
                "phase": "Succeeded" if code == 0 else "Failed",
                "conditions": conditions,
                "containerStatuses": self._containers(pod, False, started, code, stamp),
            },
        )

    def _confirm_deletion(self, pod: JSON, now: datetime) -> int:
        meta = pod["metadata"]
        if self.config.honor_grace_period:
            try:
                due = parse_time(str(meta["deletionTimestamp"]))
            except TimestampError:
                due = now
            if now < due:
                return self._later(object_key(pod), due, now)
        result = delete_through(
            self.api, self.pod_informer, pod, by_uid=True, grace_period_seconds=0, tolerated=(404, 409)
        )
        return int(result is not None)
