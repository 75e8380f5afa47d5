"""The admission service's decisions, asserted whole (py_engine/workloadspread/admission/service.py;
mutation survivors of run A2, MUTATION-admission.md).

Every expected `Decision` is written out literally from the service's contract (its module
docstring and `Decision`'s): what the webhook answers (allowed, outcome, patch, warnings, code,
message, reason, audit) and what offline readers get (spread, subset, pod).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest
from admission_builders import NOW, deployment_chain, owner_ref, pod, spread, subset, versioned
from admission_builders import counted_cluster as _cluster

from py_engine.model.constants import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.semantics.clock import FixedClock
from py_engine.workloadspread.admission import service as service_module
from py_engine.workloadspread.admission.context import AdmissionError
from py_engine.workloadspread.admission.ports import (
    Apply,
    CommitFailed,
    CommitTimeout,
    Done,
    SpreadCommitter,
    SpreadNotFound,
)
from py_engine.workloadspread.admission.recording import RecordingCommitter
from py_engine.workloadspread.admission.service import (
    AdmissionService,
    Decision,
    ServiceConfig,
    TimedEngine,
    allow,
    deny,
)
from py_engine.workloadspread.admission.snapshot import SnapshotReader

PODS = {"group": "", "version": "v1", "resource": "pods"}
KRUISE_KEY_PATH = "/metadata/annotations/apps.kruise.io~1matched-workloadspread"
ZONE_B_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z2"]}
                    ]
                }
            ]
        }
    }
}
MONOTONIC_NOW = NOW.timestamp()


def _written_b(committer: RecordingCommitter) -> dict[str, Any]:
    """Subset b's entry (revision abc123) of the spread status in the committer's first write."""
    entry: dict[str, Any] = committer.writes[0]["status"]["versionedSubsetStatuses"]["abc123"][1]
    return entry


def _pod_x1_in_b(missing: int, pods_key: str) -> dict[str, Any]:
    """Subset b's expected entry: one replica, `missing` missing, pod web-abc123-x1 under `pods_key`."""
    return {
        "name": "b",
        "replicas": 1,
        "missingReplicas": missing,
        pods_key: {"web-abc123-x1": "2024-06-01T12:00:00Z"},
    }


def _timed_out(error: str) -> Decision:
    """The refusal of a create whose commit to spread `ws` raised CommitTimeout(`error`)."""
    return Decision(
        False,
        "commit-failed",
        code=500,
        message=f"WorkloadSpread default/ws: {error}",
        reason="CommitTimeout",
        audit={"workloadspread": "ws"},
        spread="ws",
    )


class Failing(SpreadCommitter):
    """A committer whose every submit raises `error`; records each call."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls: list[tuple[str, str, float, bool]] = []

    def submit(
        self, namespace: str, name: str, apply: Apply[Any], deadline: float, *, dry_run: bool = False
    ) -> Any:
        self.calls.append((namespace, name, deadline, dry_run))
        raise self.error


class Deferred(RecordingCommitter):
    """Records `submit_async`'s arguments and answers only when told to (`finish`)."""

    def __init__(self, snapshot: SnapshotReader) -> None:
        super().__init__(snapshot)
        self.pending: list[tuple[str, str, Apply[Any], float, Done[Any], bool]] = []

    def submit_async(
        self,
        namespace: str,
        name: str,
        apply: Apply[Any],
        deadline: float,
        on_done: Done[Any],
        *,
        dry_run: bool = False,
    ) -> None:
        self.pending.append((namespace, name, apply, deadline, on_done, dry_run))

    def finish(self) -> None:
        namespace, name, apply, deadline, on_done, dry_run = self.pending.pop()
        super().submit_async(namespace, name, apply, deadline, on_done, dry_run=dry_run)


def _service(
    committer: SpreadCommitter | None = None, reader: SnapshotReader | None = None, **config: Any
) -> AdmissionService:
    reader = reader or SnapshotReader(_cluster())
    return AdmissionService(
        reader,
        committer if committer is not None else RecordingCommitter(reader),
        FixedClock(NOW),
        config=ServiceConfig(**config),
        new_uid=lambda: "uid-1",
    )


