"""Rendering scenario step reports: a text table, JSON, or a self-contained HTML page.

The HTML page has no external URL (no scripts, fonts or stylesheets from a
CDN): styles are inline and the chart of replicas per subset over the steps is
an inline SVG, so the file can be mailed or attached to an issue as is.

The chart is meant to be read without the table beside it: every series has
its own colour, dash pattern and hollow marker shape (markers shrink from the
first series to the last, so equal series stay visible one inside the other),
the legend sits below the plot with room for the longest name, the x axis names
every step, the y axis has gridlines at round numbers, each capped subset has a
thin step line at its cap, and a point above its cap gets a red ring.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

from py_engine.cli.scenario import Scenario
from py_engine.cli.scenario_run import StepReport

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
DASHES = ("", "7 4", "2 3", "9 3 2 3", "4 2", "1 5")
MARKERS = ("circle", "square", "triangle", "diamond", "cross", "bar")
UNPLACED = "-"
UNPLACED_LABEL = "no subset"

# Layout of the chart, in SVG user units.
PLOT_WIDTH, PLOT_HEIGHT = 720, 260
LEFT, RIGHT, TOP, AXIS_LABELS = 56, 24, 16, 110
LEGEND_ROW, CHAR_WIDTH = 20, 7.5


def subset_order(reports: Sequence[StepReport]) -> list[str]:
    """Subsets in the order the reports list them (spec order, pods without a subset last)."""
    names: list[str] = []
    for report in reports:
        names += [n for n in report.subsets if n not in names]
    return names


def subset_label(name: str) -> str:
    return UNPLACED_LABEL if name == UNPLACED else name


def _removed_summary(report: StepReport) -> str:
    counts: dict[str, int] = {}
    for pod in report.removed:
        counts[pod["subset"]] = counts.get(pod["subset"], 0) + 1
    return ", ".join(f"{subset_label(k)}:{v}" for k, v in counts.items())


def _over_cap_summary(report: StepReport) -> str:
    return ", ".join(f"{name} +{excess}" for name, excess in report.over_cap.items())


def render_table(reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    header = [
        "#",
        "step",
        "t(s)",
        "replicas",
        *map(subset_label, names),
        "pending",
        "removed (by subset)",
        "over cap",
    ]
    rows = [
        [
            str(r.index),
            r.name,
            f"{r.time:g}",
            str(r.replicas),
            *(str(r.subsets.get(n, 0)) for n in names),
            str(r.pending),
            _removed_summary(r),
            _over_cap_summary(r),
        ]
        for r in reports
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    last = reports[-1]
    lines.append("")
    lines.append("zones:  " + ", ".join(f"{k}={v}" for k, v in last.zones.items()))
    lines.append(
        "costs:  " + ", ".join(f"{subset_label(k)}=[{lo}..{hi}]" for k, (lo, hi) in last.costs.items())
    )
    if UNPLACED in names:
        lines.append(
            f"{UNPLACED_LABEL}: pods the webhook admitted without a subset (no room anywhere, or the "
            "spread does not govern them)"
        )
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_json(scenario: Scenario, reports: Sequence[StepReport]) -> str:
    doc: dict[str, Any] = {
        "scenario": scenario.name,
        "description": scenario.description,
        "steps": [r.to_json() for r in reports],
    }
    return json.dumps(doc, indent=2) + "\n"


def nice_step(top: float, ticks: int = 5) -> int:
    """A round tick interval (1, 2 or 5 times a power of ten) giving about `ticks` intervals up to `top`."""
    raw = max(top, 1) / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return max(1, int(factor * power))
    return max(1, int(10 * power))  # pragma: no cover - the loop always returns


def _marker(shape: str, x: float, y: float, size: float, color: str, title: str) -> str:
    attrs = f'class="marker" data-shape="{shape}" fill="white" stroke="{color}" stroke-width="1.5"'
    tip = f"<title>{html.escape(title)}</title>"
    if shape == "circle":
        return f'<circle {attrs} cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}">{tip}</circle>'
    if shape == "square":
        return (
            f'<rect {attrs} x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" '
            f'height="{2 * size:.1f}">{tip}</rect>'
        )
    points = {
        "triangle": [(x, y - size), (x + size, y + size), (x - size, y + size)],
        "diamond": [(x, y - size), (x + size, y), (x, y + size), (x - size, y)],
        "cross": [
            (x - size, y - size / 3),
            (x - size / 3, y - size / 3),
            (x - size / 3, y - size),
            (x + size / 3, y - size),
            (x + size / 3, y - size / 3),
            (x + size, y - size / 3),
            (x + size, y + size / 3),
            (x + size / 3, y + size / 3),
            (x + size / 3, y + size),
            (x - size / 3, y + size),
            (x - size / 3, y + size / 3),
            (x - size, y + size / 3),
        ],
        "bar": [
            (x - size, y - size / 2),
            (x + size, y - size / 2),
            (x + size, y + size / 2),
            (x - size, y + size / 2),
        ],
    }[shape]
    coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    return f'<polygon {attrs} points="{coords}">{tip}</polygon>'


def _chart(reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    caps = [c for r in reports for c in r.caps.values() if c is not None]
    top_value = max([1, *(v for r in reports for v in r.subsets.values()), *caps])
    step = nice_step(top_value)
    top = step * math.ceil(top_value / step)
    longest = max([len(subset_label(n)) for n in names] + [1])
    width = max(LEFT + PLOT_WIDTH + RIGHT, int(LEFT + 48 + longest * CHAR_WIDTH + 120))
    legend_top = TOP + PLOT_HEIGHT + AXIS_LABELS
    height = legend_top + LEGEND_ROW * (len(names) + 1) + 8
    intervals = max(1, len(reports) - 1)

    def x_at(i: int) -> float:
        return LEFT + i * PLOT_WIDTH / intervals

    def y_at(v: float) -> float:
        return TOP + PLOT_HEIGHT - v * PLOT_HEIGHT / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="replicas per subset over the steps">',
        '<g font-family="sans-serif" font-size="11">',
    ]
    for value in range(0, top + 1, step):
        y = y_at(value)
        parts.append(
            f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_WIDTH}" y2="{y:.1f}" '
            f'stroke="#e3e3e3"/>'
        )
        parts.append(f'<text class="y-label" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value}</text>')
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP + PLOT_HEIGHT}" x2="{LEFT + PLOT_WIDTH}" y2="{TOP + PLOT_HEIGHT}" '
        f'stroke="#666"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + PLOT_HEIGHT}" stroke="#666"/>'
    )
    parts.append(
        f'<text x="14" y="{TOP + PLOT_HEIGHT / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + PLOT_HEIGHT / 2:.1f})">pods</text>'
    )
    for i, report in enumerate(reports):
        x, y = x_at(i), TOP + PLOT_HEIGHT + 14
        label = html.escape(f"{report.index}: {report.name}")
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP + PLOT_HEIGHT}" x2="{x:.1f}" y2="{TOP + PLOT_HEIGHT + 4}" '
            f'stroke="#666"/>'
        )
        parts.append(
            f'<text class="x-label" x="{x:.1f}" y="{y:.1f}" text-anchor="end" '
            f'transform="rotate(-35 {x:.1f} {y:.1f})">{label}</text>'
        )
    for k, name in enumerate(names):
        color, dash, shape = PALETTE[k % len(PALETTE)], DASHES[k % len(DASHES)], MARKERS[k % len(MARKERS)]
        label = html.escape(subset_label(name))
        cap_points = [
            (x_at(i), y_at(c)) for i, r in enumerate(reports) if (c := r.caps.get(name)) is not None
        ]
        if cap_points:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in _steps(cap_points))
            parts.append(
                f'<polyline class="cap" data-subset="{label}" fill="none" stroke="{color}" '
                f'stroke-width="1" stroke-dasharray="1 3" stroke-opacity="0.8" points="{path}">'
                f"<title>cap of {label}</title></polyline>"
            )
        points = " ".join(f"{x_at(i):.1f},{y_at(r.subsets.get(name, 0)):.1f}" for i, r in enumerate(reports))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline class="series" data-subset="{label}" fill="none" stroke="{color}" '
            f'stroke-width="2"{dash_attr} points="{points}"/>'
        )
        size = max(2.5, 6.0 - 0.8 * k)
        for i, report in enumerate(reports):
            value = report.subsets.get(name, 0)
            parts.append(
                _marker(
                    shape,
                    x_at(i),
                    y_at(value),
                    size,
                    color,
                    f"{subset_label(name)} at step {report.index}: {value}",
                )
            )
            if name in report.over_cap:
                parts.append(
                    f'<circle class="over-cap" cx="{x_at(i):.1f}" cy="{y_at(value):.1f}" r="9" '
                    f'fill="none" stroke="#d00" stroke-width="2"><title>{label} is '
                    f"{report.over_cap[name]} over its cap</title></circle>"
                )
        y = legend_top + LEGEND_ROW * k
        parts.append(
            f'<g class="legend" data-subset="{label}">'
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + 36}" y2="{y:.1f}" stroke="{color}" '
            f'stroke-width="2"{dash_attr}/>'
            f"{_marker(shape, LEFT + 18, y, size, color, subset_label(name))}"
            f'<text x="{LEFT + 48}" y="{y + 4:.1f}">{label}</text></g>'
        )
    y = legend_top + LEGEND_ROW * len(names)
    parts.append(
        f'<g class="legend-note"><line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + 36}" y2="{y:.1f}" '
        f'stroke="#555" stroke-dasharray="1 3"/><text x="{LEFT + 48}" y="{y + 4:.1f}">dotted: the '
        f"subset's cap (maxReplicas at that step); red ring: above its cap</text></g>"
    )
    parts.append("</g></svg>")
    return "".join(parts)


def _steps(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A step line through `points`: the value holds until the next point's x."""
    path = [points[0]]
    for (_, y0), (x1, y1) in itertools.pairwise(points):
        path += [(x1, y0), (x1, y1)]
    return path


