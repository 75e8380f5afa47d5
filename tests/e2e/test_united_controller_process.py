"""`spreadgate controller --leader-elect` as a process: the UnitedDeployment controller starts
working once the process holds the (one) Lease, and stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until
from united_kit import UDS, controller_process, pools, replicas_of, term, united

from py_engine.assembled_stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
SUBSETS: list[dict[str, Any]] = [
    {"name": "a", "maxReplicas": 1, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def test_leader_elected_process_runs_the_united_controller(tmp_path: Path) -> None:
    with Stack(pools("a", "b"), virtual=False, with_controller=False, workdir=tmp_path) as stack:
        stack.create(UDS, united("web", 3, SUBSETS))
        log = tmp_path / "controller.log"
        with controller_process(stack, log, "--leader-elect", "--lease-namespace", "default") as proc:
            try:
                wait_until(lambda: replicas_of(stack) == {"a": 1, "b": 2}, 60, "the subset Deployments")
            except TimeoutError:
                raise AssertionError(log.read_text(encoding="utf-8")) from None
            lease = stack.api.get("coordination.k8s.io/v1/leases", "default", "spreadgate-controller")
            assert lease["spec"]["holderIdentity"]
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        err = log.read_text(encoding="utf-8")
        assert proc.returncode == 0, err
        assert '"united_deployments":true' in err
        assert "default/web" in err  # the sync's structured log line names the UnitedDeployment
