"""The offline pieces asserted whole: the AdmissionReview requests `OfflineAdmission` sends, the
outcome it reads back, `SnapshotReader.replace_spread` and the eligibility pass-through
(py_engine/workloadspread/admission/offline.py, snapshot.py, eligibility.py; mutation survivors
of run A2, MUTATION-admission.md)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from admission_builders import NOW, deployment_chain, pod, spread, subset, versioned

from py_engine.model import MATCHED_ANNOTATION
from py_engine.placement import eligibility as placement
from py_engine.policy import PolicyEngine, create_engine
from py_engine.workloadspread.admission import eligibility
from py_engine.workloadspread.admission.offline import AdmissionOutcome, OfflineAdmission
from py_engine.workloadspread.admission.ports import SpreadNotFound
from py_engine.workloadspread.admission.recording import RecordingCommitter
from py_engine.workloadspread.admission.service import Decision, ServiceConfig
from py_engine.workloadspread.admission.snapshot import SnapshotReader

PODS = {"group": "", "version": "v1", "resource": "pods"}
PLACED_B = '{"name":"ws","subset":"b"}'


def _cluster() -> list[dict[str, Any]]:
    ws = spread(
        [subset("a", 1), subset("b", 3)],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 1, "missingReplicas": 0},
            {"name": "b", "replicas": 1, "missingReplicas": 2},
        ),
    )
    return [ws, *deployment_chain(6)]


class _Spy:
    """Stands in for the service: records each request and answers `decision`."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def mutate_pod(self, request: dict[str, Any]) -> Decision:
        self.requests.append(("mutate", request))
        return self.decision

    def validate_pod(self, request: dict[str, Any]) -> Decision:
        self.requests.append(("validate", request))
        return self.decision


def test_each_operation_sends_the_request_the_api_server_would() -> None:
    admission = OfflineAdmission(_cluster(), NOW, generated_uid="u")
    spy = _Spy(Decision(True, "allowed", message="spied"))
    admission.service = spy  # type: ignore[assignment]
    the_pod = pod("web-abc123-x1", namespace="team-a")
    admission.create(the_pod)
    admission.delete(the_pod)
    admission.evict(the_pod)
    common = {"uid": "offline", "namespace": "team-a", "name": "web-abc123-x1", "resource": PODS}
    assert spy.requests == [
        ("mutate", {**common, "operation": "CREATE", "object": the_pod}),
        ("validate", {**common, "operation": "DELETE", "oldObject": the_pod}),
        (
            "validate",
            {
                **common,
                "operation": "CREATE",
                "subResource": "eviction",
                "object": {
                    "apiVersion": "policy/v1",
                    "kind": "Eviction",
                    "metadata": {"name": "web-abc123-x1"},
                },
            },
        ),
    ]
    assert admission.snapshot.pod("team-a", "web-abc123-x1") is the_pod, "the evicted pod joins the snapshot"


def test_an_eviction_gives_the_slot_back_and_says_so() -> None:
    admission = OfflineAdmission(_cluster(), NOW, generated_uid="u")
    placed = pod(annotations={MATCHED_ANNOTATION: PLACED_B})
    outcome = admission.evict(placed)
    assert outcome.message == "WorkloadSpread default/ws: slot of subset 'b' given back"
    assert (outcome.allowed, outcome.subset, outcome.status_written, outcome.patch) == (True, "b", True, [])
    assert outcome.spread is not None and outcome.spread_before is not None
    entries = outcome.spread["status"]["versionedSubsetStatuses"]["abc123"]
    assert entries[1]["missingReplicas"] == 3 and entries[1]["deletingPods"] == {
        "web-abc123-x1": "2024-06-01T12:00:00Z"
    }
    assert outcome.spread_before["status"]["versionedSubsetStatuses"]["abc123"][1]["missingReplicas"] == 2


