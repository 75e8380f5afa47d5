"""The admission service enforces the subset patch allowlist on both sides: the validating
webhook refuses such a spread, and the mutating webhook leaves the patch of a spread that
got stored anyway (before the rule existed, or while validation was down) out of the pod,
admitting it into its subset with a warning. `--allow-patch-field` widens both sides."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import webhook_testkit
from live_service import start_live_service
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from benchmarks.kube_objects import create_deployment_and_replicaset, pod_create_request, replicaset_pod
from py_engine.apiclient import DEPLOYMENTS, REPLICASETS
from py_engine.policy import create_engine
from py_engine.validation.service import ValidationConfig, ValidationService
from py_engine.workloadspread.admission.runtime.service_view import LiveAdmissionView
from py_engine.workloadspread.admission.service import AdmissionService

# One engine for the module's lifetime (see tests/workloadspread/admission/test_service.py).
ENGINE = create_engine()
PRIVILEGED = {
    "metadata": {"labels": {"cost": "spot"}},
    "spec": {"hostPID": True, "containers": [{"name": "c", "securityContext": {"privileged": True}}]},
}


env = webhook_testkit.env  # the fixture, used by name


@pytest.fixture
def rs(env: KubeEnv) -> dict[str, Any]:
    replica_set = create_deployment_and_replicaset(env.client, DEPLOYMENTS, REPLICASETS)
    # Stored directly: the embedded API server runs no validating webhook here, as in a cluster
    # where the spread predates the rule or validation was down.
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a", "patch": PRIVILEGED}]))
    return replica_set


@pytest.fixture
def service_factory(env: KubeEnv, rs: dict[str, Any]) -> Iterator[Any]:
    views: list[LiveAdmissionView] = []

    def make(**config: Any) -> AdmissionService:
        service, view = start_live_service(env.client, ENGINE, **config)
        views.append(view)
        return service

    yield make
    for view in views:
        view.stop()


def validation_of(service: AdmissionService, **config: Any) -> ValidationService:
    """The validation service over `service`'s live view, as the webhook builds it."""
    return ValidationService(service.view, ENGINE, config=ValidationConfig(**config))  # type: ignore[arg-type]


def pod_request(rs: dict[str, Any], name: str) -> dict[str, Any]:
    return pod_create_request(replicaset_pod(rs["metadata"]["uid"], name=name))


def _paths(patch: list[dict[str, Any]] | None) -> list[str]:
    return [op["path"] for op in patch or []]


def test_stored_forbidden_patch_is_left_out_with_a_warning(service_factory: Any, rs: dict[str, Any]) -> None:
    service = service_factory()
    evaluations = service.patch_guard.evaluations
    for i in range(3):
        decision = service.mutate_pod(pod_request(rs, f"web-h-{i}"))
        assert decision.allowed and decision.outcome == "patch-refused"
        assert decision.audit == {"workloadspread": "ws", "subset": "a", "subset-patch": "refused"}
        paths = _paths(decision.patch)
        assert "/metadata/annotations" in paths  # placed in its subset all the same
        assert not any("hostPID" in p or "securityContext" in p or "cost" in p for p in paths)
        assert "spec.subsets[0].patch.spec.hostPID" in decision.warnings[-1]
        assert "spec.subsets[0].patch.spec.containers[0].securityContext" in decision.warnings[-1]
    assert service.patch_guard.evaluations - evaluations == 1, "decided once per spread generation"


def test_widened_allowlist_applies_the_patch(service_factory: Any, rs: dict[str, Any]) -> None:
    service = service_factory(allowed_patch_fields=("spec.hostPID", "spec.containers[].securityContext"))
    decision = service.mutate_pod(pod_request(rs, "web-h-1"))
    assert decision.outcome == "patched" and decision.warnings == ()
    assert {"/spec/hostPID", "/metadata/labels/cost"} <= set(_paths(decision.patch))


def test_validating_webhook_refuses_and_honours_the_flag(
    env: KubeEnv, service_factory: Any, rs: dict[str, Any]
) -> None:
    stored = env.client.get(SPREADS, "default", "ws")
    request = {"uid": "v", "operation": "CREATE", "namespace": "default", "name": "ws", "object": stored}
    refused = validation_of(service_factory()).review_workloadspread(request)
    assert not refused.allowed and refused.code == 422
    assert "spec.subsets[0].patch.spec.hostPID: Forbidden" in refused.message
    widened = ("spec.hostPID", "spec.containers[].securityContext")
    assert (
        validation_of(service_factory(), allowed_patch_fields=widened).review_workloadspread(request).allowed
    )


def test_update_keeping_a_stored_patch_is_accepted(
    env: KubeEnv, service_factory: Any, rs: dict[str, Any]
) -> None:
    """Ratcheting: a spread stored before the allowlist can still be edited; a changed patch is checked."""
    stored = env.client.get(SPREADS, "default", "ws")
    edited = {
        **stored,
        "spec": {**stored["spec"], "subsets": [{**stored["spec"]["subsets"][0], "maxReplicas": 2}]},
    }
    request = {
        "uid": "v",
        "operation": "UPDATE",
        "namespace": "default",
        "name": "ws",
        "object": edited,
        "oldObject": stored,
    }
    validation = validation_of(service_factory())
    assert validation.review_workloadspread(request).allowed
    changed = {
        **edited,
        "spec": {
            **edited["spec"],
            "subsets": [{**edited["spec"]["subsets"][0], "patch": {"spec": {"hostPID": True}}}],
        },
    }
    refused = validation.review_workloadspread({**request, "object": changed})
    assert not refused.allowed and "spec.subsets[0].patch.spec.hostPID" in refused.message
