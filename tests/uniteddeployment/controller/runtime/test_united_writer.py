"""Applying a plan against a scripted API: AlreadyExists with identical data, conflict retries,
failures surfaced in the status conditions, slow-start batches, no status write when unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.apiclient import (
    DEPLOYMENTS,
    STATEFULSETS,
    AlreadyExists,
    Conflict,
    KubeError,
    Resource,
    ServerError,
)
from py_engine.semantics.clock import VirtualClock
from py_engine.uniteddeployment.controller.plan import Plan
from py_engine.uniteddeployment.controller.runtime.events import UnitedEventRecorder
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.uniteddeployment.controller.runtime.writer import UnitedWriter

pytestmark = pytest.mark.timeout(30)
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
JSON = dict[str, Any]


class ScriptedClient:
    """Records calls; `failures[(verb, name)]` lists exceptions raised by successive calls."""

    def __init__(self, stored: dict[str, JSON] | None = None) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.stored = stored or {}
        self.failures: dict[tuple[str, str], list[Exception]] = {}
        self.bodies: list[JSON] = []

    def _maybe_fail(self, verb: str, name: str) -> None:
        queue = self.failures.get((verb, name))
        if queue:
            raise queue.pop(0)

    def _name(self, obj: Mapping[str, Any]) -> str:
        return str(obj["metadata"].get("name") or obj["metadata"].get("generateName", "") + "x")

    def create(self, resource: Resource, namespace: str | None, obj: Mapping[str, Any], **_: Any) -> JSON:
        name = self._name(obj)
        self.calls.append(("create", resource.plural, name))
        self._maybe_fail("create", name)
        created = {**obj, "metadata": {**obj["metadata"], "name": name, "resourceVersion": "1"}}
        self.stored[name] = created
        return created

    def get(self, resource: Resource, namespace: str | None, name: str, **_: Any) -> JSON:
        self.calls.append(("get", resource.plural, name))
        return dict(self.stored[name])

    def _put(self, verb: str, resource: Resource, name: str, obj: Mapping[str, Any]) -> JSON:
        self.calls.append((verb, resource.plural, name))
        self.bodies.append(dict(obj))
        self._maybe_fail(verb, name)
        return dict(obj)

    def replace(
        self, resource: Resource, namespace: str | None, name: str, obj: Mapping[str, Any], **_: Any
    ) -> JSON:
        self.stored[name] = self._put("replace", resource, name, obj)
        return dict(obj)

    def replace_status(
        self, resource: Resource, namespace: str | None, name: str, obj: Mapping[str, Any], **_: Any
    ) -> JSON:
        return self._put("status", resource, name, obj)

    def patch(
        self, resource: Resource, namespace: str | None, name: str, patch: Any, patch_type: str, **_: Any
    ) -> JSON:
        self.calls.append(("patch", resource.plural, name))
        self.bodies.append({"patch": patch, "type": patch_type})
        return {}

    def delete(self, resource: Resource, namespace: str | None, name: str, **kwargs: Any) -> JSON:
        self.calls.append(("delete", resource.plural, name))
        self.bodies.append(dict(kwargs))
        self._maybe_fail("delete", name)
        return {}


class Source:
    def __init__(self) -> None:
        self.resources = {("apps", "Deployment"): DEPLOYMENTS, ("apps", "StatefulSet"): STATEFULSETS}
        self.remembered: list[JSON] = []

    def remember(self, obj: JSON) -> None:
        self.remembered.append(obj)

    def forget(self, obj: Mapping[str, Any]) -> None:
        """Nothing cached."""


UD: JSON = {
    "apiVersion": "spreadgate.dev/v1beta1",
    "kind": "UnitedDeployment",
    "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
    "status": {"replicas": 1},
}


def revision(data: Any = None) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "web-abc"},
        "data": data or {"spec": {"template": {}}},
        "revision": 1,
    }


def deployment(subset: str) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generateName": f"web-{subset}-", "labels": {"s": subset}},
        "spec": {"replicas": 1},
    }


def make_plan(**fields: Any) -> Plan:
    base: dict[str, Any] = {
        "subsets": {},
        "create": (),
        "update": (),
        "delete": (),
        "status": {"replicas": 1},
        "errors": (),
    }
    base.update(fields)
    return Plan(**base)


def writer(client: ScriptedClient) -> UnitedWriter:
    fake: Any = client
    source: Any = Source()
    return UnitedWriter(
        fake, source, UnitedMetrics(), UnitedEventRecorder(fake, VirtualClock(NOW), host="test")
    )


def test_revision_already_existing_with_identical_data_counts_as_created() -> None:
    client = ScriptedClient({"web-abc": revision()})
    client.failures[("create", "web-abc")] = [AlreadyExists(409, "AlreadyExists", "exists")]
    writes = writer(client).apply(UD, make_plan(create=(revision(),)), NOW)
    assert writes.created == 1 and not writes.errors
    assert writes.status == 0  # the status did not change


def test_revision_existing_with_other_data_is_an_error_in_the_status() -> None:
    client = ScriptedClient({"web-abc": revision({"other": True})})
    client.failures[("create", "web-abc")] = [AlreadyExists(409, "AlreadyExists", "exists")]
    writes = writer(client).apply(UD, make_plan(create=(revision(),)), NOW)
    assert writes.created == 0 and len(writes.errors) == 1
    status = client.bodies[-1]["status"]
    provisioned = next(c for c in status["conditions"] if c["type"] == "SubsetProvisioned")
    assert provisioned["status"] == "False" and provisioned["reason"] == "Error"


def test_creates_go_in_slow_start_batches_and_stop_after_a_failing_batch() -> None:
    client = ScriptedClient()
    client.failures[("create", "web-b-x")] = [ServerError(500, "InternalError", "boom")]
    plan = make_plan(create=tuple(deployment(s) for s in "abcdefg"))
    writes = writer(client).apply(UD, plan, NOW)
    created = [name for verb, _, name in client.calls if verb == "create" and name.startswith("web-")]
    # batch 1: a; batch 2: b (fails), c; nothing after the failing batch
    assert created == ["web-a-x", "web-b-x", "web-c-x"]
    assert writes.created == 2 and len(writes.errors) == 1
    events = [name for verb, plural, name in client.calls if verb == "create" and plural == "events"]
    assert len(events) == 2  # FailedUpdateSubset, and SuccessfulUpdateSubset "Create 2 Subset (Deployment)"


def test_update_conflict_reapplies_onto_a_fresh_object() -> None:
    stored = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-a-1", "resourceVersion": "9", "labels": {"theirs": "x", "s": "a"}},
        "spec": {"replicas": 1},
    }
    client = ScriptedClient({"web-a-1": stored})
    client.failures[("replace", "web-a-1")] = [Conflict(409, "Conflict", "stale")]
    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-a-1", "resourceVersion": "8", "labels": {"s": "a", "rev": "2"}},
        "spec": {"replicas": 4},
    }
    writes = writer(client).apply(UD, make_plan(update=(desired,)), NOW)
    assert writes.updated == 1 and not writes.errors
    retry = client.bodies[1]
    assert retry["metadata"]["resourceVersion"] == "9"
    assert retry["metadata"]["labels"] == {"theirs": "x", "s": "a", "rev": "2"}
    assert retry["spec"] == {"replicas": 4}


def test_update_that_keeps_conflicting_fails_after_five_attempts() -> None:
    stored = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w", "resourceVersion": "9"},
    }
    client = ScriptedClient({"w": stored})
    client.failures[("replace", "w")] = [Conflict(409, "Conflict", "stale") for _ in range(5)]
    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w"},
        "spec": {"replicas": 2},
    }
    writes = writer(client).apply(UD, make_plan(update=(desired,)), NOW)
    assert [v for v, _, n in client.calls if n == "w" and v == "replace"] == ["replace"] * 5
    assert writes.updated == 0
    updated = next(c for c in client.bodies[-1]["status"]["conditions"] if c["type"] == "SubsetUpdated")
    assert updated["status"] == "False" and "update Deployment w" in updated["message"]


def test_pods_get_only_the_reserved_label_and_deletes_propagate_in_background() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "labels": {"app": "web", "spreadgate.dev/united-deployment-reserved-pod": "true"},
        },
        "spec": {"nodeName": "n"},
    }
    gone = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"namespace": "default", "name": "old"},
    }
    client = ScriptedClient()
    writes = writer(client).apply(UD, make_plan(update=(pod,), delete=(gone,)), NOW)
    assert writes.pod_labels == 1 and writes.deleted == 1
    patch = next(b for b in client.bodies if "patch" in b)
    assert patch == {
        "patch": {"metadata": {"labels": {"spreadgate.dev/united-deployment-reserved-pod": "true"}}},
        "type": "merge",
    }
    assert {"propagation_policy": "Background"} in client.bodies


def test_status_conflict_retries_with_the_fresh_resource_version() -> None:
    client = ScriptedClient({"web": {**UD, "metadata": {**UD["metadata"], "resourceVersion": "8"}}})
    client.failures[("status", "web")] = [Conflict(409, "Conflict", "stale")]
    writes = writer(client).apply(UD, make_plan(status={"replicas": 3}), NOW)
    assert writes.status == 1
    assert [b["metadata"]["resourceVersion"] for b in client.bodies] == ["7", "8"]
    assert client.bodies[-1]["status"] == {"replicas": 3}


def test_status_write_failing_raises_for_a_requeue() -> None:
    client = ScriptedClient()
    client.failures[("status", "web")] = [ServerError(500, "InternalError", "down")]
    with pytest.raises(KubeError):
        writer(client).apply(UD, make_plan(status={"replicas": 3}), NOW)