def _pod_request(
    operation: str, pod_field: str, the_pod: dict[str, Any], request: dict[str, Any]
) -> dict[str, Any]:
    """An admission request on a pod in namespace default, `the_pod` under `pod_field`."""
    return {
        "uid": "r",
        "operation": operation,
        "namespace": "default",
        "resource": PODS,
        pod_field: the_pod,
        **request,
    }


def _create(the_pod: dict[str, Any] | None = None, **request: Any) -> dict[str, Any]:
    return _pod_request("CREATE", "object", the_pod if the_pod is not None else pod(), request)


def _forged() -> dict[str, Any]:
    """A pod arriving with Kruise's matched annotation it never earned."""
    return pod(annotations={KRUISE_MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'})


# ----------------------------------------------------------------- helpers


def test_allow_and_deny_build_the_documented_answers() -> None:
    assert allow() == Decision(True, "allowed")
    assert allow("skipped", "mirror pod", ["w"]) == Decision(
        True, "skipped", message="mirror pod", warnings=("w",)
    )
    assert deny(404, "gone") == Decision(False, "denied", code=404, message="gone", reason="")
    assert deny(500, "boom", "commit-failed", "CommitTimeout") == Decision(
        False, "commit-failed", code=500, message="boom", reason="CommitTimeout"
    )


# ------------------------------------------------------------- commit failed


def test_a_create_whose_commit_times_out_is_denied_naming_the_spread() -> None:
    committer = Failing(CommitTimeout("the deadline passed before the write"))
    decision = _service(committer).mutate_pod(_create(dryRun=True))
    assert decision == _timed_out("the deadline passed before the write")
    assert committer.calls == [("default", "ws", MONOTONIC_NOW + 2.5, True)]


def test_a_create_whose_commit_fails_is_admitted_unmodified_when_so_configured() -> None:
    committer = Failing(CommitFailed("conflict after 4 attempts"))
    the_pod = _forged()
    decision = _service(committer, on_commit_failure="allow-unmodified", commit_timeout=1.0).mutate_pod(
        _create(the_pod)
    )
    stripped = pod(annotations={})
    assert decision == Decision(
        True,
        "commit-failed",
        patch=[{"op": "remove", "path": KRUISE_KEY_PATH}],
        warnings=(
            "WorkloadSpread default/ws: conflict after 4 attempts; the pod is admitted without a subset",
        ),
        audit={"workloadspread": "ws"},
        spread="ws",
        pod=stripped,
    )
    assert committer.calls == [("default", "ws", MONOTONIC_NOW + 1.0, False)]


def test_a_create_whose_spread_is_gone_at_commit_is_skipped() -> None:
    decision = _service(Failing(SpreadNotFound("not found"))).mutate_pod(_create())
    assert decision == Decision(True, "skipped", message="WorkloadSpread default/ws is gone")


def test_a_create_whose_commit_raises_an_admission_error_is_denied_with_its_code() -> None:
    error = AdmissionError("replicasPathList does not resolve")
    error.code = 422
    decision = _service(Failing(error)).mutate_pod(_create())
    assert decision == Decision(
        False, "denied", code=422, message="replicasPathList does not resolve", spread="ws"
    )


def test_a_create_whose_commit_raises_anything_else_raises_it() -> None:
    with pytest.raises(KeyError, match="boom"):
        _service(Failing(KeyError("boom"))).mutate_pod(_create())


# ------------------------------------------------------------------- async


def test_the_async_create_answers_once_the_committer_has_and_like_the_sync_one() -> None:
    reader = SnapshotReader(_cluster())
    committer = Deferred(reader)
    answers: list[Decision] = []
    _service(committer, reader, commit_timeout=4.0).mutate_pod_async(
        _create(dryRun=True), lambda outcome: answers.append(outcome())
    )
    assert answers == [] and [p[3] for p in committer.pending] == [MONOTONIC_NOW + 4.0]
    assert [p[5] for p in committer.pending] == [True]
    committer.finish()
    assert committer.writes == [], "a dry run writes nothing"
    expected = _service(reader=SnapshotReader(_cluster())).mutate_pod(_create())
    assert answers == [expected] and expected.subset == "b"


def test_the_async_create_answers_a_failed_commit_through_the_same_rules() -> None:
    answers: list[Decision] = []
    _service(Failing(CommitTimeout("late"))).mutate_pod_async(_create(), lambda o: answers.append(o()))
    assert answers == [_timed_out("late")]


def test_the_async_entry_points_answer_at_once_what_needs_no_commit() -> None:
    service = _service(Failing(AssertionError("nothing is submitted")))
    answers: list[Decision] = []
    service.mutate_pod_async(_create(operation="UPDATE"), lambda o: answers.append(o()))
    service.validate_pod_async(
        {"operation": "DELETE", "resource": {"resource": "nodes"}}, lambda o: answers.append(o())
    )
    assert answers == [
        Decision(True, "skipped", message="not a pod CREATE"),
        Decision(True, "skipped", message="not a pod"),
    ]


# --------------------------------------------------------------- TimedEngine


class _Engine:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.closed = False
        self.seen: list[tuple[str, Any]] = []

    def evaluate(self, rule: str, input_document: Any) -> Any:
        self.seen.append((rule, input_document))
        if self.fail:
            raise RuntimeError("rego error")
        return {"allowed": ["a"]}

    def close(self) -> None:
        self.closed = True


def test_the_timed_engine_reports_each_evaluation_and_its_duration(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([100.0, 100.25, 200.0, 200.5])
    monkeypatch.setattr(service_module, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    observed: list[tuple[str, float]] = []
    inner = _Engine()
    timed = TimedEngine(inner, lambda rule, seconds: observed.append((rule, seconds)))
    assert timed.evaluate("data.spreadgate.subsets", {"pod": 1}) == {"allowed": ["a"]}
    inner.fail = True
    with pytest.raises(RuntimeError, match="rego error"):
        timed.evaluate("data.spreadgate.patch", {"pod": 2})
    assert inner.seen == [("data.spreadgate.subsets", {"pod": 1}), ("data.spreadgate.patch", {"pod": 2})]
    assert observed == [("data.spreadgate.subsets", 0.25), ("data.spreadgate.patch", 0.5)]
    timed.close()
    assert inner.closed


# ------------------------------------------------------------- pod CREATE


def test_a_create_is_placed_and_recorded() -> None:
    reader = SnapshotReader(_cluster())
    committer = RecordingCommitter(reader)
    decision = _service(committer, reader).mutate_pod(_create())
    annotation = '{"name":"ws","subset":"b"}'
    assert decision.patch == [
        {"op": "add", "path": "/metadata/annotations", "value": {MATCHED_ANNOTATION: annotation}},
        {"op": "add", "path": "/spec/affinity", "value": ZONE_B_AFFINITY},
    ]
    assert (decision.allowed, decision.outcome, decision.warnings, decision.code, decision.message) == (
        True,
        "patched",
        (),
        200,
        "",
    )
    assert (decision.reason, decision.audit, decision.spread, decision.subset) == (
        "",
        {"workloadspread": "ws", "subset": "b"},
        "ws",
        "b",
    )
    assert decision.pod is not None and decision.pod["spec"]["affinity"] == ZONE_B_AFFINITY
    assert decision.pod["metadata"]["annotations"] == {MATCHED_ANNOTATION: annotation}
    assert _written_b(committer) == _pod_x1_in_b(1, "creatingPods")


def test_a_create_with_no_room_is_admitted_without_a_subset_and_loses_a_forged_annotation() -> None:
    ws = spread(
        [subset("a", 1, "z1")],
        status=versioned("abc123", {"name": "a", "replicas": 1, "missingReplicas": 0}),
    )
    reader = SnapshotReader([ws, *deployment_chain(6)])
    decision = _service(reader=reader).mutate_pod(_create(_forged()))
    assert decision.allowed and decision.outcome == "allowed" and decision.spread == "ws"
    assert decision.patch == [{"op": "remove", "path": KRUISE_KEY_PATH}]
    assert decision.pod == pod(annotations={}) and decision.subset is None and decision.audit == {}
    assert len(decision.warnings) == 1 and "a" in decision.warnings[0]


@pytest.mark.parametrize(
    ("request_fields", "expected"),
    [
        ({"operation": "UPDATE"}, Decision(True, "skipped", message="not a pod CREATE")),
        ({"resource": {"resource": "nodes"}}, Decision(True, "skipped", message="not a pod CREATE")),
        ({"resource": "pods"}, Decision(True, "skipped", message="not a pod CREATE")),
        ({"subResource": "status"}, Decision(True, "skipped", message="not a pod CREATE")),
        (
            {"object": "not a pod"},
            Decision(
                False, "error", code=400, message="request.object must be a Pod object", reason="BadRequest"
            ),
        ),
        (
            {"namespace": "", "object": pod(namespace="")},
            Decision(False, "error", code=400, message="the pod has no namespace", reason="BadRequest"),
        ),
        (
            {"object": pod(annotations={"kubernetes.io/config.mirror": "x"})},
            Decision(True, "skipped", message="mirror pod"),
        ),
        (
            {"object": pod(deletionTimestamp="2024-06-01T11:00:00Z")},
            Decision(True, "skipped", message="no controller owner or inactive pod"),
        ),
        (
            {"namespace": "team-b", "object": pod(namespace="team-b")},
            Decision(True, "skipped", message="no WorkloadSpread in the namespace"),
        ),
    ],
    ids=[
        "update",
        "other resource",
        "resource not a map",
        "subresource",
        "no object",
        "no namespace",
        "mirror",
        "inactive",
        "no spread",
    ],
)
def test_a_create_the_guards_turn_away(request_fields: dict[str, Any], expected: Decision) -> None:
    assert (
        _service(Failing(AssertionError("nothing is submitted"))).mutate_pod(_create(**request_fields))
        == expected
    )


def test_a_create_whose_namespace_comes_from_the_pod_is_placed() -> None:
    decision = _service().mutate_pod(_create(namespace=""))
    assert (decision.outcome, decision.subset) == ("patched", "b")


def test_a_create_whose_owner_is_not_cached_is_denied_not_found() -> None:
    reader = SnapshotReader(_cluster()[:1])  # the Deployment and its ReplicaSet are not there
    decision = _service(reader=reader).mutate_pod(_create())
    message = 'ReplicaSet "web-abc123" not found in namespace "default" (owner of the pod being admitted)'
    assert decision == Decision(False, "denied", code=404, message=message, reason="NotFound")


def test_a_create_no_spread_governs_loses_only_spreadgates_annotation() -> None:
    other = owner_ref("apps/v1", "ReplicaSet", "api-1")
    reader = SnapshotReader(_cluster())
    reader.add(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "api-1", "namespace": "default"},
            "spec": {},
        }
    )
    the_pod = pod(
        "api-1-x",
        owner=other,
        labels={"app": "api"},
        annotations={MATCHED_ANNOTATION: "forged", KRUISE_MATCHED_ANNOTATION: "kruise's"},
    )
    decision = _service(Failing(AssertionError("nothing is submitted")), reader).mutate_pod(_create(the_pod))
    assert decision == Decision(
        True,
        "skipped",
        patch=[{"op": "remove", "path": "/metadata/annotations/spreadgate.dev~1matched-workloadspread"}],
        message="no WorkloadSpread targets the pod's workload",
        pod=pod(
            "api-1-x", owner=other, labels={"app": "api"}, annotations={KRUISE_MATCHED_ANNOTATION: "kruise's"}
        ),
    )


# --------------------------------------------------------- pod DELETE/evict


def _placed() -> dict[str, Any]:
    return pod(annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"b"}'})


def _delete(the_pod: dict[str, Any] | None = None, **request: Any) -> dict[str, Any]:
    return _pod_request("DELETE", "oldObject", the_pod if the_pod is not None else _placed(), request)


def test_a_delete_gives_the_slot_back() -> None:
    reader = SnapshotReader(_cluster())
    committer = RecordingCommitter(reader)
    decision = _service(committer, reader).validate_pod(_delete())
    assert decision == Decision(
        True, "released", audit={"workloadspread": "ws", "subset": "b"}, spread="ws", subset="b"
    )
    assert _written_b(committer) == _pod_x1_in_b(3, "deletingPods")


def test_an_eviction_reads_the_pod_and_gives_its_slot_back() -> None:
    reader = SnapshotReader([*_cluster(), _placed()])
    request = {
        "operation": "CREATE",
        "subResource": "eviction",
        "namespace": "default",
        "name": "web-abc123-x1",
        "resource": PODS,
    }
    decision = _service(reader=reader).validate_pod(request)
    assert decision == Decision(
        True, "released", audit={"workloadspread": "ws", "subset": "b"}, spread="ws", subset="b"
    )


def test_a_delete_in_an_unlimited_subset_records_nothing() -> None:
    the_pod = pod(annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"c"}'})
    decision = _service().validate_pod(_delete(the_pod))
    assert decision == Decision(True, "allowed", spread="ws")


def test_a_delete_under_a_single_unlimited_subset_names_it_and_records_nothing() -> None:
    ws = spread([subset("only", None, "z1")])
    the_pod = pod(annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"only"}'})
    reader = SnapshotReader([ws, *deployment_chain(6)])
    committer = RecordingCommitter(reader)
    decision = _service(committer, reader).validate_pod(_delete(the_pod))
    assert decision == Decision(True, "allowed", spread="ws", subset="only")
    assert committer.writes == []


def test_a_delete_beyond_the_cap_is_recorded_but_frees_nothing() -> None:
    ws = spread(
        [subset("a", 1, "z1")],
        status=versioned("abc123", {"name": "a", "replicas": 3, "missingReplicas": 0}),
    )
    the_pod = pod(annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'})
    decision = _service(reader=SnapshotReader([ws, *deployment_chain(6)])).validate_pod(_delete(the_pod))
    assert decision == Decision(
        True, "allowed", message="subset a: over its cap; the deletion frees no slot", spread="ws", subset="a"
    )


@pytest.mark.parametrize("deny_deletes", [False, True])
def test_a_delete_whose_commit_fails_follows_the_configuration(deny_deletes: bool) -> None:
    committer = Failing(CommitTimeout("late"))
    decision = _service(committer, deny_deletes_on_failure=deny_deletes).validate_pod(_delete())
    message = "WorkloadSpread default/ws: could not record the pod deletion: late"
    expected = (
        Decision(False, "commit-failed", code=500, message=message)
        if deny_deletes
        else Decision(True, "commit-failed", warnings=(message,))
    )
    assert decision == Decision(
        expected.allowed,
        expected.outcome,
        warnings=expected.warnings,
        code=expected.code,
        message=expected.message,
        audit={"workloadspread": "ws"},
        spread="ws",
    )
    assert committer.calls == [("default", "ws", MONOTONIC_NOW + 2.5, False)]


def test_a_delete_whose_spread_is_gone_at_commit_is_skipped_and_other_errors_raise() -> None:
    assert _service(Failing(SpreadNotFound("x"))).validate_pod(_delete()) == Decision(
        True, "skipped", message="WorkloadSpread is gone"
    )
    with pytest.raises(KeyError):
        _service(Failing(KeyError("boom"))).validate_pod(_delete())


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"resource": {"resource": "nodes"}}, "not a pod"),
        ({"resource": "pods"}, "not a pod"),
        ({"oldObject": None}, "DELETE without the old object"),
        ({"operation": "CREATE"}, "not a pod DELETE or eviction"),
        ({"operation": "DELETE", "subResource": "status"}, "not a pod DELETE or eviction"),
        ({"operation": "CREATE", "subResource": "eviction", "name": ""}, "eviction without a pod name"),
        (
            {"operation": "CREATE", "subResource": "eviction", "name": "p", "namespace": ""},
            "eviction without a pod name",
        ),
        ({"operation": "CREATE", "subResource": "eviction", "name": "nobody"}, "evicted pod not found"),
        ({"dryRun": True}, "dry run"),
        ({"options": {"dryRun": ["All"]}}, "dry run"),
        ({"oldObject": pod()}, "pod not admitted by a WorkloadSpread, or inactive"),
        (
            {"oldObject": pod(annotations={MATCHED_ANNOTATION: '{"name":"other","subset":"b"}'})},
            "annotated WorkloadSpread not found",
        ),
    ],
)
def test_a_delete_the_guards_turn_away(request_fields: dict[str, Any], message: str) -> None:
    decision = _service(Failing(AssertionError("nothing is submitted"))).validate_pod(
        _delete(**request_fields)
    )
    assert decision == Decision(True, "skipped", message=message)