def test_a_delete_that_changes_nothing_says_so() -> None:
    admission = OfflineAdmission(_cluster(), NOW, generated_uid="u")
    unknown = pod(annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"zz"}'})
    outcome = admission.delete(unknown)
    assert outcome == AdmissionOutcome(
        allowed=True,
        subset=None,
        patch=[],
        pod=unknown,
        status_written=False,
        spread=_cluster()[0],
        warnings=(),
        message="WorkloadSpread default/ws: no status change",
        code=200,
        spread_before=_cluster()[0],
    )


def test_a_create_outcome_is_read_back_whole() -> None:
    admission = OfflineAdmission(_cluster(), NOW, generated_uid="u")
    outcome = admission.create(pod())
    assert outcome.message == "WorkloadSpread default/ws: admitted into subset 'b'"
    assert outcome.to_json() == {
        "allowed": True,
        "subset": "b",
        "patch": [
            {"op": "add", "path": "/metadata/annotations", "value": {MATCHED_ANNOTATION: PLACED_B}},
            # The affinity objects are created even for a subset without a node selector (§2.2 step 2).
            {"op": "add", "path": "/spec/affinity", "value": {"nodeAffinity": {}}},
        ],
        "pod": pod(
            annotations={MATCHED_ANNOTATION: PLACED_B},
            spec={"containers": [{"name": "main", "image": "nginx"}], "affinity": {"nodeAffinity": {}}},
        ),
        "statusWritten": True,
        "workloadSpread": admission.snapshot.spread("default", "ws"),
        "warnings": [],
        "message": "WorkloadSpread default/ws: admitted into subset 'b'",
    }


def test_a_create_without_room_says_the_pod_is_admitted_unchanged_or_stripped() -> None:
    full = spread(
        [subset("a", 1)], status=versioned("abc123", {"name": "a", "replicas": 1, "missingReplicas": 0})
    )
    admission = OfflineAdmission([full, *deployment_chain(6)], NOW, generated_uid="u")
    plain = admission.create(pod())
    forged = admission.create(pod("web-abc123-x2", annotations={MATCHED_ANNOTATION: PLACED_B}))
    assert plain.message == "WorkloadSpread default/ws: no subset chosen; pod admitted unchanged"
    assert (
        forged.message
        == "WorkloadSpread default/ws: no subset chosen; pod admitted with its annotation removed"
    )


def test_a_pod_no_spread_governs_is_said_so() -> None:
    admission = OfflineAdmission(deployment_chain(6), NOW, generated_uid="u")
    assert admission.create(pod()).message == "no WorkloadSpread in the namespace"
    assert admission.delete(pod(annotations={MATCHED_ANNOTATION: PLACED_B})).message == (
        "annotated WorkloadSpread not found"
    )


# ------------------------------------------------------------------ snapshot


def test_replace_spread_replaces_only_the_spread_of_that_namespace_and_name() -> None:
    mine = spread([subset("a")], name="ws", namespace="team-a")
    namesake = spread([subset("a")], name="ws", namespace="team-b")
    sibling = spread([subset("a")], name="other", namespace="team-a")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ws", "namespace": "team-a"},
    }
    reader = SnapshotReader([deployment, namesake, sibling, mine])
    written = {**mine, "status": {"observedGeneration": 1}}
    reader.replace_spread(written)
    assert reader.spread("team-a", "ws") is written
    assert reader.spread("team-b", "ws") is namesake and reader.spread("team-a", "other") is sibling
    assert reader.lookup("apps/v1", "Deployment", "team-a", "ws") is deployment
    assert len(reader.objects) == 4


def test_replace_spread_adds_a_spread_it_did_not_hold() -> None:
    reader = SnapshotReader([spread([subset("a")], name="ws", namespace="team-a")])
    fresh = spread([subset("a")], name="new", namespace="team-a")
    reader.replace_spread(fresh)
    assert reader.spread("team-a", "new") is fresh and len(reader.objects) == 2


# --------------------------------------------------------------- eligibility


@pytest.mark.parametrize("spec", [None, [], "subsets"])
def test_a_spread_whose_spec_is_not_an_object_has_no_subsets(spec: Any) -> None:
    assert eligibility.spread_subsets({"spec": spec}) is None
    assert eligibility.spread_subsets({}) is None


