"""Hypothesis strategy for the scale-down victim tests: groups of pods with distinct ages
(ready since, created at), phases, restarts, deletion costs and nodes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from hypothesis import strategies as st

COST = "controller.kubernetes.io/pod-deletion-cost"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@st.composite
def pod_groups(
    draw: st.DrawFn,
    now: datetime,
    *,
    max_count: int,
    max_age_days: int,
    max_restarts: int,
    costs: Sequence[str],
    nodes: Sequence[str],
) -> list[dict[str, Any]]:
    """2..`max_count` pods `p<i>` (uid `uid-<ii>`), every age (ready since, created) distinct."""
    count = draw(st.integers(min_value=2, max_value=max_count))
    ages = draw(
        st.lists(
            st.integers(min_value=1, max_value=max_age_days * 86_400),
            min_size=2 * count,
            max_size=2 * count,
            unique=True,
        )
    )
    pods = []
    for index in range(count):
        status: dict[str, Any] = {
            "phase": draw(st.sampled_from(["Pending", "Running", "Unknown"])),
            "containerStatuses": [{"restartCount": draw(st.integers(0, max_restarts))}],
        }
        if draw(st.booleans()):
            since = _stamp(now - timedelta(seconds=ages[2 * index]))
            status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": since}]
        annotations = {COST: draw(st.sampled_from(list(costs)))} if draw(st.booleans()) else {}
        metadata = {
            "name": f"p{index}",
            "uid": f"uid-{index:02d}",
            "annotations": annotations,
            "creationTimestamp": _stamp(now - timedelta(seconds=ages[2 * index + 1])),
        }
        pods.append(
            {"metadata": metadata, "spec": {"nodeName": draw(st.sampled_from(list(nodes)))}, "status": status}
        )
    return pods
