"""core/v1 Events on the objects the controllers reconcile, for any of them.

The WorkloadSpread writer (`py_engine.workloadspread.controller.runtime.writer.EventRecorder`)
and the UnitedDeployment controller
(`py_engine.uniteddeployment.controller.runtime.events.UnitedEventRecorder`) record the same
Event body, differing only in the involved object's kind, the reporting component and the
log fields of a failure. `event_body` builds it (pure: the time and the sequence number are passed in);
`ObjectEventRecorder` creates it. Recording is best effort: a failed Event is logged
once, on the subclass's logger, and never raised, so it cannot fail a sync.

The name is `<object>.<microseconds since the epoch, hex><sequence, 4 hex digits>`: unique
per process even for Events recorded at one instant (a virtual clock need not advance
between them).
"""

from __future__ import annotations

import itertools
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from py_engine.apiclient import KubeClient, KubeError, Resource
from py_engine.logsetup import fields
from py_engine.semantics.clock import Clock
from py_engine.semantics.events import Event
from py_engine.semantics.objects import meta
from py_engine.semantics.timeutil import format_micro_time, format_time

EVENTS = Resource("", "v1", "events", True, "Event")
_SEQ = itertools.count(1)


def event_body(
    obj: Mapping[str, Any],
    event: Event,
    *,
    api_version: Any,
    kind: Any,
    component: str,
    host: str,
    now: datetime,
    seq: int,
) -> dict[str, Any]:
    """The Event recording `event` on `obj`, whose `apiVersion`/`kind` are given (the object
    as listed may lack them), reported by `component` on `host` at `now`."""
    m = meta(obj)
    ns, name = str(m.get("namespace") or "default"), str(m.get("name") or "")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{int(now.timestamp() * 1e6):x}{seq:04x}", "namespace": ns},
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "namespace": ns,
            "name": name,
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
        },
        "type": event.type,
        "reason": event.reason,
        "message": event.message,
        "source": {"component": component, "host": host},
        "reportingComponent": component,
        "reportingInstance": host,
        "firstTimestamp": format_time(now),
        "lastTimestamp": format_time(now),
        "eventTime": format_micro_time(now),
        "action": "Reconcile",
        "count": 1,
    }


class ObjectEventRecorder(ABC):
    """Creates Events on one kind of object (see the module docstring). Subclasses name the
    `component`, the `log`ger, the involved object's type and the fields a failure is logged with."""

    component: ClassVar[str]
    log: ClassVar[logging.Logger]

    def __init__(self, client: KubeClient, clock: Clock, host: str | None = None) -> None:
        self.client, self.clock = client, clock
        self.host = host or os.uname().nodename

    @abstractmethod
    def involved_type(self, obj: Mapping[str, Any]) -> tuple[Any, Any]:
        """The involved object's (apiVersion, kind)."""

    @abstractmethod
    def failure_fields(self, namespace: str, name: str) -> dict[str, Any]:
        """The log fields naming the object, for a failed Event."""

    def record(self, obj: Mapping[str, Any], event: Event) -> bool:
        """Create the Event; False (logged) when the API refuses it."""
        api_version, kind = self.involved_type(obj)
        body = event_body(
            obj,
            event,
            api_version=api_version,
            kind=kind,
            component=self.component,
            host=self.host,
            now=self.clock.now(),
            seq=next(_SEQ),
        )
        ns, name = body["metadata"]["namespace"], body["involvedObject"]["name"]
        try:
            self.client.create(EVENTS, ns, body)
        except KubeError as exc:
            self.log.warning(
                "event %s not recorded",
                event.reason,
                extra=fields(
                    **self.failure_fields(ns, name), write="event", event=event.reason, cause=str(exc)
                ),
            )
            return False
        return True