def test_decide_subsets_hands_everything_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, ...]] = []

    def fake(*args: Any, **kwargs: Any) -> str:
        seen.append((*args, kwargs))
        return "decision"

    monkeypatch.setattr(placement, "decide_subsets", fake)
    subsets = [{"name": "a"}]
    args = (
        "engine",
        {"pod": 1},
        {"spec": {"subsets": subsets}},
        [{"name": "a"}],
        [{"node": 1}],
        "cache",
        "inputs",
    )
    decided: Any = eligibility.decide_subsets(*args, nodes_version="v7")  # type: ignore[arg-type]
    assert decided == "decision"
    assert seen == [
        (
            "engine",
            {"pod": 1},
            subsets,
            [{"name": "a"}],
            [{"node": 1}],
            "cache",
            "inputs",
            {"nodes_version": "v7"},
        )
    ]
    assert seen[0][2] is subsets, "the stored list itself (its trimmed form is reused)"


def test_replace_spread_keeps_the_key_of_a_spread_stored_under_kruises_group() -> None:
    """A spread read as Kruise's (apps.kruise.io) and written back as Spreadgate's is the same
    object: it replaces the stored one instead of joining it."""
    kruise = spread([subset("a")], name="ws", namespace="team-a")
    kruise["apiVersion"] = "apps.kruise.io/v1alpha1"
    reader = SnapshotReader([kruise])
    written = {**spread([subset("a")], name="ws", namespace="team-a"), "status": {"observedGeneration": 1}}
    reader.replace_spread(written)
    assert list(reader.objects.values()) == [written]
    assert reader.spreads_in("team-a") == [written]


# ----------------------------------------------------------------- recording


def test_the_recording_committer_names_a_missing_spread_and_hands_apply_a_copy() -> None:
    stored = spread([subset("a")], namespace="team-a")
    reader = SnapshotReader([stored])
    committer = RecordingCommitter(reader)
    seen: list[dict[str, Any]] = []

    def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        seen.append(obj)
        obj["status"] = {"touched": True}  # a copy: the snapshot's object is not changed
        return None, "nothing to write"

    assert committer.submit("team-a", "ws", apply, 0.0) == "nothing to write"
    assert seen[0] is not stored and "status" not in stored and committer.writes == []
    with pytest.raises(SpreadNotFound) as info:
        committer.submit("team-b", "ws", apply, 0.0)
    assert (info.value.message, info.value.reason) == ("WorkloadSpread team-b/ws not found", "NotFound")


