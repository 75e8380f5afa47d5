"""Between-subset bands of one subset (docs/design-workloadspread.md §2.5.3), at the cap.

Within the cap every active pod gets band `N - k`; only a subset over its cap ranks its pods
(Kubernetes' ActivePods order) to pick the surplus, so only then must the pods be readable.
"""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.workloadspread.controller.costs import subset_bands
from py_engine.workloadspread.controller.errors import ReconcileError


def pod(name: str, created: str = "2024-06-01T11:00:00Z") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"nodeName": "n1"},
        "status": {},
    }


def test_a_subset_exactly_at_its_cap_keeps_every_pod_positive_without_ranking_them() -> None:
    pods = [pod("p1", created="not a time"), pod("p2")]
    assert subset_bands(pods, 3, 1, 2) == {"p1": 2, "p2": 2}


def test_an_unreadable_pod_of_a_subset_over_its_cap_is_named_in_the_error() -> None:
    pods = [pod("p1", created="not a time"), pod("p2")]
    with pytest.raises(ReconcileError, match="creationTimestamp"):
        subset_bands(pods, 3, 1, 1)
