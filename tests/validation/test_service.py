"""The validation service (py_engine/validation/service.py): a WorkloadSpread or UnitedDeployment
review in, a `Verdict` out, both kinds through the same steps (operation, object, policy, the
author's rights). The real Rego engine; the reader and the SubjectAccessReview port are fakes."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from benchmarks.kube_objects import united_deployment, workload_spread
from py_engine.policy import PolicyError, create_engine
from py_engine.semantics.clock import RealClock
from py_engine.validation.authorization import AccessAnswer, AccessReviewFailed, AuthorGate
from py_engine.validation.authorship import ResourceCheck, UserInfo
from py_engine.validation.service import ValidationConfig, ValidationService
from py_engine.validation.verdict import Verdict

pytestmark = pytest.mark.timeout(60)

ENGINE = create_engine()
NAMESPACE = "team-a"
EDITOR = {"username": "erin", "groups": ["web-editors"]}
STRANGER = {"username": "mallory", "groups": ["others"]}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": NAMESPACE},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        },
    },
}


def spread(name: str = "ws", target: str = "web", patch: Any = None) -> dict[str, Any]:
    subset: dict[str, Any] = {"name": "a", "maxReplicas": 1}
    if patch is not None:
        subset["patch"] = patch
    return workload_spread(name, [subset, {"name": "b"}], target=target, namespace=NAMESPACE)


def united(replicas: int = 2) -> dict[str, Any]:
    return united_deployment("ud", [{"name": "a"}, {"name": "b"}], replicas=replicas, namespace=NAMESPACE)


def invalid_spread() -> dict[str, Any]:
    return spread(patch={"spec": {"hostNetwork": True}})


def invalid_united() -> dict[str, Any]:
    obj = united()
    obj["spec"]["topology"]["subsets"].append({"name": "a"})  # a duplicate subset name
    return obj


KINDS = {
    "workloadspread": (ValidationService.review_workloadspread, spread, invalid_spread),
    "uniteddeployment": (ValidationService.review_uniteddeployment, united, invalid_united),
}


class Reader:
    def __init__(self, spreads: list[dict[str, Any]] | None = None, lookup_fails: bool = False) -> None:
        self.spreads = spreads or []
        self.lookup_fails = lookup_fails
        self.looked_up: list[tuple[str, str, str, str]] = []

    def spreads_in(self, namespace: str) -> list[dict[str, Any]]:
        return [s for s in self.spreads if s["metadata"]["namespace"] == namespace]

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        self.looked_up.append((api_version, kind, namespace, name))
        if self.lookup_fails:
            raise ConnectionError("the API server is unreachable")
        return DEPLOYMENT if (kind, namespace, name) == ("Deployment", NAMESPACE, "web") else None


class Grants:
    """`web-editors` may do anything with deployments in team-a."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.asked: list[ResourceCheck] = []

    def review(self, user: UserInfo, check: ResourceCheck) -> AccessAnswer:
        self.asked.append(check)
        if self.fail:
            raise AccessReviewFailed("connection refused")
        return AccessAnswer("web-editors" in user.groups and check.resource == "deployments")


class FailingEngine:
    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        raise PolicyError("the engine is down")

    def close(self) -> None:
        pass


def service(
    grants: Grants | None = None, reader: Reader | None = None, engine: Any = ENGINE, **config: Any
) -> ValidationService:
    gate = AuthorGate(grants, RealClock().monotonic) if grants is not None else None
    return ValidationService(reader or Reader(), engine, author_gate=gate, config=ValidationConfig(**config))


def request(obj: Any, operation: str = "CREATE", user: Any = EDITOR, old: Any = None) -> dict[str, Any]:
    req: dict[str, Any] = {
        "uid": "u-1",
        "operation": operation,
        "namespace": NAMESPACE,
        "object": obj,
        "userInfo": user,
    }
    if old is not None:
        req["oldObject"] = old
    return req