def test_the_snapshots_nodes_make_the_inventory_less_what_their_pods_request() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z1"}},
        "status": {"allocatable": {"cpu": "2", "memory": "1Gi", "pods": "10"}},
    }
    bound = pod(
        "p1",
        spec={"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
    )
    inventory = SnapshotReader([node, bound, *deployment_chain(2)]).node_inventory()
    assert inventory is not None and list(inventory) == [
        {
            "name": "n1",
            "labels": {"topology.kubernetes.io/zone": "z1"},
            "taints": [],
            "unschedulable": False,
            "free": {"cpu": 1.5, "memory": 1073741824, "pods": 9},
        }
    ]


def test_objects_without_a_kind_or_a_name_are_not_indexed() -> None:
    reader = SnapshotReader([{"kind": "Pod", "metadata": {}}, {"metadata": {"name": "p"}}])
    assert reader.objects == {}


def test_an_admission_outside_the_default_namespace_reads_its_own_spread() -> None:
    cluster = copy.deepcopy(_cluster())
    for obj in cluster:
        obj["metadata"]["namespace"] = "team-a"
    namesake = spread([subset("a", 1), subset("b", 3)])  # `ws` in `default`, never the pod's
    admission = OfflineAdmission([namesake, *cluster], NOW, generated_uid="u")
    outcome = admission.create(pod(namespace="team-a"))
    assert outcome.message == "WorkloadSpread team-a/ws: admitted into subset 'b'"
    assert outcome.spread is admission.snapshot.spread("team-a", "ws")
    assert outcome.spread_before is cluster[0]


def test_an_answer_naming_no_spread_is_summarised_so() -> None:
    admission = OfflineAdmission(_cluster(), NOW, generated_uid="u")
    admission.service = _Spy(Decision(True, "allowed"))  # type: ignore[assignment]
    outcome = admission.create(pod())
    assert (outcome.message, outcome.spread, outcome.spread_before) == (
        "no WorkloadSpread governs this pod",
        None,
        None,
    )


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


def _zoned_spread(patched: str) -> dict[str, Any]:
    tier = {"patch": {"metadata": {"labels": {"tier": patched}}}}
    return spread(
        [
            subset("a", 3, "z1", **(tier if patched == "a" else {})),
            subset("b", 3, "z2", **(tier if patched == "b" else {})),
        ]
    )


def test_the_offline_engine_checks_the_subsets_and_a_nameless_pod_is_keyed_by_the_given_uid(
    engine: PolicyEngine,
) -> None:
    """The pod asks for zone z2: the subset policy skips subset a (z1)."""
    in_z2 = pod(
        None, spec={"containers": [{"name": "main"}], "nodeSelector": {"topology.kubernetes.io/zone": "z2"}}
    )
    outcome = OfflineAdmission(
        [_zoned_spread("b"), *deployment_chain(6)], NOW, generated_uid="u-1", engine=engine
    ).create(in_z2)
    assert (outcome.subset, outcome.warnings) == ("b", ())
    assert outcome.pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": "abc123", "tier": "b"}
    assert outcome.pod["metadata"]["annotations"] == {
        MATCHED_ANNOTATION: '{"name":"ws","subset":"b","uid":"u-1"}'
    }
    assert outcome.spread is not None
    assert outcome.spread["status"]["versionedSubsetStatuses"]["abc123"][1]["creatingPods"] == {
        "u-1": "2024-06-01T12:00:00Z"
    }


def test_the_offline_validation_engine_alone_checks_the_subset_patch(engine: PolicyEngine) -> None:
    outcome = OfflineAdmission(
        [_zoned_spread("a"), *deployment_chain(6)], NOW, generated_uid="u", validation_engine=engine
    ).create(pod())
    assert (outcome.subset, outcome.warnings) == ("a", ())
    assert outcome.pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": "abc123", "tier": "a"}


def test_an_adaptive_spread_is_simulated_on_the_snapshots_nodes(engine: PolicyEngine) -> None:
    """Zone z1's only node has half a CPU free: a pod asking for one goes to subset b."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n-{zone}", "labels": {"topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
        }
        for zone, cpu in (("z1", "500m"), ("z2", "4"))
    ]
    adaptive = spread(
        [subset("a", 5, "z1"), subset("b", None, "z2")],
        status=versioned("abc123", {"name": "a", "missingReplicas": 5}, {"name": "b", "missingReplicas": -1}),
        scheduleStrategy={"type": "Adaptive", "adaptive": {}},
    )
    hungry = pod(spec={"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]})
    admission = OfflineAdmission(
        [adaptive, *nodes, *deployment_chain(6)], NOW, generated_uid="u", engine=engine
    )
    assert admission.create(hungry).subset == "b"


def test_the_configured_patch_allowlist_reaches_the_guard(engine: PolicyEngine) -> None:
    """`spec.hostPID` is beyond the default allowlist: refused, unless the configuration adds it."""
    host_pid = spread([subset("a", 3, patch={"spec": {"hostPID": True}})])

    def admitted(config: ServiceConfig) -> AdmissionOutcome:
        return OfflineAdmission(
            [host_pid, *deployment_chain(6)], NOW, generated_uid="u", engine=engine, config=config
        ).create(pod())

    refused = admitted(ServiceConfig())
    assert refused.subset == "a" and "hostPID" not in refused.pod["spec"]
    assert len(refused.warnings) == 1 and "spec.subsets[0].patch.spec.hostPID" in refused.warnings[0]
    widened = admitted(ServiceConfig(allowed_patch_fields=("spec.hostPID",)))
    assert (widened.subset, widened.warnings, widened.pod["spec"]["hostPID"]) == ("a", (), True)
