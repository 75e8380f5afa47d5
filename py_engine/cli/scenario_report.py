"""Rendering scenario step reports: a text table, JSON, or a self-contained HTML page.

The HTML page has no external URL (no scripts, fonts or stylesheets from a
CDN): styles are inline and the chart of replicas per subset over the steps is
an inline SVG, so the file can be mailed or attached to an issue as is.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from py_engine.cli.scenario import Scenario
from py_engine.cli.scenario_run import StepReport

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def subset_order(reports: Sequence[StepReport]) -> list[str]:
    names: list[str] = []
    for report in reports:
        names += [n for n in report.subsets if n not in names]
    return names


def _removed_summary(report: StepReport) -> str:
    if not report.removed:
        return ""
    counts: dict[str, int] = {}
    for pod in report.removed:
        counts[pod["subset"]] = counts.get(pod["subset"], 0) + 1
    return ", ".join(f"{k}:{v}" for k, v in counts.items())


def render_table(reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    header = ["#", "step", "t(s)", "replicas", *names, "pending", "removed (by subset)"]
    rows = [[str(r.index), r.name, f"{r.time:g}", str(r.replicas), *(str(r.subsets.get(n, 0)) for n in names),
             str(r.pending), _removed_summary(r)] for r in reports]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    last = reports[-1]
    lines.append("")
    lines.append("zones:  " + ", ".join(f"{k}={v}" for k, v in last.zones.items()))
    lines.append("costs:  " + ", ".join(f"{k}=[{lo}..{hi}]" for k, (lo, hi) in last.costs.items()))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_json(scenario: Scenario, reports: Sequence[StepReport]) -> str:
    doc: dict[str, Any] = {"scenario": scenario.name, "description": scenario.description,
                           "steps": [r.to_json() for r in reports]}
    return json.dumps(doc, indent=2) + "\n"


def _chart(reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    width, height, pad = 720, 300, 40
    top = max([1, *(v for r in reports for v in r.subsets.values())])
    steps = max(1, len(reports) - 1)

    def xy(i: int, v: int) -> str:
        return f"{pad + i * (width - 2 * pad) / steps:.1f},{height - pad - v * (height - 2 * pad) / top:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="replicas per subset over the steps">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#999"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#999"/>',
             f'<text x="4" y="{pad}" font-size="11">{top}</text>',
             f'<text x="4" y="{height - pad}" font-size="11">0</text>']
    for i, report in enumerate(reports):
        x = xy(i, 0).split(",")[0]
        parts.append(f'<text x="{x}" y="{height - pad + 14}" font-size="11" text-anchor="middle">{report.index}</text>')
    for k, name in enumerate(names):
        color = PALETTE[k % len(PALETTE)]
        points = " ".join(xy(i, r.subsets.get(name, 0)) for i, r in enumerate(reports))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>')
        parts.append(f'<text x="{width - pad + 4}" y="{pad + 14 * k}" font-size="12" fill="{color}">'
                     f'{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(scenario: Scenario, reports: Sequence[StepReport]) -> str:
    names = subset_order(reports)
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in ["#", "step", "t (s)", "replicas", *names, "pending",
                                                     "zones", "removed"])
    rows = []
    for r in reports:
        cells = [str(r.index), r.name, f"{r.time:g}", str(r.replicas), *(str(r.subsets.get(n, 0)) for n in names),
                 str(r.pending), ", ".join(f"{k}={v}" for k, v in r.zones.items()), _removed_summary(r)]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{esc(scenario.name)}</title>"
            f"<style>{style}</style></head><body><h1>{esc(scenario.name)}</h1><p>{esc(scenario.description)}</p>"
            f"<h2>Replicas per subset</h2>{_chart(reports)}<h2>Steps</h2><table><tr>{head}</tr>{''.join(rows)}"
            "</table></body></html>\n")
