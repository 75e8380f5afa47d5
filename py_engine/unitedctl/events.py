"""Events on a UnitedDeployment, with Kruise's reasons (one fixed: Kruise's
`Failed SpecifySubsetReplicas` has a space, here `FailedSpecifySubsetReplicas`).

Recording is best effort: a failure is logged, never raised.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping
from typing import Any

from py_engine.apiclient import KubeClient, KubeError, Resource
from py_engine.controller.events import NORMAL, WARNING, Event
from py_engine.logsetup import fields
from py_engine.semantics.clock import Clock
from py_engine.semantics.timeutil import format_micro_time, format_time

log = logging.getLogger(__name__)

EVENTS = Resource("", "v1", "events", True, "Event")
COMPONENT = "spreadgate-united-controller"
SUCCESSFUL_UPDATE_SUBSET = "SuccessfulUpdateSubset"
FAILED_UPDATE_SUBSET = "FailedUpdateSubset"
FAILED_REVISION_PROVISION = "FailedRevisionProvision"
FAILED_SPECIFY_SUBSET_REPLICAS = "FailedSpecifySubsetReplicas"
FAILED_FIND_SUBSETS = "FailedFindSubsets"
INVALID_SPEC = "InvalidSpec"
_SEQ = itertools.count(1)

__all__ = ["NORMAL", "WARNING", "Event", "UnitedEventRecorder"]


class UnitedEventRecorder:
    """Creates core/v1 Events whose involved object is the UnitedDeployment."""

    def __init__(self, client: KubeClient, clock: Clock, host: str | None = None) -> None:
        self.client, self.clock = client, clock
        self.host = host or os.uname().nodename

    def record(self, ud: Mapping[str, Any], event: Event) -> bool:
        raw_meta = ud.get("metadata")
        m: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
        ns, name = str(m.get("namespace") or "default"), str(m.get("name") or "")
        now = self.clock.now()
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{int(now.timestamp() * 1e6):x}{next(_SEQ):04x}", "namespace": ns},
            "involvedObject": {"apiVersion": ud.get("apiVersion"), "kind": ud.get("kind") or "UnitedDeployment",
                               "namespace": ns, "name": name, "uid": m.get("uid"),
                               "resourceVersion": m.get("resourceVersion")},
            "type": event.type, "reason": event.reason, "message": event.message,
            "source": {"component": COMPONENT, "host": self.host},
            "reportingComponent": COMPONENT, "reportingInstance": self.host,
            "firstTimestamp": format_time(now), "lastTimestamp": format_time(now),
            "eventTime": format_micro_time(now), "action": "Reconcile", "count": 1,
        }
        try:
            self.client.create(EVENTS, ns, body)
        except KubeError as exc:
            log.warning("event %s not recorded", event.reason, extra=fields(
                uniteddeployment=f"{ns}/{name}", write="event", event=event.reason, cause=str(exc)))
            return False
        return True
