"""`spreadgate controller`: --once against an API server, and argument errors."""

from __future__ import annotations

import pytest
import webhook_testkit
from webhook_testkit import SPREADS, KubeEnv, spread

from benchmarks.kube_objects import workload_spread
from py_engine.cli import main

kube_env = webhook_testkit.kube_env  # the fixture, used by name


def test_once_syncs_every_spread_and_exits_0(kube_env: KubeEnv, capsys: pytest.CaptureFixture[str]) -> None:
    kube_env.client.create(SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 2}, {"name": "b"}]))
    assert main(["controller", "--kubeconfig", kube_env.kubeconfig, "--once"]) == 0
    out = capsys.readouterr()
    assert "default/ws: synced status=1" in out.out
    assert "synced 1 WorkloadSpread(s), 0 failed" in out.err
    status = kube_env.client.get(SPREADS, "default", "ws")["status"]
    assert [(s["name"], s["missingReplicas"]) for s in status["subsetStatuses"]] == [("a", 2), ("b", -1)]


def test_once_reports_a_missing_target(kube_env: KubeEnv, capsys: pytest.CaptureFixture[str]) -> None:
    kube_env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}], target="absent"))
    assert main(["controller", "--kubeconfig", kube_env.kubeconfig, "--once"]) == 0
    out = capsys.readouterr().out
    assert (
        "default/ws: TargetNotFound (WorkloadNotFound): "
        "target Deployment default/absent (apps/v1) does not exist" in out
    )
    status = kube_env.client.get(SPREADS, "default", "ws")["status"]
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("TargetNotFound", "WorkloadNotFound")
    ]


def test_once_reports_a_failed_sync_with_exit_1(
    kube_env: KubeEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    # The schema admits it (maxReplicas is int-or-string); the webhook, absent here, would not.
    kube_env.client.create(SPREADS, "default", workload_spread("bad", [{"name": "a", "maxReplicas": "half"}]))
    assert main(["controller", "--kubeconfig", kube_env.kubeconfig, "--once"]) == 1
    assert "default/bad: error" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "--workers must be at least 1"),
        (["--kubeconfig", "/nonexistent/kubeconfig"], "--kubeconfig /nonexistent/kubeconfig: no such file"),
        (["--resync-period", "-1"], "--resync-period must be positive"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["controller", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spreadgate controller: error: ") and message in err and "Traceback" not in err