def test_a_delete_with_options_not_asking_a_dry_run_is_committed() -> None:
    decision = _service().validate_pod(_delete(options={"dryRun": []}))
    assert decision.outcome == "released"


def test_a_delete_whose_namespace_comes_from_the_pod_is_released() -> None:
    decision = _service().validate_pod(_delete(namespace=""))
    assert (decision.outcome, decision.subset) == ("released", "b")


def _with_patch(patch: dict[str, Any]) -> SnapshotReader:
    cluster = _cluster()
    cluster[0]["spec"]["subsets"][1]["patch"] = patch
    return SnapshotReader(cluster)


def test_a_create_whose_subset_patch_does_not_apply_is_denied_naming_the_spread() -> None:
    reader = _with_patch({"spec": {"$patch": "nope"}})
    decision = _service(reader=reader, check_subset_patches=False).mutate_pod(_create())
    message = "the subset patch does not apply to the pod: spec.: unknown $patch directive 'nope'"
    assert decision == Decision(False, "denied", code=500, message=message, spread="ws")


def test_a_create_whose_subset_patch_is_refused_is_placed_without_it() -> None:
    """Without a validation engine the allowlist cannot be checked: the patch is left out."""
    decision = _service(reader=_with_patch({"metadata": {"labels": {"tier": "b"}}})).mutate_pod(_create())
    annotation = '{"name":"ws","subset":"b"}'
    assert decision == Decision(
        True,
        "patch-refused",
        patch=[
            {"op": "add", "path": "/metadata/annotations", "value": {MATCHED_ANNOTATION: annotation}},
            {"op": "add", "path": "/spec/affinity", "value": ZONE_B_AFFINITY},
        ],
        warnings=(
            "WorkloadSpread default/ws: the patch of subset 'b' was not applied, it sets what the subset "
            "patch allowlist refuses: no policy engine is configured to check the patch against the "
            "allowlist (`spreadgate validate` explains each)",
        ),
        audit={"workloadspread": "ws", "subset": "b", "subset-patch": "refused"},
        spread="ws",
        subset="b",
        pod=pod(
            annotations={MATCHED_ANNOTATION: annotation},
            spec={"containers": [{"name": "main", "image": "nginx"}], "affinity": ZONE_B_AFFINITY},
        ),
    )


