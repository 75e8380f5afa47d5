"""The admission service on watch caches of the embedded API server (no HTTP layer)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import webhook_testkit
from live_service import start_live_service
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from benchmarks.kube_objects import (
    controller_ref,
    create_deployment_and_replicaset,
    pod_create_request,
    replicaset_pod,
    workload,
)
from py_engine.apiclient import DEPLOYMENTS, NAMESPACES, REPLICASETS
from py_engine.model import MATCHED_ANNOTATION
from py_engine.policy import create_engine
from py_engine.semantics.clock import RealClock
from py_engine.validation.service import ValidationService
from py_engine.workloadspread.admission.runtime.service_view import LiveAdmissionView
from py_engine.workloadspread.admission.service import AdmissionService

# One engine for the module's lifetime: a regorus engine dropped by the garbage collector on
# another thread raises "unsendable" (reported to the policy engineer).
ENGINE = create_engine()


env = webhook_testkit.env  # the fixture, used by name


def make_service(env: KubeEnv, **config: Any) -> tuple[AdmissionService, LiveAdmissionView]:
    return start_live_service(env.client, ENGINE, **config)


@pytest.fixture
def objects(env: KubeEnv) -> dict[str, Any]:
    rs = create_deployment_and_replicaset(env.client, DEPLOYMENTS, REPLICASETS)
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 1}, {"name": "b"}]))
    return rs


@pytest.fixture
def service(env: KubeEnv, objects: dict[str, Any]) -> Iterator[AdmissionService]:
    svc, view = make_service(env)
    yield svc
    view.stop()


def pod_request(
    rs: dict[str, Any], name: str = "web-h-1", dry_run: bool = False, **meta: Any
) -> dict[str, Any]:
    pod = replicaset_pod(rs["metadata"]["uid"], name=name)
    pod["metadata"].update(meta)
    return pod_create_request(pod, dry_run=dry_run)


def status_of(env: KubeEnv) -> Any:
    return (env.client.get(SPREADS, "default", "ws").get("status") or {}).get("versionedSubsetStatuses")


def test_create_reserves_patches_and_dry_run_writes_nothing(
    env: KubeEnv, service: AdmissionService, objects: dict[str, Any]
) -> None:
    dry = service.mutate_pod(pod_request(objects, dry_run=True))
    assert dry.outcome == "patched" and dry.audit["subset"] == "a"
    assert status_of(env) is None
    first = service.mutate_pod(pod_request(objects))
    assert first.outcome == "patched" and first.audit == {"workloadspread": "ws", "subset": "a"}
    assert any(op["path"].startswith("/metadata/annotations") for op in first.patch or [])
    second = service.mutate_pod(pod_request(objects, name="web-h-2"))
    assert second.audit["subset"] == "b"
    entries = {e["name"]: e for e in status_of(env)["h"]}
    assert set(entries["a"]["creatingPods"]) == {"web-h-1"} and entries["a"]["missingReplicas"] == 0
    # Idempotent re-admission of the same pod name: same subset, nothing more written.
    assert service.mutate_pod(pod_request(objects)).audit["subset"] == "a"


def test_skips_mirror_ownerless_and_foreign_operations(
    service: AdmissionService, objects: dict[str, Any]
) -> None:
    mirror = pod_request(objects, annotations={"kubernetes.io/config.mirror": "x"})
    assert service.mutate_pod(mirror).outcome == "skipped"
    orphan = pod_request(objects)
    orphan["object"]["metadata"]["ownerReferences"] = []
    assert service.mutate_pod(orphan).outcome == "skipped"
    assert service.mutate_pod({**pod_request(objects), "operation": "UPDATE"}).outcome == "skipped"
    assert service.mutate_pod({**pod_request(objects), "object": None}).code == 400


def test_delete_releases_the_slot(env: KubeEnv, service: AdmissionService, objects: dict[str, Any]) -> None:
    service.mutate_pod(pod_request(objects))
    pod = pod_request(objects)["object"]
    pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'}
    pod["metadata"]["name"] = "web-h-old"
    decision = service.validate_pod(
        {
            "uid": "d",
            "operation": "DELETE",
            "namespace": "default",
            "name": "web-h-old",
            "resource": {"resource": "pods"},
            "oldObject": pod,
        }
    )
    assert decision.allowed and decision.outcome == "released"
    entries = {e["name"]: e for e in status_of(env)["h"]}
    assert set(entries["a"]["deletingPods"]) == {"web-h-old"} and entries["a"]["missingReplicas"] == 1


def test_commit_failure_modes(env: KubeEnv, objects: dict[str, Any]) -> None:
    env.faults.set_spec("workloadspreads/status:update:conflict=1")
    for mode, allowed in (("deny", False), ("allow-unmodified", True)):
        svc, view = make_service(env, on_commit_failure=mode, commit_timeout=0.2)
        try:
            decision = svc.mutate_pod(pod_request(objects))
            assert decision.allowed is allowed and decision.outcome == "commit-failed"
            assert decision.patch is None
            assert "nothing was written" in (decision.message + " ".join(decision.warnings))
            pod = pod_request(objects)["object"]
            pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'}
            delete = svc.validate_pod(
                {
                    "uid": "d",
                    "operation": "DELETE",
                    "namespace": "default",
                    "resource": {"resource": "pods"},
                    "oldObject": pod,
                }
            )
            assert delete.allowed and delete.warnings  # deletes fail open
        finally:
            view.stop()
    env.faults.clear()
    assert status_of(env) is None


def test_allow_unmodified_removes_a_matched_annotation_the_pod_arrived_with(
    env: KubeEnv, objects: dict[str, Any]
) -> None:
    """Admitted without a subset because the reservation could not be written: a matched
    annotation the pod carried (either key) is removed, so its DELETE frees nothing."""
    env.faults.set_spec("workloadspreads/status:update:conflict=1")
    svc, view = make_service(env, on_commit_failure="allow-unmodified", commit_timeout=0.2)
    try:
        forged = '{"name":"ws","subset":"a"}'
        request = pod_request(
            objects, annotations={MATCHED_ANNOTATION: forged, "apps.kruise.io/matched-workloadspread": forged}
        )
        decision = svc.mutate_pod(request)
        assert decision.allowed and decision.outcome == "commit-failed"
        assert sorted(op["path"] for op in decision.patch or []) == [
            "/metadata/annotations/apps.kruise.io~1matched-workloadspread",
            "/metadata/annotations/spreadgate.dev~1matched-workloadspread",
        ]
        assert all(op["op"] == "remove" for op in decision.patch or [])
    finally:
        view.stop()
        env.faults.clear()


def test_a_pod_no_spread_governs_loses_spreadgates_key_only(
    env: KubeEnv, service: AdmissionService, objects: dict[str, Any]
) -> None:
    solo = env.client.create(REPLICASETS, "default", workload("ReplicaSet", "solo"))
    forged = '{"name":"ws","subset":"a"}'
    request = pod_request(
        objects,
        name="solo-1",
        annotations={MATCHED_ANNOTATION: forged, "apps.kruise.io/matched-workloadspread": forged},
    )
    request["object"]["metadata"]["ownerReferences"] = [
        controller_ref("ReplicaSet", "solo", solo["metadata"]["uid"])
    ]
    wait_until(
        lambda: service.view.lookup("apps/v1", "ReplicaSet", "default", "solo") is not None, 5, "solo cached"
    )
    decision = service.mutate_pod(request)
    assert decision.allowed and decision.outcome == "skipped"
    # Kruise's key may be Kruise's own (a Kruise spread during a migration): left alone.
    assert decision.patch == [
        {"op": "remove", "path": "/metadata/annotations/spreadgate.dev~1matched-workloadspread"}
    ]


def test_workloadspread_validation_reads_the_caches(env: KubeEnv, service: AdmissionService) -> None:
    """The validation service over the same live view (its `ValidationReader`)."""
    validation = ValidationService(service.view, ENGINE)  # type: ignore[arg-type]
    dup = validation.review_workloadspread(
        {
            "uid": "v",
            "operation": "CREATE",
            "namespace": "default",
            "object": spread("other", [{"name": "x"}]),
        }
    )
    assert not dup.allowed and dup.code == 422 and "targetRef" in dup.message
    old = spread("ws", [{"name": "a"}])
    moved = spread("ws", [{"name": "a"}], target="elsewhere")
    upd = validation.review_workloadspread(
        {"uid": "v", "operation": "UPDATE", "namespace": "default", "object": moved, "oldObject": old}
    )
    assert not upd.allowed and "targetRef" in upd.message
    ok = validation.review_workloadspread(
        {
            "uid": "v",
            "operation": "CREATE",
            "namespace": "default",
            "object": spread("fine", [{"name": "x"}], target="free"),
        }
    )
    assert ok.allowed


def test_spreads_in_lists_one_namespace_in_name_order_and_follows_changes(env: KubeEnv) -> None:
    """The view answers `spreads_in` from a namespace index of its spread cache: only that
    namespace's spreads, in name order (the API's list order), kept as spreads come and go."""
    env.client.create(
        NAMESPACES, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}
    )
    for name, namespace in (("zeta", "default"), ("alpha", "default"), ("mid", "other"), ("beta", "default")):
        env.client.create(SPREADS, namespace, spread(name, [{"name": "a"}], namespace=namespace))
    view = LiveAdmissionView(env.client, RealClock(), node_simulation=False, watch_timeout_seconds=30).start()
    try:
        assert view.wait_ready(10)
        names = lambda namespace: [s["metadata"]["name"] for s in view.spreads_in(namespace)]  # noqa: E731
        assert (
            names("default") == ["alpha", "beta", "zeta"]
            and names("other") == ["mid"]
            and names("none") == []
        )
        env.client.delete(SPREADS, "default", "beta")
        env.client.create(SPREADS, "other", spread("aa", [{"name": "a"}], namespace="other"))
        wait_until(
            lambda: names("default") == ["alpha", "zeta"] and names("other") == ["aa", "mid"],
            5,
            "the index follows a delete and a create",
        )
    finally:
        view.stop()
