"""Choosing and recording a subset at pod CREATE (docs/design-workloadspread.md §2.1.1-§2.1.3, §2.3)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from admission_builders import (
    NOW,
    NOW_TEXT,
    Objects,
    deployment_chain,
    make_ctx,
    owner_ref,
    pod,
    spread,
    subset,
    versioned,
    workload,
)

from py_engine.model import MATCHED_ANNOTATION
from py_engine.model.workloads import whitelist_from_entries
from py_engine.placement.eligibility import EligibilityCache
from py_engine.placement.inventory import NodeInventory
from py_engine.policy import PolicyEngine, create_engine
from py_engine.workloadspread.admission.choose import pod_ordinal
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError
from py_engine.workloadspread.admission.inject import inject
from py_engine.workloadspread.admission.offline import OfflineAdmission
from py_engine.workloadspread.admission.reserve import reserve_create

UID = "generated-1"


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


def _statuses(result: dict[str, Any] | None, version: str = "abc123") -> list[dict[str, Any]]:
    assert result is not None
    statuses: list[dict[str, Any]] = result["status"]["versionedSubsetStatuses"][version]
    return statuses


def _capped(*entries: tuple[str, int]) -> dict[str, Any]:
    subsets = [subset(name, 10) for name, _ in entries]
    return spread(
        subsets,
        status=versioned("abc123", *({"name": n, "replicas": 0, "missingReplicas": m} for n, m in entries)),
    )


def test_first_subset_with_room_takes_the_pod_and_records_it() -> None:
    ws = _capped(("a", 0), ("b", 2), ("c", 5))
    before = copy.deepcopy(ws)
    result = reserve_create(ws, pod(), make_ctx(deployment_chain()), generated_uid=UID)
    assert ws == before, "the input spread must not be mutated"
    assert (result.subset, result.uid, result.warnings) == ("b", "web-abc123-x1", ())
    statuses = _statuses(result.spread)
    assert statuses[1] == {
        "name": "b",
        "replicas": 0,
        "missingReplicas": 1,
        "creatingPods": {"web-abc123-x1": NOW_TEXT},
    }
    assert statuses[0] == before["status"]["versionedSubsetStatuses"]["abc123"][0]
    assert result.spread is not None and result.spread["spec"] == ws["spec"]
    assert result.spread["metadata"]["resourceVersion"] == "7"
    result.spread["metadata"]["resourceVersion"] = "8"
    assert ws["metadata"]["resourceVersion"] == "7", "metadata of the result is a copy"


def test_readmission_of_a_recorded_pod_writes_nothing() -> None:
    ws = _capped(("a", 2))
    first = reserve_create(ws, pod(), make_ctx(deployment_chain()), generated_uid=UID)
    assert first.spread is not None
    again = reserve_create(first.spread, pod(), make_ctx(deployment_chain()), generated_uid="other")
    assert (again.subset, again.spread) == ("a", None)
    deleting = _capped(("a", 0), ("b", 3))
    deleting["status"]["versionedSubsetStatuses"]["abc123"][0]["deletingPods"] = {"web-abc123-x1": NOW_TEXT}
    assert reserve_create(deleting, pod(), make_ctx(deployment_chain()), generated_uid=UID).subset == "a"


def test_a_handed_over_status_is_extended_in_place_with_the_same_outcome() -> None:
    ws = _capped(("a", 0), ("b", 3))
    ws["status"]["versionedSubsetStatuses"]["abc123"][1]["creatingPods"] = {"earlier": NOW_TEXT}
    copied = reserve_create(copy.deepcopy(ws), pod(), make_ctx(deployment_chain()), generated_uid=UID)
    owned = copy.deepcopy(ws)
    held = owned["status"]["versionedSubsetStatuses"]["abc123"][1]["creatingPods"]
    in_place = reserve_create(
        owned, pod(), make_ctx(deployment_chain()), generated_uid=UID, status_owned=True
    )
    assert in_place == copied
    # The map itself was extended, not copied: what a batch of hundreds of reservations saves.
    assert _statuses(in_place.spread)[1]["creatingPods"] is held and held == {
        "earlier": NOW_TEXT,
        "web-abc123-x1": NOW_TEXT,
    }
    # Nothing to write: nothing changes, even when the status is handed over.
    recorded = copy.deepcopy(in_place.spread)
    assert recorded is not None
    snapshot = copy.deepcopy(recorded)
    again = reserve_create(
        recorded, pod(), make_ctx(deployment_chain()), generated_uid=UID, status_owned=True
    )
    assert (again.subset, again.spread) == ("b", None) and recorded == snapshot


def test_generate_name_pod_is_keyed_by_the_generated_uid() -> None:
    ws = _capped(("a", 2))
    nameless = pod(None)
    result = reserve_create(ws, nameless, make_ctx(deployment_chain()), generated_uid=UID)
    assert result.uid == UID
    assert _statuses(result.spread)[0]["creatingPods"] == {UID: NOW_TEXT}
    mutated = inject(nameless, ws, "a", result.uid)
    assert (
        mutated["metadata"]["annotations"][MATCHED_ANNOTATION]
        == '{"name":"ws","subset":"a","uid":"generated-1"}'
    )
    # The committer re-applies after a 409 with the same uid: when its first write landed,
    # nothing more is taken.
    assert result.spread is not None
    again = reserve_create(result.spread, nameless, make_ctx(deployment_chain()), generated_uid=UID)
    assert (again.subset, again.spread, again.uid) == ("a", None, UID)
    with pytest.raises(ValueError, match="generated_uid"):
        reserve_create(ws, nameless, make_ctx(deployment_chain()), generated_uid="")


def test_unlimited_subset_writes_nothing_and_records_no_uid() -> None:
    ws = _capped(("a", 0), ("b", -1))
    nameless = pod(None)
    result = reserve_create(ws, nameless, make_ctx(deployment_chain()), generated_uid=UID)
    assert (result.subset, result.spread, result.uid) == ("b", None, "")
    annotation = inject(nameless, ws, "b", result.uid)["metadata"]["annotations"][MATCHED_ANNOTATION]
    assert annotation == '{"name":"ws","subset":"b"}'


def test_no_room_admits_unchanged_with_a_warning() -> None:
    ws = _capped(("a", 0), ("b", 0))
    result = reserve_create(ws, pod(), make_ctx(deployment_chain()), generated_uid=UID)
    assert (result.subset, result.spread) == (None, None)
    assert len(result.warnings) == 1 and "no subset has room" in result.warnings[0]


def test_single_unlimited_subset_shortcut_reads_no_status() -> None:
    ws = spread([subset("only")], status=versioned("abc123", {"name": "only", "missingReplicas": 0}))
    cache = Objects()
    result = reserve_create(ws, pod(), AdmissionContext(now=NOW, lookup=cache.lookup), generated_uid=UID)
    assert (result.subset, result.spread) == ("only", None)
    assert cache.calls == []


def test_empty_version_is_initialised_from_spec_ignoring_pods() -> None:
    ws = spread(
        [subset("a", "50%"), subset("b", "50%")],
        status={
            "subsetStatuses": [{"name": "a", "replicas": 9, "missingReplicas": 0}],
            "versionedSubsetStatuses": {"old": [{"name": "a", "missingReplicas": 0}]},
        },
    )
    result = reserve_create(ws, pod(), make_ctx(deployment_chain(replicas=5)), generated_uid=UID)
    assert result.subset == "a"
    assert result.spread is not None
    versions = result.spread["status"]["versionedSubsetStatuses"]
    assert versions["old"] == [{"name": "a", "missingReplicas": 0}]
    assert versions["abc123"] == [
        {"name": "a", "replicas": 0, "missingReplicas": 2, "creatingPods": {"web-abc123-x1": NOW_TEXT}},
        {"name": "b", "replicas": 0, "missingReplicas": 3},
    ]
    assert result.spread["status"]["subsetStatuses"] == ws["status"]["subsetStatuses"], "aggregate untouched"


def test_percentages_against_a_missing_workload_count_zero() -> None:
    ws = spread([subset("a", "50%"), subset("b", "50%")])
    result = reserve_create(
        ws,
        pod(owner=owner_ref("apps/v1", "ReplicaSet", "web-abc123")),
        make_ctx(deployment_chain()[1:]),
        generated_uid=UID,
    )
    assert result.subset is None


def test_integer_caps_need_no_workload_lookup() -> None:
    ws = spread([subset("a", 1), subset("b")])
    cache = Objects()
    result = reserve_create(ws, pod(), AdmissionContext(now=NOW, lookup=cache.lookup), generated_uid=UID)
    assert result.subset == "a" and cache.calls == []


@pytest.mark.parametrize(
    ("kinds", "version"),
    [
        (frozenset({"deployment", "replicaset"}), "abc123"),
        (frozenset({"deployment"}), "abc123"),
        (frozenset({"cloneset"}), "versionIgnored"),
        (frozenset(), "versionIgnored"),
    ],
)
def test_version_bucket_follows_enabled_kinds(kinds: frozenset[str], version: str) -> None:
    ws = spread([subset("a", 3), subset("b")])
    result = reserve_create(ws, pod(), make_ctx(deployment_chain(), versioned_kinds=kinds), generated_uid=UID)
    assert list(result.spread["status"]["versionedSubsetStatuses"]) == [version]  # type: ignore[index]


def test_rolling_update_counts_new_version_against_full_caps() -> None:
    ws = spread(
        [subset("a", 2), subset("b")],
        status=versioned("old111", {"name": "a", "missingReplicas": 0}, {"name": "b", "missingReplicas": -1}),
    )
    new_pod = pod(
        "web-new222-1",
        labels={"pod-template-hash": "new222"},
        owner=owner_ref("apps/v1", "ReplicaSet", "web-new222"),
    )
    result = reserve_create(ws, new_pod, make_ctx(), generated_uid=UID)
    assert result.subset == "a"
    assert _statuses(result.spread, "new222")[0]["missingReplicas"] == 1
    controller_revision = pod(
        "c-1",
        labels={"controller-revision-hash": "game-5f6d"},
        owner=owner_ref("apps.kruise.io/v1alpha1", "CloneSet", "game"),
    )
    ctx = make_ctx(versioned_kinds=frozenset({"cloneset"}))
    assert (
        "5f6d"
        in reserve_create(ws, controller_revision, ctx, generated_uid=UID).spread["status"][
            "versionedSubsetStatuses"
        ]
    )  # type: ignore[index]


def test_unschedulable_subset_is_skipped_and_status_order_wins() -> None:
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    ws = _capped(("a", 5), ("b", 5))
    ws["status"]["versionedSubsetStatuses"]["abc123"][0]["conditions"] = unschedulable
    assert reserve_create(ws, pod(), make_ctx(), generated_uid=UID).subset == "b"
    reordered = _capped(("a", 5), ("b", 5))
    reordered["status"]["versionedSubsetStatuses"]["abc123"].reverse()
    assert reserve_create(reordered, pod(), make_ctx(), generated_uid=UID).subset == "b"


def test_inactive_pod_gets_nothing() -> None:
    """The service's guard (`py_engine.workloadspread.admission.service`), run offline."""
    ws = _capped(("a", 5))
    finished = pod()
    finished["status"] = {"phase": "Succeeded"}
    outcome = OfflineAdmission([*deployment_chain(), ws], NOW, generated_uid=UID).create(finished)
    assert outcome.allowed and outcome.subset is None and not outcome.status_written and outcome.patch == []


