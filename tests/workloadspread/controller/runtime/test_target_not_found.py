"""A spread whose target is missing or of a kind the controller does not read says so.

The pure core adds the `TargetNotFound` condition and one Warning Event when it
appears; the loop writes both, logs once with structured fields, and removes the
condition (with a Normal Event) once the target exists.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import webhook_testkit
import yaml
from webhook_testkit import SPREADS, KubeEnv, spread

from benchmarks.kube_objects import workload
from py_engine.apiclient import REPLICASETS, Resource
from py_engine.logsetup import record_fields
from py_engine.model.workloads import parse_whitelist
from py_engine.resources import WORKLOADSPREAD_CRD, read_text
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.controller import reconcile
from py_engine.workloadspread.controller.reconcile import ClusterView
from py_engine.workloadspread.controller.runtime.loop import SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource
from py_engine.workloadspread.controller.target import CONDITION, KIND_NOT_ALLOWED, WORKLOAD_NOT_FOUND

kube_env = webhook_testkit.kube_env  # the fixture, used by name
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
LATER = datetime(2024, 6, 1, 12, 5, tzinfo=UTC)
EVENTS = Resource("", "v1", "events", True, "Event")


def replicaset() -> dict[str, Any]:
    return workload("ReplicaSet", "web", namespace="default", container="app", image="nginx:1")


def target_conditions(status: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in status.get("conditions") or [] if c.get("type") == CONDITION]


def test_a_missing_workload_gets_the_condition_and_one_warning_event() -> None:
    obj = spread("ws", [{"name": "a"}], kind="ReplicaSet")
    result = reconcile(obj, ClusterView(workload=None), NOW)
    [condition] = target_conditions(result.status)
    assert (condition["status"], condition["reason"]) == ("True", WORKLOAD_NOT_FOUND)
    assert "ReplicaSet default/web (apps/v1) does not exist" in condition["message"]
    assert [(e.type, e.reason) for e in result.events] == [("Warning", CONDITION)]
    assert result.target_problem is not None and result.target_problem_new

    again = reconcile({**obj, "status": result.status}, ClusterView(workload=None), LATER)
    assert target_conditions(again.status) == [condition]  # the transition time is kept
    assert again.events == [] and not again.target_problem_new and not again.status_changed

    found = reconcile({**obj, "status": result.status}, ClusterView(workload=replicaset()), LATER)
    assert target_conditions(found.status) == [] and found.target_problem is None
    assert [(e.type, e.reason) for e in found.events] == [("Normal", "TargetFound")]
    assert found.status_changed


def test_a_custom_kind_outside_the_whitelist_is_not_allowed_and_inside_it_is_looked_up() -> None:
    obj = spread("ws", [{"name": "a"}], kind="GameServerSet", api_version="game.kruise.io/v1alpha1")
    result = reconcile(obj, ClusterView(workload=None), NOW)
    [condition] = target_conditions(result.status)
    assert condition["reason"] == KIND_NOT_ALLOWED and "whitelist" in condition["message"]
    whitelist = parse_whitelist(
        {"workloads": [{"Group": "game.kruise.io", "Kind": "GameServerSet", "replicasPath": "spec.replicas"}]}
    )
    listed = reconcile(obj, ClusterView(workload=None, whitelist=whitelist), NOW)
    assert [c["reason"] for c in target_conditions(listed.status)] == [WORKLOAD_NOT_FOUND]


def test_other_conditions_are_kept_and_the_shipped_crd_stores_the_condition() -> None:
    foreign = {"type": "Example", "status": "True"}
    obj = {**spread("ws", [{"name": "a"}], kind="ReplicaSet"), "status": {"conditions": [foreign]}}
    result = reconcile(obj, ClusterView(workload=replicaset()), NOW)
    assert result.status["conditions"] == [foreign]
    crd = yaml.safe_load(read_text(WORKLOADSPREAD_CRD))
    status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert status["conditions"]["items"]["required"] == ["type", "status"]
    assert set(status["conditions"]["items"]["properties"]) >= {
        "type",
        "status",
        "reason",
        "message",
        "lastTransitionTime",
    }


def test_the_loop_writes_the_condition_and_event_logs_once_and_clears_it(
    kube_env: KubeEnv, caplog: pytest.LogCaptureFixture
) -> None:
    kube_env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}], kind="ReplicaSet"))
    source = ListedSource(kube_env.client)
    controller = SpreadController(kube_env.client, source, RealClock())
    with caplog.at_level(logging.INFO, logger="py_engine.workloadspread.controller.runtime.loop"):
        for _ in range(2):
            source.refresh()
            [report] = controller.step()
            assert report.outcome == "synced"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert (
        record_fields(warnings[0])["spread"] == "ws" and record_fields(warnings[0])["namespace"] == "default"
    )
    assert "does not exist" in str(record_fields(warnings[0])["cause"])
    status = kube_env.client.get(SPREADS, "default", "ws")["status"]
    assert [c["reason"] for c in target_conditions(status)] == [WORKLOAD_NOT_FOUND]
    events = kube_env.client.list(EVENTS, "default")["items"]
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", CONDITION)]
    assert events[0]["involvedObject"]["name"] == "ws"

    kube_env.client.create(REPLICASETS, "default", replicaset())
    source.refresh()
    controller.step()
    status = kube_env.client.get(SPREADS, "default", "ws")["status"]
    assert target_conditions(status) == []
    reasons = [e["reason"] for e in kube_env.client.list(EVENTS, "default")["items"]]
    assert sorted(reasons) == sorted([CONDITION, "TargetFound"])