def render_html(scenario: Scenario, reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    esc = html.escape
    head = "".join(
        f"<th>{esc(h)}</th>"
        for h in ["#", "step", "t (s)", "replicas", *map(subset_label, names), "pending", "zones", "removed"]
    )
    rows = []
    for r in reports:
        cells = [f"<td>{esc(c)}</td>" for c in (str(r.index), r.name, f"{r.time:g}", str(r.replicas))]
        for name in names:
            count, cap = r.subsets.get(name, 0), r.caps.get(name)
            title = f"cap {cap}" if cap is not None else "no cap"
            over = ' class="over"' if name in r.over_cap else ""
            cells.append(f'<td{over} title="{esc(title)}">{count}</td>')
        cells += [
            f"<td>{esc(c)}</td>"
            for c in (str(r.pending), ", ".join(f"{k}={v}" for k, v in r.zones.items()), _removed_summary(r))
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}"
        "td.over{background:#fdd;font-weight:bold}"
    )
    note = (
        "<p>A highlighted cell holds more pods than the subset's cap at that step.</p>"
        if any(r.over_cap for r in reports)
        else ""
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(scenario.name)}</title>'
        f"<style>{style}</style></head><body><h1>{esc(scenario.name)}</h1><p>{esc(scenario.description)}</p>"
        f"<h2>Replicas per subset</h2>{_chart(reports)}<h2>Steps</h2>{note}<table><tr>{head}</tr>"
        f"{''.join(rows)}</table></body></html>\n"
    )