def test_a_pod_without_a_name_is_recorded_under_the_generated_uid_and_carries_it() -> None:
    reader = SnapshotReader(_cluster())
    committer = RecordingCommitter(reader)
    decision = _service(committer, reader).mutate_pod(_create(pod(None)))
    annotation = '{"name":"ws","subset":"b","uid":"uid-1"}'
    assert decision.patch == [
        {"op": "add", "path": "/metadata/annotations", "value": {MATCHED_ANNOTATION: annotation}},
        {"op": "add", "path": "/spec/affinity", "value": ZONE_B_AFFINITY},
    ]
    assert _written_b(committer)["creatingPods"] == {"uid-1": "2024-06-01T12:00:00Z"}


def test_a_delete_annotated_for_a_spread_that_does_not_govern_the_pod_releases_nothing() -> None:
    """The pod's workload is governed by `other`: an annotation naming `ws` (added by an UPDATE)
    gives nothing back."""
    cluster = _cluster()
    other = spread([subset("x", 2)], name="other", target=("apps/v1", "ReplicaSet", "web-abc123"))
    reader = SnapshotReader([*cluster, other])
    decision = _service(Failing(AssertionError("nothing is submitted")), reader).validate_pod(_delete())
    assert decision == Decision(
        True, "skipped", message="WorkloadSpread ws does not govern the pod's workload; nothing to release"
    )


