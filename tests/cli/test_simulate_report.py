"""`spreadgate simulate` without a cluster: scenario checks and the report, read as a picture.

No browser can be relied on here, so the HTML chart is checked as what a reader
sees in it: the SVG is parsed and its parts located (legend text inside the
picture, one distinct look per series, step names on the x axis, gridlines,
cap lines, red rings on points above their cap).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import error_on_file

from py_engine.cli import main
from py_engine.cli.scenario import ScenarioError
from py_engine.cli.scenario_report import CHAR_WIDTH, nice_step, render_html, render_table
from py_engine.cli.scenario_run import StepReport, resolved_caps
from py_engine.cli.scenarios import load_scenario, parse_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "manifests" / "examples" / "scenarios"
SVG = "{http://www.w3.org/2000/svg}"


def _zones() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((SCENARIOS / "zones-20-20-60.yaml").read_text(encoding="utf-8"))
    return data


def _report(index: int, name: str, subsets: dict[str, int], caps: dict[str, int | None]) -> StepReport:
    return StepReport(index, name, float(index), sum(subsets.values()), subsets, {}, {}, 0, {}, [], 0, caps)


REPORTS = [
    _report(0, "initial", {"on-premises-pool": 0, "elastic": 0}, {"on-premises-pool": 4, "elastic": None}),
    _report(1, "scale to 6", {"on-premises-pool": 3, "elastic": 3}, {"on-premises-pool": 4, "elastic": None}),
    _report(
        2, "lower the cap", {"on-premises-pool": 3, "elastic": 3}, {"on-premises-pool": 2, "elastic": None}
    ),
]


def _svg(reports: list[StepReport]) -> ET.Element:
    page = render_html(parse_scenario(_zones(), "zones.yaml"), reports)
    match = re.search(r"<svg.*</svg>", page, re.S)
    assert match is not None
    return ET.fromstring(match.group(0))


def test_legend_names_are_whole_and_inside_the_picture() -> None:
    svg = _svg(REPORTS)
    width = float(svg.attrib["width"])
    legends = svg.findall(f".//{SVG}g[@class='legend']")
    assert [g.attrib["data-subset"] for g in legends] == ["on-premises-pool", "elastic"]
    for group in legends:
        text = group.find(f"{SVG}text")
        assert text is not None and text.text == group.attrib["data-subset"]
        assert float(text.attrib["x"]) + len(text.text) * CHAR_WIDTH <= width


def test_equal_series_look_different() -> None:
    svg = _svg(REPORTS)
    series = svg.findall(f".//{SVG}polyline[@class='series']")
    looks = {(s.attrib["stroke"], s.attrib.get("stroke-dasharray", "")) for s in series}
    assert len(series) == 2 and len(looks) == 2
    shapes = {m.attrib["data-shape"] for m in svg.iter() if m.attrib.get("class") == "marker"}
    assert shapes == {"circle", "square"}
    # Steps 1 and 2 have equal values: both series' points are drawn there, the later one smaller.
    assert series[0].attrib["points"].split()[1:] == series[1].attrib["points"].split()[1:]


def test_x_axis_names_every_step_and_y_axis_has_gridlines() -> None:
    svg = _svg(REPORTS)
    labels = [t.text for t in svg.iter(f"{SVG}text") if t.attrib.get("class") == "x-label"]
    assert labels == ["0: initial", "1: scale to 6", "2: lower the cap"]
    grid = [line for line in svg.iter(f"{SVG}line") if line.attrib.get("class") == "grid"]
    assert len(grid) >= 3
    ticks = [t.text for t in svg.iter(f"{SVG}text") if t.attrib.get("class") == "y-label"]
    assert ticks[0] == "0" and len(ticks) == len(grid)


def test_caps_are_drawn_and_points_above_them_ringed() -> None:
    svg = _svg(REPORTS)
    caps = [p for p in svg.iter(f"{SVG}polyline") if p.attrib.get("class") == "cap"]
    assert [c.attrib["data-subset"] for c in caps] == ["on-premises-pool"]
    rings = [c for c in svg.iter(f"{SVG}circle") if c.attrib.get("class") == "over-cap"]
    assert len(rings) == 1


def test_table_flags_a_subset_over_its_cap_and_explains_unplaced_pods() -> None:
    reports = [
        *REPORTS,
        _report(
            3,
            "orphans",
            {"on-premises-pool": 2, "elastic": 3, "-": 1},
            {"on-premises-pool": 2, "elastic": None},
        ),
    ]
    table = render_table(reports)
    assert re.search(r"^2\s+lower the cap.*on-premises-pool \+1$", table, re.M), table
    assert "no subset" in table.splitlines()[0] and "no subset: pods the webhook admitted" in table


def test_html_highlights_the_cell_over_its_cap() -> None:
    page = render_html(parse_scenario(_zones(), "zones.yaml"), REPORTS)
    assert page.count('class="over"') == 1 and 'title="cap 2"' in page


def test_nice_steps_are_round() -> None:
    assert [nice_step(v) for v in (1, 7, 20, 130, 999)] == [1, 2, 5, 50, 200]


def test_caps_resolve_percentages_against_the_replicas() -> None:
    spread = {
        "spec": {
            "subsets": [
                {"name": "a", "maxReplicas": "20%"},
                {"name": "b", "maxReplicas": 3},
                {"name": "c"},
                {"name": "d", "maxReplicas": "junk"},
            ]
        }
    }
    assert resolved_caps(spread, 11) == {"a": 3, "b": 3, "c": None, "d": None}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01binary", "binary data"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        (b"steps: [\n", "not valid YAML or JSON at line"),
        (b"a: 1\n---\nb: 2\n", "expected one scenario document"),
    ],
)
def test_unreadable_scenarios_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    err = error_on_file(tmp_path, capsys, "s.yaml", content, "simulate")
    assert err.startswith("spreadgate simulate: error: ") and message in err and err.count("\n") == 1


def test_html_needs_an_explicit_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(SCENARIOS / "zones-20-20-60.yaml"), "-o", "html"]) == 2
    assert "needs --out" in capsys.readouterr().err


def test_kruise_spreads_are_read_as_spreadgate_ones() -> None:
    data = _zones()
    data["workloadSpread"]["apiVersion"] = "apps.kruise.io/v1alpha1"
    assert parse_scenario(data).spread["apiVersion"] == "spreadgate.dev/v1alpha1"


@pytest.mark.parametrize(
    ("kind", "api_version", "field"),
    [
        ("ReplicaSet", "apps/v1", "replicas"),
        ("StatefulSet", "apps/v1", "replicas"),
        ("Job", "batch/v1", "parallelism"),
    ],
)
def test_every_kind_the_cluster_runs_is_accepted(kind: str, api_version: str, field: str) -> None:
    data = _zones()
    data["workload"].update(kind=kind, apiVersion=api_version)
    data["workloadSpread"]["spec"]["targetRef"].update(kind=kind, apiVersion=api_version)
    data["steps"] = [{"scale": 3}]
    scenario = parse_scenario(data)
    assert scenario.workload_kind.replicas_field == field


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["workload"].update(kind="CloneSet"), "workload must be one of Deployment, ReplicaSet"),
        (
            lambda d: d["workloadSpread"]["spec"]["targetRef"].update(name="other"),
            "targetRef must name the workload",
        ),
        (
            lambda d: d["workloadSpread"].update(apiVersion="example.com/v1"),
            "workloadSpread.apiVersion must be",
        ),
        (
            lambda d: (
                d["workload"].update(kind="Job", apiVersion="batch/v1")
                or d["workloadSpread"]["spec"]["targetRef"].update(kind="Job")
            ),
            "a Job does not roll its pods",
        ),
    ],
)
def test_scenario_mistakes_are_named(edit: Any, message: str) -> None:
    data = _zones()
    edit(data)
    with pytest.raises(ScenarioError, match=re.escape(message)):
        parse_scenario(data)


def test_shipped_scenarios_load() -> None:
    for path in sorted(SCENARIOS.glob("*.yaml")):
        assert load_scenario(path).steps