def verdict_of(verdict: Any) -> tuple[Any, ...]:
    """(allowed, outcome, code, reason) of a review's verdict."""
    return (verdict.allowed, verdict.outcome, verdict.code, verdict.reason)


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_object_by_an_allowed_author_is_allowed(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    grants = Grants()
    assert review(service(grants), request(valid())) == Verdict(True, "allowed")
    assert grants.asked, "the author's rights were checked"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("operation", ["DELETE", "CONNECT", ""])
def test_only_create_and_update_are_validated(kind: str, operation: str) -> None:
    review, _, invalid = KINDS[kind]
    verdict = review(service(Grants()), request(invalid(), operation))
    assert verdict == Verdict(True, "skipped", message="not a CREATE or UPDATE")


@pytest.mark.parametrize("kind", KINDS)
def test_an_object_of_another_kind_is_a_bad_request(kind: str) -> None:
    review, _, _ = KINDS[kind]
    other = united() if kind == "workloadspread" else spread()
    for obj in (other, None, {"kind": kind}):
        verdict = review(service(), request(obj))
        assert verdict_of(verdict) == (False, "error", 400, "BadRequest")


@pytest.mark.parametrize("kind", KINDS)
def test_violations_are_one_422_and_the_author_is_not_asked(kind: str) -> None:
    review, _, invalid = KINDS[kind]
    grants = Grants()
    verdict = review(service(grants), request(invalid(), user=STRANGER))
    assert verdict_of(verdict) == (False, "invalid", 422, "Invalid")
    assert verdict.message and grants.asked == []


@pytest.mark.parametrize("kind", KINDS)
def test_an_engine_that_fails_or_is_missing_is_a_500(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    failed = review(service(engine=FailingEngine()), request(valid()))
    assert verdict_of(failed) == (False, "error", 500, "InternalError")
    assert "validation failed to run: the engine is down" in failed.message
    missing = review(service(engine=None), request(valid()))
    assert (missing.allowed, missing.code) == (
        False,
        500,
    ) and "no policy engine configured" in missing.message


@pytest.mark.parametrize("kind", KINDS)
def test_an_author_without_the_rights_is_forbidden(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    verdict = review(service(Grants()), request(valid(), user=STRANGER))
    assert verdict_of(verdict) == (False, "forbidden", 403, "Forbidden")
    assert 'user "mallory" may not' in verdict.message


@pytest.mark.parametrize("kind", KINDS)
def test_a_check_that_cannot_be_made_denies_and_a_bad_user_is_400(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    failed = review(service(Grants(fail=True)), request(valid()))
    assert (failed.allowed, failed.outcome, failed.code) == (False, "error", 500)
    assert "connection refused" in failed.message
    nobody = review(service(Grants()), request(valid(), user={"username": ""}))
    assert (nobody.allowed, nobody.code, nobody.reason) == (False, 400, "BadRequest")
    assert "request.userInfo.username" in nobody.message


@pytest.mark.parametrize("kind", KINDS)
def test_an_update_that_keeps_the_spec_lends_nothing_and_is_not_checked(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    grants = Grants()
    relabelled = valid()
    relabelled["metadata"]["labels"] = {"team": "a"}
    assert review(service(grants), request(relabelled, "UPDATE", STRANGER, old=valid())).allowed
    assert grants.asked == []


@pytest.mark.parametrize("kind", KINDS)
def test_without_a_gate_nobody_is_asked(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    assert review(service(None), request(valid(), user=None)) == Verdict(True, "allowed")


def test_a_spread_reads_the_namespace_s_other_spreads_but_not_itself() -> None:
    other = spread("other")
    verdict = service(reader=Reader([other])).review_workloadspread(request(spread()))
    assert (verdict.code, verdict.outcome) == (422, "invalid") and "targetRef" in verdict.message
    # The same spread stored already (an UPDATE) is not a rival of itself.
    itself = service(reader=Reader([spread()])).review_workloadspread(
        request(spread(), "UPDATE", old=spread())
    )
    assert itself == Verdict(True, "allowed")


def test_a_spread_s_patch_is_checked_against_its_target_workload() -> None:
    reader = Reader()
    unknown_container = {"spec": {"containers": [{"name": "sidecar", "resources": {"limits": {"cpu": "1"}}}]}}
    verdict = service(reader=reader).review_workloadspread(request(spread(patch=unknown_container)))
    assert reader.looked_up == [("apps/v1", "Deployment", NAMESPACE, "web")]
    assert (verdict.code, verdict.outcome) == (422, "invalid") and "sidecar" in verdict.message
    # A lookup that fails only skips the checks that need the workload.
    skipped = service(reader=Reader(lookup_fails=True)).review_workloadspread(
        request(spread(patch=unknown_container))
    )
    assert skipped == Verdict(True, "allowed")


@pytest.mark.parametrize("kind", KINDS)
def test_the_allowlist_knob_reaches_both_policies(kind: str) -> None:
    review, valid, _ = KINDS[kind]
    obj = valid()
    if kind == "workloadspread":
        obj["spec"]["subsets"][0]["patch"] = {"spec": {"hostPID": True}}
    else:
        obj["spec"]["topology"]["subsets"][0]["patch"] = {"spec": {"hostPID": True}}
    assert review(service(), request(copy.deepcopy(obj))).code == 422
    assert review(service(allowed_patch_fields=("spec.hostPID",)), request(obj)).allowed
