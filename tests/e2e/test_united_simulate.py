"""`spreadgate simulate` on the UnitedDeployment scenarios (`unitedDeployment:` instead of
`workload:` + `workloadSpread:`): the two shipped case studies, HTML output, and parse errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import SCENARIOS, simulate_steps

from py_engine.cli import main
from py_engine.cli.scenario import ScenarioError
from py_engine.cli.scenarios import load_scenario, parse_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def test_onprem_then_serverless_with_hpa_scaling_and_an_unschedulable_pool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    steps = simulate_steps("ud-onprem-then-serverless", capsys)
    assert [(s["replicas"], s["subsets"]["on-prem"], s["subsets"]["serverless"]) for s in steps] == [
        (2, 2, 0),
        (3, 3, 0),
        (8, 4, 4),
        (5, 4, 1),
        (5, 4, 1),
        (5, 4, 1),
        (2, 2, 0),
        (6, 2, 4),
        (6, 2, 4),
    ]
    assert {p["subset"] for p in steps[3]["removed"]} == {"serverless"}  # scale-down: the last subset first
    assert all(s["pending"] == 0 for s in steps)  # no pod ever waited for the tainted pool
    assert steps[-1]["time"] >= 90
    assert steps[2]["caps"] == {"on-prem": 4, "serverless": None} and not steps[2]["overCap"]


def test_kruise_timing_leaves_pods_pending_for_the_critical_time(capsys: pytest.CaptureFixture[str]) -> None:
    steps = simulate_steps("ud-onprem-then-serverless-kruise-timing", capsys)
    assert [
        (s["time"], s["subsets"]["on-prem"], s["subsets"]["serverless"], s["pending"]) for s in steps[3:]
    ] == [(0, 4, 2, 2), (59, 4, 2, 2), (61, 2, 4, 0)]
    assert {p["subset"] for p in steps[-1]["removed"]} == {"on-prem"}


def test_cpu_platforms_roll_out_and_a_cordoned_pool_leaves_pods_pending(
    capsys: pytest.CaptureFixture[str],
) -> None:
    steps = simulate_steps("ud-cpu-platforms", capsys)
    assert [list(s["subsets"].values()) for s in steps] == [
        [5, 3, 2],
        [10, 6, 4],
        [10, 6, 4],
        [10, 6, 4],
        [10, 6, 4],
        [15, 9, 6],
    ]
    assert len(steps[2]["removed"]) == 20 and steps[2]["added"] == 20  # every platform rolled
    assert steps[-1]["pending"] == 3


def test_html_report_of_a_united_scenario(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["simulate", str(SCENARIOS / "ud-cpu-platforms.yaml"), "-o", "html", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert (
        "<svg" in page
        and 'data-subset="arm"' in page
        and "http" not in page.replace("http://www.w3.org/2000/svg", "")
    )


def _base() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((SCENARIOS / "ud-cpu-platforms.yaml").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(workload={"kind": "Deployment"}), "exclusive"),
        (lambda d: d["unitedDeployment"].update(kind="Deployment"), "must be a UnitedDeployment"),
        (
            lambda d: d["unitedDeployment"]["spec"].update(
                template={"cloneSetTemplate": d["unitedDeployment"]["spec"]["template"]["deploymentTemplate"]}
            ),
            "runs the pods of",
        ),
        (lambda d: d["unitedDeployment"]["spec"]["topology"]["subsets"][0].update(name="Intel"), "DNS-1123"),
        (lambda d: d.update(steps=[{"scale": -1}]), "non-negative"),
    ],
)
def test_invalid_united_scenarios_are_one_line_errors(change: Any, message: str) -> None:
    data = _base()
    change(data)
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(data, "x.yaml")


def test_the_shipped_united_scenarios_parse() -> None:
    for name in ("ud-onprem-then-serverless", "ud-onprem-then-serverless-kruise-timing", "ud-cpu-platforms"):
        scenario = load_scenario(SCENARIOS / f"{name}.yaml")
        assert scenario.united is not None and scenario.workload == {}