def test_a_delete_whose_owner_is_gone_is_taken_at_its_annotations_word() -> None:
    reader = SnapshotReader(_cluster()[:1])  # the ReplicaSet and Deployment are being collected
    decision = _service(reader=reader).validate_pod(_delete())
    assert (decision.outcome, decision.subset) == ("released", "b")


def _team_cluster() -> list[dict[str, Any]]:
    """`_cluster()` moved to namespace team-a."""
    moved = []
    for obj in _cluster():
        obj = copy.deepcopy(obj)
        obj["metadata"]["namespace"] = "team-a"
        moved.append(obj)
    return moved


@pytest.mark.parametrize(
    ("request_namespace", "pod_namespace"),
    [("team-a", "team-a"), ("", "team-a"), ("team-a", None)],
    ids=["both", "pod only", "request only"],
)
def test_a_create_and_a_delete_outside_the_default_namespace(
    request_namespace: str, pod_namespace: str | None
) -> None:
    reader = SnapshotReader(_team_cluster())
    committer = RecordingCommitter(reader)
    service = _service(committer, reader)
    created = pod(namespace=pod_namespace or "")
    if pod_namespace is None:
        del created["metadata"]["namespace"]
    placed = service.mutate_pod(_create(created, namespace=request_namespace))
    assert (placed.outcome, placed.spread, placed.subset) == ("patched", "ws", "b")
    # The patch is diffed against the pod as sent: the namespace read from the request is not added.
    assert placed.patch == [
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {MATCHED_ANNOTATION: '{"name":"ws","subset":"b"}'},
        },
        {"op": "add", "path": "/spec/affinity", "value": ZONE_B_AFFINITY},
    ]
    deleted = pod(
        namespace=pod_namespace or "", annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"b"}'}
    )
    deleted["metadata"]["name"] = "web-abc123-x2"
    if pod_namespace is None:
        del deleted["metadata"]["namespace"]
    released = service.validate_pod(_delete(deleted, namespace=request_namespace))
    assert released == Decision(
        True, "released", audit={"workloadspread": "ws", "subset": "b"}, spread="ws", subset="b"
    )
    assert [_namespace_and_name(w) for w in committer.writes] == [("team-a", "ws"), ("team-a", "ws")]


