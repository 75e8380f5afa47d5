"""Events the built-in controllers, the scheduler and the kubelet record, as Kubernetes records them.

`kubectl describe deploy/rs/pod` reads `core/v1` Events whose `involvedObject` is the object: a
cluster shows `ScalingReplicaSet` on a Deployment, `SuccessfulCreate`/`SuccessfulDelete` on a
ReplicaSet, `Scheduled`/`FailedScheduling` on a pod. Kubernetes' recorder is best effort (a
failed write is dropped, never retried into the caller) and folds a repeat of the same
(object, type, reason, message) into one Event whose `count` and `lastTimestamp` grow; this one
does the same, remembering at most `MAX_TRACKED` recent Events to fold into.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from py_engine.semantics.clock import Clock
from py_engine.semantics.timeutil import format_time
from py_engine.sim.apiserver import ClusterAPI
from py_engine.sim.interface import JSON, ApiError

__all__ = ["MAX_TRACKED", "EventRecorder"]

EVENTS = "v1/events"
MAX_TRACKED = 4096
log = logging.getLogger(__name__)


class EventRecorder:
    """Records Events from one component (`source.component`, e.g. `deployment-controller`)."""

    def __init__(self, api: ClusterAPI, clock: Clock, component: str) -> None:
        self.api = api
        self.clock = clock
        self.component = component
        self._recent: OrderedDict[tuple[str, str, str, str], tuple[str, str, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._serial = 0

    def normal(self, obj: JSON, reason: str, message: str) -> None:
        self.record(obj, "Normal", reason, message)

    def warning(self, obj: JSON, reason: str, message: str) -> None:
        self.record(obj, "Warning", reason, message)

    def record(self, obj: JSON, event_type: str, reason: str, message: str) -> None:
        """Create the Event, or fold it into the same one recorded before; never raises."""
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        key = (str(meta.get("uid") or meta.get("name")), event_type, reason, message)
        now = format_time(self.clock.now())
        with self._lock:
            known = self._recent.pop(key, None)
            if known is None:
                self._serial += 1
                serial = self._serial
        try:
            if known is not None:
                name, event_namespace, count = known
                self.api.patch(
                    EVENTS, event_namespace, name, {"count": count + 1, "lastTimestamp": now}, "merge"
                )
                remembered = (name, event_namespace, count + 1)
            else:
                name = f"{meta.get('name')}.{int(self.clock.now().timestamp() * 1e9):x}{serial:04x}"
                self.api.create(EVENTS, namespace, self._event(obj, name, event_type, reason, message, now))
                remembered = (name, namespace, 1)
        except ApiError as exc:  # best effort, as Kubernetes' recorder: the caller's work goes on
            log.debug("event not recorded", extra={"reason": reason, "error": str(exc)})
            return
        with self._lock:
            self._recent[key] = remembered
            while len(self._recent) > MAX_TRACKED:
                self._recent.popitem(last=False)

    def _event(self, obj: JSON, name: str, event_type: str, reason: str, message: str, now: str) -> JSON:
        meta = obj.get("metadata") or {}
        involved = {
            "apiVersion": obj.get("apiVersion", "v1"),
            "kind": obj.get("kind", ""),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        }
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name},
            "involvedObject": {key: value for key, value in involved.items() if value is not None},
            "type": event_type,
            "reason": reason,
            "message": message,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