def test_same_inputs_same_reservation() -> None:
    ws = _capped(("a", 1), ("b", 1))
    results = {repr(reserve_create(ws, pod(None), make_ctx(), generated_uid=UID)) for _ in range(3)}
    assert len(results) == 1


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web-0", 0),
        ("web-4", 4),
        ("web-5", 5),
        ("my-app-12", 12),
        ("noordinal", -1),
        ("web-", -1),
        ("web-99999999999", -1),
    ],
)
def test_pod_ordinal(name: str, expected: int) -> None:
    assert pod_ordinal(name) == expected


def _sts_spread(*caps: int | None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    names = "abcdef"
    return spread(
        [subset(names[i], cap) for i, cap in enumerate(caps)],
        target=("apps/v1", "StatefulSet", "db"),
        status=status,
    )


@pytest.mark.parametrize(
    ("ordinal", "expected"), [(0, "a"), (4, "a"), (5, "b"), (9, "b"), (10, "c"), (1000, "c")]
)
def test_statefulset_ordinal_thresholds(ordinal: int, expected: str) -> None:
    the_pod = pod(f"db-{ordinal}", owner=owner_ref("apps/v1", "StatefulSet", "db"))
    result = reserve_create(_sts_spread(5, 5, None), the_pod, make_ctx(), generated_uid=UID)
    assert (result.subset, result.spread) == (expected, None)


def test_statefulset_all_capped_and_unschedulable() -> None:
    owner = owner_ref("apps.kruise.io/v1beta1", "StatefulSet", "db")
    capped = _sts_spread(2, 2)
    capped["spec"]["targetRef"]["apiVersion"] = "apps.kruise.io/v1beta1"
    assert reserve_create(capped, pod("db-3", owner=owner), make_ctx(), generated_uid=UID).subset == "b"
    result = reserve_create(capped, pod("db-4", owner=owner), make_ctx(), generated_uid=UID)
    assert result.subset is None and result.warnings
    status = {"subsetStatuses": [{"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}]}
    skipping = _sts_spread(2, 2, None, status=status)
    assert reserve_create(skipping, pod("db-0", owner=owner), make_ctx(), generated_uid=UID).subset == "b"
    assert reserve_create(skipping, pod("db-2", owner=owner), make_ctx(), generated_uid=UID).subset == "c"


def test_job_parallelism_custom_path_and_replicas_paths() -> None:
    job_owner = owner_ref("batch/v1", "Job", "batch")
    ws = spread([subset("a", "50%"), subset("b", "50%")], target=("batch/v1", "Job", "batch"))
    result = reserve_create(
        ws,
        pod("j-1", owner=job_owner),
        make_ctx([workload("batch/v1", "Job", "batch", parallelism=3)]),
        generated_uid=UID,
    )
    assert _statuses(result.spread, "versionIgnored")[0]["missingReplicas"] == 1  # ceil(1.5) - 1

    tf_owner = owner_ref("kubeflow.org/v1", "TFJob", "tf")
    tf = workload(
        "kubeflow.org/v1", "TFJob", "tf", tfReplicaSpecs={"Worker": {"replicas": 6}, "PS": {"replicas": 2}}
    )
    filtered = spread(
        [subset("a", "50%"), subset("b", "50%")],
        target=("kubeflow.org/v1", "TFJob", "tf"),
        targetFilter={
            "selector": {},
            "replicasPathList": ["spec.tfReplicaSpecs.Worker.replicas", "spec.tfReplicaSpecs.PS.replicas"],
        },
    )
    whitelist = [
        {"group": "kubeflow.org", "kind": "TFJob", "replicasPath": "spec.tfReplicaSpecs.Worker.replicas"}
    ]
    ctx = make_ctx([tf], whitelist=whitelist_from_entries(whitelist))

    def second_missing(ws: dict[str, Any]) -> Any:
        created = reserve_create(ws, pod("tf-1", owner=tf_owner), ctx, generated_uid=UID)
        return _statuses(created.spread, "versionIgnored")[1]["missingReplicas"]

    assert second_missing(filtered) == 4
    unfiltered = spread([subset("a", "50%"), subset("b", "50%")], target=("kubeflow.org/v1", "TFJob", "tf"))
    assert second_missing(unfiltered) == 3
    filtered["spec"]["targetFilter"]["replicasPathList"] = ["spec.tfReplicaSpecs.Chief.replicas"]
    with pytest.raises(AdmissionError, match="replicasPathList"):
        reserve_create(filtered, pod("tf-1", owner=tf_owner), ctx, generated_uid=UID)


def test_unreadable_spread_is_an_admission_error() -> None:
    ws = spread([subset("a", "5.5%")])
    with pytest.raises(AdmissionError, match="cannot be read"):
        reserve_create(ws, pod(), make_ctx(), generated_uid=UID)


# ------------------------------------------------------------------- with the Rego subset policy


def test_policy_skips_subset_contradicting_the_pods_node_selector(engine: PolicyEngine) -> None:
    ws = spread(
        [subset("a", 5, zone="z1"), subset("b", 5, zone="z2")],
        status=versioned("abc123", {"name": "a", "missingReplicas": 5}, {"name": "b", "missingReplicas": 5}),
    )
    pinned = pod(
        spec={"nodeSelector": {"topology.kubernetes.io/zone": "z2"}, "containers": [{"name": "main"}]}
    )
    assert reserve_create(ws, pinned, make_ctx(), generated_uid=UID).subset == "a"  # reference: no such check
    result = reserve_create(ws, pinned, make_ctx(engine=engine), generated_uid=UID)
    assert result.subset == "b"
    assert _statuses(result.spread)[0]["missingReplicas"] == 5, "no slot taken in the skipped subset"


def _zone_nodes(cpu_a: float) -> NodeInventory:
    return NodeInventory(
        [
            {
                "name": "n-a",
                "labels": {"topology.kubernetes.io/zone": "z1"},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": cpu_a, "memory": 8 * 2**30, "pods": 10},
            },
            {
                "name": "n-b",
                "labels": {"topology.kubernetes.io/zone": "z2"},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": 4.0, "memory": 8 * 2**30, "pods": 10},
            },
        ]
    )


def _adaptive(**adaptive: Any) -> dict[str, Any]:
    return spread(
        [subset("a", 5, zone="z1"), subset("b", zone="z2")],
        status=versioned("abc123", {"name": "a", "missingReplicas": 5}, {"name": "b", "missingReplicas": -1}),
        scheduleStrategy={"type": "Adaptive", "adaptive": adaptive},
    )


HUNGRY = pod(spec={"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]})


def test_adaptive_node_fit_skips_a_full_subset_before_taking_a_slot(engine: PolicyEngine) -> None:
    full, roomy = _zone_nodes(0.5), _zone_nodes(2.0)
    assert (
        reserve_create(_adaptive(), HUNGRY, make_ctx(engine=engine, nodes=roomy), generated_uid=UID).subset
        == "a"
    )
    result = reserve_create(_adaptive(), HUNGRY, make_ctx(engine=engine, nodes=full), generated_uid=UID)
    assert (result.subset, result.spread) == ("b", None)
    # Simulation disabled, a Fixed spread, or no inventory: nodes are not consulted.
    disabled = _adaptive(disableSimulationSchedule=True)
    assert (
        reserve_create(disabled, HUNGRY, make_ctx(engine=engine, nodes=full), generated_uid=UID).subset == "a"
    )
    fixed = _adaptive()
    fixed["spec"]["scheduleStrategy"] = {"type": "Fixed"}
    assert reserve_create(fixed, HUNGRY, make_ctx(engine=engine, nodes=full), generated_uid=UID).subset == "a"
    assert reserve_create(_adaptive(), HUNGRY, make_ctx(engine=engine), generated_uid=UID).subset == "a"


def test_decision_cache_is_used_per_policy_input(engine: PolicyEngine) -> None:
    cache = EligibilityCache(8)
    ctx = make_ctx(engine=engine, nodes=_zone_nodes(0.5), decision_cache=cache)
    ws = _adaptive()
    for i in range(5):
        assert (
            reserve_create(ws, pod(f"web-abc123-{i}", spec=HUNGRY["spec"]), ctx, generated_uid=UID).subset
            == "b"
        )
    assert (cache.misses, cache.hits) == (1, 4)
    # A new node inventory (a different version) is a different input.
    ctx2 = make_ctx(engine=engine, nodes=_zone_nodes(2.0), decision_cache=cache)
    assert reserve_create(ws, HUNGRY, ctx2, generated_uid=UID).subset == "a"
    assert (cache.misses, cache.hits) == (2, 4)


# ------------------------------------------------ the single-unlimited-subset shortcut, and only it


def test_unlimited_first_subset_the_pod_may_not_use_is_skipped_for_a_later_one() -> None:
    """§2.1.1's shortcut (no status, no write) is for a spread with exactly one subset, and that
    subset unlimited. An unlimited *first* subset among several is an ordinary candidate: when it is
    Schedulable=False the pod goes to the next subset with room, which records the pod."""
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    ws = spread(
        [subset("a"), subset("b", 5)],
        status=versioned(
            "abc123",
            {"name": "a", "missingReplicas": -1, "conditions": unschedulable},
            {"name": "b", "missingReplicas": 5},
        ),
    )
    result = reserve_create(ws, pod(), make_ctx(), generated_uid=UID)
    assert result.subset == "b"
    assert _statuses(result.spread)[1]["creatingPods"] == {"web-abc123-x1": NOW_TEXT}
    assert _statuses(result.spread)[1]["missingReplicas"] == 4
    # The one real shortcut: a lone unlimited subset is taken without reading any status.
    lone = spread(
        [subset("a")],
        status=versioned("abc123", {"name": "a", "missingReplicas": -1, "conditions": unschedulable}),
    )
    assert (
        reserve_create(lone, pod(), make_ctx(), generated_uid=UID).subset,
        reserve_create(lone, pod(), make_ctx(), generated_uid=UID).spread,
    ) == ("a", None)


def test_unlimited_first_subset_contradicting_the_pod_is_skipped(engine: PolicyEngine) -> None:
    ws = spread(
        [subset("a", zone="z1"), subset("b", 5, zone="z2")],
        status=versioned("abc123", {"name": "a", "missingReplicas": -1}, {"name": "b", "missingReplicas": 5}),
    )
    pinned = pod(
        spec={"nodeSelector": {"topology.kubernetes.io/zone": "z2"}, "containers": [{"name": "main"}]}
    )
    result = reserve_create(ws, pinned, make_ctx(engine=engine), generated_uid=UID)
    assert result.subset == "b"
    assert _statuses(result.spread)[1]["missingReplicas"] == 4


# ----------------------------------------- what mutation testing found unpinned (docs/testing.md)


def test_the_no_room_warning_names_the_spread_the_version_and_every_skipped_subset() -> None:
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    ws = _capped(("a", 0), ("b", 3))
    del ws["metadata"]["namespace"]
    ws["status"]["versionedSubsetStatuses"]["abc123"][1]["conditions"] = unschedulable
    result = reserve_create(ws, pod(), make_ctx(), generated_uid=UID)
    assert (result.subset, result.spread, result.uid) == (None, None, "web-abc123-x1")
    assert result.warnings == (
        "WorkloadSpread default/ws: no subset has room for this pod (version abc123); admitted without "
        "subset constraints; skipped b: Schedulable condition is False "
        "(pods could not be scheduled there recently)",
    )
    full = reserve_create(_capped(("a", 0)), pod(), make_ctx(), generated_uid=UID)
    assert full.warnings == (
        "WorkloadSpread default/ws: no subset has room for this pod (version abc123); "
        "admitted without subset constraints",
    )


def test_the_no_room_warning_is_cut_to_240_characters() -> None:
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    names = [f"subset-with-a-long-name-{i}" for i in range(6)]
    ws = _capped(*((name, 3) for name in names))
    for entry in ws["status"]["versionedSubsetStatuses"]["abc123"]:
        entry["conditions"] = unschedulable
    (warning,) = reserve_create(ws, pod(), make_ctx(), generated_uid=UID).warnings
    assert len(warning) == 240 and warning.endswith("...")
    assert warning.startswith(
        "WorkloadSpread default/ws: no subset has room for this pod (version abc123); admitted "
        "without subset constraints; skipped subset-with-a-long-name-0: Schedulable condition"
    )
    exact = _capped(("a", 0))
    exact["metadata"]["name"] = "w" * (
        240 - len(reserve_create(_capped(("a", 0)), pod(), make_ctx(), generated_uid=UID).warnings[0]) + 2
    )
    (at_limit,) = reserve_create(exact, pod(), make_ctx(), generated_uid=UID).warnings
    assert len(at_limit) == 240 and not at_limit.endswith("...")  # exactly the limit: kept whole


def test_statefulset_and_shortcut_results_carry_the_pods_name() -> None:
    owner = owner_ref("apps/v1", "StatefulSet", "db")
    placed = reserve_create(_sts_spread(2, None), pod("db-1", owner=owner), make_ctx(), generated_uid=UID)
    assert (placed.subset, placed.uid) == ("a", "db-1")
    nowhere = reserve_create(_sts_spread(2, 2), pod("db-4", owner=owner), make_ctx(), generated_uid=UID)
    assert nowhere.uid == "db-4" and "(ordinal 4)" in nowhere.warnings[0]
    lone = reserve_create(spread([subset("a")]), pod(), make_ctx(), generated_uid=UID)
    assert (lone.subset, lone.spread, lone.uid) == ("a", None, "web-abc123-x1")


def test_statefulset_pods_are_checked_against_the_subset_policy(engine: PolicyEngine) -> None:
    owner = owner_ref("apps/v1", "StatefulSet", "db")
    ws = spread(
        [subset("a", 5, zone="z1"), subset("b", 5, zone="z2")], target=("apps/v1", "StatefulSet", "db")
    )
    pinned = pod(
        "db-0",
        owner=owner,
        spec={"nodeSelector": {"topology.kubernetes.io/zone": "z2"}, "containers": [{"name": "main"}]},
    )
    assert reserve_create(ws, pinned, make_ctx(engine=engine), generated_uid=UID).subset == "b"


def test_a_recorded_subset_gone_from_the_spec_admits_unchanged_with_a_warning() -> None:
    ws = _capped(("a", 2))
    ws["status"]["versionedSubsetStatuses"]["abc123"].append(
        {"name": "gone", "missingReplicas": 0, "creatingPods": {"web-abc123-x1": NOW_TEXT}}
    )
    result = reserve_create(ws, pod(), make_ctx(), generated_uid=UID)
    assert result == type(result)(
        None,
        None,
        "web-abc123-x1",
        ("WorkloadSpread default/ws: recorded subset 'gone' is no longer in the spec",),
    )


def _prod_chain(replicas: int) -> list[dict[str, Any]]:
    deploy = workload("apps/v1", "Deployment", "web", replicas=replicas, namespace="prod")
    rs = workload(
        "apps/v1",
        "ReplicaSet",
        "web-abc123",
        owner=owner_ref("apps/v1", "Deployment", "web"),
        namespace="prod",
        replicas=replicas,
    )
    return [deploy, rs]


def test_percentage_caps_read_the_workload_in_the_spreads_namespace() -> None:
    ws = spread([subset("a", "50%"), subset("b", "50%")], namespace="prod")
    result = reserve_create(ws, pod(namespace="prod"), make_ctx(_prod_chain(4)), generated_uid=UID)
    assert _statuses(result.spread)[0]["missingReplicas"] == 1  # 50% of 4, one slot taken
    # Statuses that exist follow the cached count (read in "prod"): a's 2 slots hold 1 pod, room for one.
    stale = _statuses(result.spread)
    stale[0]["missingReplicas"] = stale[1]["missingReplicas"] = 0
    ws["status"] = {"versionedSubsetStatuses": {"abc123": stale}}
    assert (
        reserve_create(
            ws, pod("web-abc123-x2", namespace="prod"), make_ctx(_prod_chain(4)), generated_uid=UID
        ).subset
        == "a"
    )


def test_full_under_the_cached_count_asks_the_api_in_the_spreads_namespace() -> None:
    ws = spread(
        [subset("a", "50%"), subset("b", "50%")],
        namespace="prod",
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 0, "missingReplicas": 0, "creatingPods": {"p1": NOW_TEXT}},
            {"name": "b", "replicas": 0, "missingReplicas": 0, "creatingPods": {"p2": NOW_TEXT}},
        ),
    )
    cached = make_ctx(_prod_chain(2))  # 50% of 2: one slot each, both taken
    assert reserve_create(ws, pod(namespace="prod"), cached, generated_uid=UID).subset is None
    fresh = make_ctx(_prod_chain(2), fresh_lookup=Objects(_prod_chain(8)).lookup)  # scaled up to 8
    assert reserve_create(ws, pod(namespace="prod"), fresh, generated_uid=UID).subset == "a"


def test_an_unreadable_spread_is_named_in_the_error() -> None:
    with pytest.raises(AdmissionError, match=r"^WorkloadSpread prod/broken cannot be read: "):
        reserve_create(
            spread([subset("a", "5.5%")], name="broken", namespace="prod"),
            pod(namespace="prod"),
            make_ctx(),
            generated_uid=UID,
        )


def test_the_no_room_warning_lists_every_skipped_subset() -> None:
    unschedulable = [{"type": "Schedulable", "status": "False", "reason": "PodUnschedulable"}]
    ws = _capped(("a", 3), ("b", 3))
    for entry in ws["status"]["versionedSubsetStatuses"]["abc123"]:
        entry["conditions"] = unschedulable
    (warning,) = reserve_create(ws, pod(), make_ctx(), generated_uid=UID).warnings
    assert (
        "; skipped a: Schedulable condition is False (pods could not be scheduled there recently); b: "
        "Schedulable"
    ) in warning  # cut at 240 characters after that


def test_statuses_of_a_synced_spread_with_integer_caps_need_no_workload_lookup() -> None:
    objects = Objects(deployment_chain())
    ctx = AdmissionContext(now=NOW, lookup=objects.lookup)
    ws = _capped(("a", 2))
    assert reserve_create(ws, pod(), ctx, generated_uid=UID).subset == "a"
    assert objects.calls == []


def test_a_nameless_pod_without_a_generated_uid_is_a_programming_error() -> None:
    with pytest.raises(
        ValueError, match=r"^reserve_create: generated_uid is required for a pod without a name$"
    ):
        reserve_create(_capped(("a", 2)), pod(None), make_ctx(), generated_uid="")