def _namespace_and_name(written: dict[str, Any]) -> tuple[str, str]:
    return written["metadata"]["namespace"], written["metadata"]["name"]


def test_the_configured_versioned_kinds_decide_the_ledger_written() -> None:
    """With no kind versioned, a ReplicaSet's pod counts in the `versionIgnored` ledger, opened
    from the spec with nothing counted: subset a (cap 1, full in the `abc123` ledger) has room."""
    reader = SnapshotReader(_cluster())
    committer = RecordingCommitter(reader)
    decision = _service(committer, reader, versioned_kinds=frozenset()).mutate_pod(_create())
    assert decision.subset == "a"
    versioned = committer.writes[0]["status"]["versionedSubsetStatuses"]
    assert versioned["versionIgnored"] == [
        {
            "name": "a",
            "replicas": 0,
            "missingReplicas": 0,
            "creatingPods": {"web-abc123-x1": "2024-06-01T12:00:00Z"},
        },
        {"name": "b", "replicas": 0, "missingReplicas": 3},
        {"name": "c", "replicas": 0, "missingReplicas": -1},
    ]


class _ScaledUp(SnapshotReader):
    """The watch cache still shows 2 replicas; the API server already has 8."""

    def fresh_lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        fresh = SnapshotReader(deployment_chain(8))
        return fresh.lookup(api_version, kind, namespace, name)


def test_a_create_full_under_the_cached_count_asks_the_api_server() -> None:
    ws = spread(
        [subset("a", "50%", "z1")],
        status=versioned("abc123", {"name": "a", "replicas": 1, "missingReplicas": 0}),
    )
    reader = _ScaledUp([ws, *deployment_chain(2)])
    decision = _service(reader=reader).mutate_pod(_create())
    assert (decision.outcome, decision.subset) == ("patched", "a")  # 50 % of 8 is 4, one held
