"""Reproduction E of tests/vectors/repros (a randomized comparison with OpenKruise's
WorkloadSpread), pinned: a DELETE or eviction of a pod whose spread has exactly one
subset without `maxReplicas` takes Kruise's single-unlimited-subset shortcut (the
same subset lookup as CREATE) and writes no status, even while the stored status
still carries a cap from before the spec change (generation 2, observedGeneration 1).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from py_engine.cli import main

pytestmark = pytest.mark.timeout(60)

E = Path(__file__).resolve().parents[2] / "vectors" / "repros" / "E"
NOW_TEXT = "2024-06-01T12:00:00Z"


def _admit(capsys: pytest.CaptureFixture[str], state: Path, operation: str) -> dict[str, Any]:
    code = main(
        [
            "admit",
            "--state",
            str(state),
            "--pod",
            str(E / "pod.json"),
            "--operation",
            operation,
            "--now",
            NOW_TEXT,
            "-o",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    decision: dict[str, Any] = json.loads(out)
    return decision


def _state() -> dict[str, Any]:
    state: dict[str, Any] = json.loads((E / "state.json").read_text())
    return state


def _spread(state: dict[str, Any]) -> dict[str, Any]:
    [ws] = [item for item in state["items"] if item["kind"] == "WorkloadSpread"]
    return ws  # type: ignore[no-any-return]


@pytest.mark.parametrize("operation", ["DELETE", "EVICT"])
def test_e_single_unlimited_subset_release_writes_no_status(
    capsys: pytest.CaptureFixture[str], operation: str
) -> None:
    state = _state()
    pod = json.loads((E / "pod.json").read_text())
    decision = _admit(capsys, E / "state.json", operation)
    # Kruise's outcome (expected-DELETE.json / expected-EVICT.json), field by field.
    assert decision["allowed"] is True
    assert decision["subset"] == "subset-a"
    assert decision["patch"] == []
    assert decision["pod"] == pod
    assert decision["statusWritten"] is False
    assert decision["warnings"] == []
    assert decision["workloadSpread"] == _spread(state)  # untouched, the stale cap included
    assert decision["workloadSpread"]["status"]["versionedSubsetStatuses"] == {
        "versionIgnored": [{"name": "subset-a", "replicas": 2, "missingReplicas": 1}]
    }


def test_e_the_shortcut_is_only_for_a_single_unlimited_subset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same pod and status with a cap back in the spec (and the spec synced): the
    release is recorded as before (deletingPods, missingReplicas + 1)."""
    state = _state()
    ws = _spread(state)
    ws["spec"]["subsets"][0]["maxReplicas"] = 3
    ws["status"]["observedGeneration"] = ws["metadata"]["generation"]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    before = copy.deepcopy(ws)
    decision = _admit(capsys, path, "DELETE")
    assert decision["statusWritten"] is True and decision["subset"] == "subset-a"
    assert decision["workloadSpread"]["status"]["versionedSubsetStatuses"]["versionIgnored"] == [
        {"name": "subset-a", "replicas": 2, "missingReplicas": 2, "deletingPods": {"app-0": NOW_TEXT}}
    ]
    assert ws == before
