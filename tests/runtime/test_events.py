"""The Event both controllers record (py_engine/workloadspread/controller/runtime/events.py): its body, unique
names at one instant, and a refused Event logged once, on the recorder's own logger with its own
fields, never raised. Each test runs through both subclasses, the WorkloadSpread writer's
`EventRecorder` and py_engine/uniteddeployment/controller/runtime/events.py's `UnitedEventRecorder`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.apiclient import KubeError, Resource, ServerError
from py_engine.logsetup import record_fields
from py_engine.model.resource import SPREADS
from py_engine.runtime.events import EVENTS, ObjectEventRecorder, event_body
from py_engine.semantics.clock import VirtualClock
from py_engine.semantics.events import WARNING, Event
from py_engine.uniteddeployment.controller.runtime.events import UnitedEventRecorder
from py_engine.workloadspread.controller.runtime.writer import EventRecorder

pytestmark = pytest.mark.timeout(30)
JSON = dict[str, Any]
NOW = datetime(2026, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)
EVENT = Event(WARNING, "TargetNotFound", "Deployment default/web does not exist")
META = {"name": "web", "namespace": "prod", "uid": "u-1", "resourceVersion": "7"}


@dataclass(frozen=True)
class Case:
    """One recorder and what it must put in the Event and the failure's log record."""

    recorder: type[ObjectEventRecorder]
    obj: JSON
    component: str
    untyped: tuple[Any, Any]  # the involved (apiVersion, kind) of an object listed without them
    logger: str
    fields: JSON


SPREAD_CASE = Case(
    EventRecorder,
    {"apiVersion": SPREADS.api_version, "kind": "WorkloadSpread", "metadata": META},
    "spreadgate-controller",
    (SPREADS.api_version, "WorkloadSpread"),
    "py_engine.workloadspread.controller.runtime.writer",
    {"namespace": "prod", "spread": "web"},
)
UNITED_CASE = Case(
    UnitedEventRecorder,
    {"apiVersion": "spreadgate.dev/v1beta1", "kind": "UnitedDeployment", "metadata": META},
    "spreadgate-united-controller",
    (None, "UnitedDeployment"),
    "py_engine.uniteddeployment.controller.runtime.events",
    {"uniteddeployment": "prod/web"},
)
CASES = pytest.mark.parametrize(
    "case", [SPREAD_CASE, UNITED_CASE], ids=["workloadspread", "uniteddeployment"]
)


class EventClient:
    """Keeps the Events created; raises `failure` instead when one is set."""

    def __init__(self, failure: KubeError | None = None) -> None:
        self.created: list[tuple[Resource, str | None, JSON]] = []
        self.failure = failure

    def create(self, resource: Resource, namespace: str | None, obj: JSON, **_: Any) -> JSON:
        if self.failure is not None:
            raise self.failure
        self.created.append((resource, namespace, obj))
        return obj


def recorder(case: Case, client: EventClient) -> ObjectEventRecorder:
    fake: Any = client
    return case.recorder(fake, VirtualClock(NOW), host="node-1")


def test_the_body_names_the_object_the_reporter_and_the_instant() -> None:
    body = event_body(
        {"metadata": META}, EVENT, api_version="g/v1", kind="K", component="c", host="node-1", now=NOW, seq=2
    )
    assert body == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"web.{int(NOW.timestamp() * 1e6):x}0002", "namespace": "prod"},
        "involvedObject": {
            "apiVersion": "g/v1",
            "kind": "K",
            "namespace": "prod",
            "name": "web",
            "uid": "u-1",
            "resourceVersion": "7",
        },
        "type": "Warning",
        "reason": "TargetNotFound",
        "message": "Deployment default/web does not exist",
        "source": {"component": "c", "host": "node-1"},
        "reportingComponent": "c",
        "reportingInstance": "node-1",
        "firstTimestamp": "2026-06-01T12:00:00Z",
        "lastTimestamp": "2026-06-01T12:00:00Z",
        "eventTime": "2026-06-01T12:00:00.123456Z",
        "action": "Reconcile",
        "count": 1,
    }


def test_an_object_without_a_namespace_gets_its_event_in_default() -> None:
    body = event_body(
        {"metadata": {"name": "web"}},
        EVENT,
        api_version=None,
        kind="K",
        component="c",
        host="h",
        now=NOW,
        seq=1,
    )
    assert body["metadata"]["namespace"] == body["involvedObject"]["namespace"] == "default"
    assert body["involvedObject"]["uid"] is None


@CASES
def test_the_event_involves_the_object_and_names_its_controller(case: Case) -> None:
    client = EventClient()
    assert recorder(case, client).record(case.obj, EVENT)
    [(resource, namespace, body)] = client.created
    assert resource == EVENTS and namespace == "prod"
    assert body == event_body(
        case.obj,
        EVENT,
        api_version=case.obj["apiVersion"],
        kind=case.obj["kind"],
        component=case.component,
        host="node-1",
        now=NOW,
        seq=int(body["metadata"]["name"][-4:], 16),
    )


@CASES
def test_an_object_listed_without_its_type_is_still_named_by_kind(case: Case) -> None:
    client = EventClient()
    recorder(case, client).record({"metadata": META}, EVENT)
    [(_, _, body)] = client.created
    assert (body["involvedObject"]["apiVersion"], body["involvedObject"]["kind"]) == case.untyped


@CASES
def test_events_recorded_at_one_instant_get_distinct_names(case: Case) -> None:
    client = EventClient()
    events = recorder(case, client)
    for _ in range(3):
        events.record(case.obj, EVENT)
    names = [body["metadata"]["name"] for _, _, body in client.created]
    assert len(set(names)) == 3 and all(name.startswith("web.") for name in names)


@CASES
def test_a_refused_event_is_logged_once_with_its_fields_and_not_raised(
    case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    client = EventClient(ServerError(500, "InternalError", "etcd is down"))
    with caplog.at_level(logging.WARNING):
        assert recorder(case, client).record(case.obj, EVENT) is False
    [record] = [r for r in caplog.records if r.getMessage() == "event TargetNotFound not recorded"]
    assert record.name == case.logger
    fields = dict(record_fields(record))
    assert "etcd is down" in fields.pop("cause")
    assert fields == {**case.fields, "write": "event", "event": "TargetNotFound"}
    assert list(fields) == [*case.fields, "write", "event"]
