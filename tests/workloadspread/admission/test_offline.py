"""The offline ports (`snapshot.SnapshotReader`, `recording.RecordingCommitter`) and the
webhook's service running over them (`offline.OfflineAdmission`): one pipeline, nothing written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from admission_builders import NOW, deployment_chain, pod, spread, subset

from py_engine.model import MATCHED_ANNOTATION
from py_engine.workloadspread.admission.offline import OfflineAdmission
from py_engine.workloadspread.admission.ports import SpreadNotFound
from py_engine.workloadspread.admission.recording import RecordingCommitter
from py_engine.workloadspread.admission.snapshot import SnapshotReader


def _spread() -> dict[str, Any]:
    return spread([subset("a", 1), subset("b")])


def test_snapshot_reader_indexes_like_the_caches() -> None:
    reader = SnapshotReader([*deployment_chain(), spread([subset("a")], name="z"), _spread()])
    assert [s["metadata"]["name"] for s in reader.spreads_in("default")] == ["ws", "z"]  # name order
    assert reader.lookup("apps/v2", "Deployment", "default", "web") is not None  # the version is ignored
    assert reader.lookup("apps/v1", "Deployment", "other", "web") is None
    assert reader.node_inventory() is None and reader.ready()


def test_recording_committer_records_and_dry_runs_write_nothing() -> None:
    reader = SnapshotReader([_spread()])
    committer = RecordingCommitter(reader)

    def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        return {**obj, "status": {"touched": True}}, "result"

    assert committer.submit("default", "ws", apply, 0.0, dry_run=True) == "result"
    assert committer.writes == [] and "status" not in (reader.spread("default", "ws") or {})
    assert committer.submit("default", "ws", apply, 0.0) == "result"
    assert committer.writes[0]["status"] == {"touched": True}
    assert (reader.spread("default", "ws") or {})["status"] == {"touched": True}
    with pytest.raises(SpreadNotFound):
        committer.submit("default", "gone", apply, 0.0)


def test_offline_admission_counts_what_it_recorded() -> None:
    admission = OfflineAdmission([*deployment_chain(), _spread()], NOW, generated_uid="u")
    first = admission.create(pod("web-abc123-1"))
    second = admission.create(pod("web-abc123-2"))
    assert (first.subset, first.status_written) == ("a", True)
    assert json.loads(first.pod["metadata"]["annotations"][MATCHED_ANNOTATION]) == {
        "name": "ws",
        "subset": "a",
    }
    assert second.subset == "b"  # the first write is counted
    assert first.spread_before is not None and "status" not in first.spread_before


def test_offline_admission_runs_the_webhooks_guards() -> None:
    admission = OfflineAdmission([*deployment_chain(), _spread()], NOW, generated_uid="u")
    mirror = pod("web-abc123-m", annotations={"kubernetes.io/config.mirror": "x"})
    outcome = admission.create(mirror)
    assert outcome.allowed and outcome.subset is None and outcome.message == "mirror pod"
    assert not outcome.status_written


def test_the_asynchronous_entry_points_decide_exactly_as_the_blocking_ones() -> None:
    """`mutate_pod_async`/`validate_pod_async` (the webhook's) share every step with `mutate_pod`/
    `validate_pod`: the same decisions, answered once each, over the same sequence of writes."""
    blocking = OfflineAdmission([*deployment_chain(), _spread()], NOW, generated_uid="u")
    later = OfflineAdmission([*deployment_chain(), _spread()], NOW, generated_uid="u")
    pods = [pod(f"web-abc123-{i}") for i in range(3)]
    admitted = [blocking.create(p).pod for p in pods]
    requests: list[tuple[str, dict[str, Any]]] = [
        *(
            (
                "mutate",
                {
                    "uid": f"c{i}",
                    "operation": "CREATE",
                    "namespace": "default",
                    "name": p["metadata"]["name"],
                    "resource": {"group": "", "version": "v1", "resource": "pods"},
                    "object": p,
                },
            )
            for i, p in enumerate(pods)
        ),
        (
            "validate",
            {
                "uid": "d0",
                "operation": "DELETE",
                "namespace": "default",
                "name": "web-abc123-0",
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "oldObject": admitted[0],
            },
        ),
    ]
    fresh = OfflineAdmission([*deployment_chain(), _spread()], NOW, generated_uid="u")
    for kind, request in requests:
        answers: list[Any] = []
        entry = later.service.mutate_pod_async if kind == "mutate" else later.service.validate_pod_async
        entry(request, lambda outcome, sink=answers: sink.append(outcome()))
        expected = (fresh.service.mutate_pod if kind == "mutate" else fresh.service.validate_pod)(request)
        assert answers == [expected]
    assert later.committer.writes == fresh.committer.writes and later.committer.writes
