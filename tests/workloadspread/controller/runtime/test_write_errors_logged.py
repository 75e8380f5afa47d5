"""Every failed controller write (status, pod patch, pod delete, Event) is one log record
with its cause and the fields spread, namespace, pod and write (docs/operations.md, "Logs")."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator

import pytest
import webhook_testkit
from cli_kit import run_cli
from logging_kit import root_logger_restored
from webhook_testkit import SPREADS, KubeEnv, spread
from workload_objects import pod, replicaset

from py_engine.apiclient import PODS, REPLICASETS
from py_engine.logsetup import record_fields
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.controller.reconcile import reconcile
from py_engine.workloadspread.controller.runtime.loop import SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource
from py_engine.workloadspread.controller.runtime.views import view_for
from py_engine.workloadspread.controller.runtime.writer import WriteFailed

kube_env = webhook_testkit.kube_env  # the fixture, used by name
pytestmark = pytest.mark.timeout(60)


def setup(env: KubeEnv, target: str = "web") -> tuple[SpreadController, ListedSource]:
    created = env.client.create(REPLICASETS, "default", replicaset())
    env.client.create(PODS, "default", pod("web-1", created["metadata"]["uid"]))
    env.client.create(
        SPREADS,
        "default",
        spread("ws", [{"name": "a", "maxReplicas": 1}, {"name": "b"}], target=target, kind="ReplicaSet"),
    )
    source = ListedSource(env.client)
    source.refresh()
    return SpreadController(env.client, source, RealClock()), source


def write_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith("py_engine.workloadspread.controller") and "write" in record_fields(r)
    ]


@pytest.mark.parametrize(
    ("fault", "write", "pod_name"),
    [
        ("pods:patch:error500=1", "deletion_cost", "web-1"),
        ("workloadspreads/status:update:error500=1", "status", None),
    ],
)
def test_a_failed_write_is_one_warning_with_its_cause(
    kube_env: KubeEnv, caplog: pytest.LogCaptureFixture, fault: str, write: str, pod_name: str | None
) -> None:
    controller, _ = setup(kube_env)
    kube_env.faults.set_spec(fault)
    caplog.set_level(logging.DEBUG)
    [report] = controller.step()
    assert report.outcome == "error"
    [record] = write_records(caplog)
    got = record_fields(record)
    assert record.levelno == logging.WARNING and record.getMessage() == f"{write} write failed"
    assert (got["namespace"], got["spread"], got["write"], got.get("pod")) == (
        "default",
        "ws",
        write,
        pod_name,
    )
    assert "500" in got["cause"]
    # The failure is in that record only: no other record of ours repeats the cause.
    assert [
        r
        for r in caplog.records
        if r.name.startswith("py_engine") and "500" in r.getMessage() + str(record_fields(r).get("cause"))
    ] == [record]


def test_a_failed_event_is_one_warning_and_the_sync_goes_on(
    kube_env: KubeEnv, caplog: pytest.LogCaptureFixture
) -> None:
    controller, _ = setup(kube_env, target="missing")  # TargetNotFound: an Event to record
    kube_env.faults.set_spec("events:create:error500=1")
    caplog.set_level(logging.DEBUG)
    [report] = controller.step()
    assert report.outcome == "synced" and report.writes.event == 0
    [record] = write_records(caplog)
    got = record_fields(record)
    assert record.levelno == logging.WARNING
    assert (got["namespace"], got["spread"], got["write"], got["event"]) == (
        "default",
        "ws",
        "event",
        "TargetNotFound",
    )
    assert "500" in got["cause"]


def test_a_failed_pod_delete_names_the_pod(kube_env: KubeEnv) -> None:
    controller, source = setup(kube_env)
    ws = source.spread("default", "ws")
    assert ws is not None
    result = reconcile(ws, view_for(source, ws), RealClock().now())
    result = dataclasses.replace(
        result, adoptions=[], cost_patches={}, status_changed=False, events=[], pods_to_delete=["web-1"]
    )
    kube_env.faults.set_spec("pods:delete:error500=1")
    with pytest.raises(WriteFailed) as failed:
        controller.writer.apply(ws, result)
    assert (failed.value.kind, failed.value.pod, failed.value.cause.status) == ("pod_delete", "web-1", 500)


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """`main` configures the root logger (py_engine.logsetup); put pytest's handlers back after."""
    with root_logger_restored():
        yield


def test_the_controller_cli_writes_the_failure_as_one_json_line(
    kube_env: KubeEnv, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    setup(kube_env)
    kube_env.faults.set_spec("workloadspreads/status:update:error500=1")
    once = ["--once", "--log-format", "json", "--no-united-deployments"]
    code, _, stderr = run_cli(capsys, "controller", "--kubeconfig", kube_env.kubeconfig, *once)
    assert code == 1
    err = stderr.splitlines()
    entries = [json.loads(line) for line in err if line.startswith("{")]
    assert [line for line in err if not line.startswith("{")] == []  # the summary is a record too
    [failed, summary] = entries
    assert {k: summary[k] for k in ("level", "msg", "kind", "synced", "failed")} == {
        "level": "warning",
        "msg": "synced 1 WorkloadSpread(s), 1 failed",
        "kind": "WorkloadSpread",
        "synced": 1,
        "failed": 1,
    }
    assert {k: failed[k] for k in ("level", "logger", "msg", "namespace", "spread", "write")} == {
        "level": "warning",
        "logger": "py_engine.workloadspread.controller.runtime.loop",
        "msg": "status write failed",
        "namespace": "default",
        "spread": "ws",
        "write": "status",
    }
    assert "500" in failed["cause"] and failed["ts"].endswith("Z")
