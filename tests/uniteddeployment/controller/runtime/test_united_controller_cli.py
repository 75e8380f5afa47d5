"""`spreadgate controller --once` syncs UnitedDeployments too (unless --no-united-deployments),
and skips them on a cluster without the UnitedDeployment CRD."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from united_kit import UDS, pools, replicas_of, term, united

from py_engine.assembled_stack import Stack
from py_engine.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
SUBSETS: list[dict[str, Any]] = [
    {"name": "a", "maxReplicas": 1, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def test_once_syncs_united_deployments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Stack(pools("a", "b"), with_controller=False, workdir=tmp_path) as stack:
        stack.create(UDS, united("web", 3, SUBSETS))
        kubeconfig = str(stack.cluster.kubeconfig_path)
        assert main(["controller", "--kubeconfig", kubeconfig, "--once", "--no-united-deployments"]) == 0
        assert "UnitedDeployment" not in capsys.readouterr().err
        assert replicas_of(stack) == {}
        assert main(["controller", "--kubeconfig", kubeconfig, "--once"]) == 0
        out = capsys.readouterr()
        assert "default/web: synced created=3" in out.out  # the revision and two Deployments
        assert "synced 1 UnitedDeployment(s), 0 failed" in out.err
        assert replicas_of(stack) == {"a": 1, "b": 2}
        assert stack.api.get(UDS, "default", "web")["status"]["subsetStatuses"][1]["replicas"] == 2


def test_once_without_the_crd_skips_united_deployments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Stack(pools("a"), with_controller=False, united=False, workdir=tmp_path) as stack:
        assert main(["controller", "--kubeconfig", str(stack.cluster.kubeconfig_path), "--once"]) == 0
        assert "no UnitedDeployment CRD in the cluster" in capsys.readouterr().err


def test_once_runs_both_controllers_on_the_stepped_manager(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--once` composes its controllers as the daemon does, through a Manager (issue 27): one
    stepped pass of each, WorkloadSpreads first."""
    from py_engine.runtime.stepped import SteppedManager

    stepped: list[str] = []
    step = SteppedManager.step_controller

    def recording(self: SteppedManager, controller: Any) -> list[Any]:
        stepped.append(controller.name)
        return step(self, controller)

    monkeypatch.setattr(SteppedManager, "step_controller", recording)
    with Stack(pools("a", "b"), with_controller=False, workdir=tmp_path) as stack:
        stack.create(UDS, united("web", 3, SUBSETS))
        assert main(["controller", "--kubeconfig", str(stack.cluster.kubeconfig_path), "--once"]) == 0
        assert "synced 1 UnitedDeployment(s), 0 failed" in capsys.readouterr().err
    assert stepped == ["workloadspread", "uniteddeployment"]
