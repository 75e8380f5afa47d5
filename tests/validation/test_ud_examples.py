"""The UnitedDeployment examples through every caller of policies/uniteddeployment: the
bare manifest (conftest), the generated Gatekeeper template with its library, the
webhook route and `spreadgate validate`; plus the checked-in template is current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gatekeeper_kit import gatekeeper_violations as kit_violations
from gatekeeper_kit import template_engine as kit_template_engine
from webhook_testkit import ReadyView

from py_engine.cli import main
from py_engine.policy import PolicyEngine, create_engine, load_policy_sources
from py_engine.semantics.clock import RealClock
from py_engine.validation.service import ValidationConfig, ValidationService
from py_engine.validation.ud_gatekeeper import (
    UD_CONSTRAINT_FILE,
    UD_TEMPLATE_FILE,
    ud_gatekeeper_documents,
)
from py_engine.validation.uniteddeployment import UD_VALIDATION_RULE
from py_engine.workloadspread.admission.service import AdmissionService
from webhook.app import create_app

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples"
GATEKEEPER = REPO / "manifests" / "gatekeeper"
VALID = sorted(EXAMPLES.glob("ud-*.yaml"))
INVALID = sorted((EXAMPLES / "invalid").glob("ud-*.yaml"))


def uds(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "UnitedDeployment"]


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return create_engine()


def test_examples_were_found() -> None:
    assert len(VALID) >= 2 and len(INVALID) >= 40
    assert all(len(uds(p)) == 1 for p in VALID + INVALID)


# --- conftest: the manifest itself is the input -----------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_examples_pass_bare(engine: PolicyEngine, path: Path) -> None:
    for obj in yaml.safe_load_all(path.read_text()):  # the HPA beside a UnitedDeployment is ignored
        assert engine.evaluate(UD_VALIDATION_RULE, obj) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_each_invalid_example_breaks_exactly_one_rule(engine: PolicyEngine, path: Path) -> None:
    violations = engine.evaluate(UD_VALIDATION_RULE, uds(path)[0])
    assert len(violations) == 1, violations
    assert violations[0]["msg"].startswith(violations[0]["details"]["field"] + ": ")


def test_kruise_groups_and_versions_are_validated(engine: PolicyEngine) -> None:
    obj = uds(EXAMPLES / "invalid" / "ud-replicas-negative.yaml")[0]
    for api_version in ("apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1", "spreadgate.dev/v1beta1"):
        assert engine.evaluate(UD_VALIDATION_RULE, {**obj, "apiVersion": api_version}) != []
    assert engine.evaluate(UD_VALIDATION_RULE, {**obj, "apiVersion": "example.com/v1beta1"}) == []


# --- Gatekeeper ------------------------------------------------------------------------------


def test_checked_in_gatekeeper_files_are_current() -> None:
    for name, text in ud_gatekeeper_documents(load_policy_sources()).items():
        assert (GATEKEEPER / name).read_text() == text, (
            f"regenerate with: spreadgate gatekeeper --output-dir {GATEKEEPER}"
        )


def test_generator_writes_the_ud_documents(tmp_path: Path) -> None:
    assert main(["gatekeeper", "--output-dir", str(tmp_path)]) == 0
    assert yaml.safe_load((tmp_path / UD_TEMPLATE_FILE).read_text())["kind"] == "ConstraintTemplate"
    constraint = yaml.safe_load((tmp_path / UD_CONSTRAINT_FILE).read_text())
    assert constraint["spec"]["match"]["kinds"][0]["kinds"] == ["UnitedDeployment"]


def template_engine() -> Any:
    """A regorus engine holding only the template's Rego and libraries, as Gatekeeper loads them."""
    return kit_template_engine(UD_TEMPLATE_FILE)


def gatekeeper_violations(
    engine: Any, obj: dict[str, Any], parameters: dict[str, Any] | None = None
) -> list[Any]:
    return kit_violations(engine, "data.spreadgate.uniteddeployment.violation", obj, parameters)


@pytest.mark.timeout(60)
def test_examples_in_the_gatekeeper_template() -> None:
    engine = template_engine()
    for path in VALID:
        assert gatekeeper_violations(engine, uds(path)[0]) == [], path
    for path in INVALID:
        assert len(gatekeeper_violations(engine, uds(path)[0])) == 1, path


def test_allowed_patch_fields_come_from_constraint_parameters() -> None:
    engine = template_engine()
    obj = uds(EXAMPLES / "invalid" / "ud-patch-host-network.yaml")[0]
    assert gatekeeper_violations(engine, obj) != []
    assert gatekeeper_violations(engine, obj, {"allowedPatchFields": ["spec.hostNetwork"]}) == []


# --- the webhook route -------------------------------------------------------------------------


def _validation(engine: PolicyEngine | None, allowed_patch_fields: tuple[str, ...] = ()) -> ValidationService:
    """The real validation service; the UnitedDeployment route reads only its engine and patch allowlist."""
    return ValidationService(
        ReadyView(),
        engine,  # type: ignore[arg-type]
        config=ValidationConfig(allowed_patch_fields=allowed_patch_fields),
    )


def _review(operation: str, obj: Any, old: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": "u-1",
        "operation": operation,
        "namespace": "default",
        "object": obj,
        "resource": {"group": "spreadgate.dev", "version": "v1beta1", "resource": "uniteddeployments"},
    }
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _answer(
    engine: PolicyEngine | None, review: dict[str, Any], allowed: tuple[str, ...] = ()
) -> dict[str, Any]:
    admission = AdmissionService(ReadyView(), None, RealClock())  # type: ignore[arg-type]
    client = create_app(admission, _validation(engine, allowed)).test_client()
    resp = client.post("/validate/uniteddeployments", json=review)
    assert resp.status_code == 200
    body: dict[str, Any] = resp.get_json()["response"]
    assert body["uid"] == "u-1"
    return body


@pytest.mark.timeout(60)
def test_webhook_route_allows_and_denies(engine: PolicyEngine) -> None:
    valid = uds(EXAMPLES / "ud-cpu-platforms.yaml")[0]
    assert _answer(engine, _review("CREATE", valid))["allowed"] is True
    denied = _answer(
        engine, _review("CREATE", uds(EXAMPLES / "invalid" / "ud-fixed-sum-not-replicas.yaml")[0])
    )
    assert denied["allowed"] is False and denied["status"]["code"] == 422
    assert denied["status"]["message"].startswith("spec.topology.subsets: Invalid value")


@pytest.mark.timeout(60)
def test_webhook_route_honours_allowed_patch_fields(engine: PolicyEngine) -> None:
    review = _review("CREATE", uds(EXAMPLES / "invalid" / "ud-patch-host-network.yaml")[0])
    assert _answer(engine, review)["allowed"] is False
    assert _answer(engine, review, ("spec.hostNetwork",))["allowed"] is True


@pytest.mark.timeout(60)
def test_webhook_route_update_rules(engine: PolicyEngine) -> None:
    old = uds(EXAMPLES / "ud-cpu-platforms.yaml")[0]
    new = json.loads(json.dumps(old))
    new["spec"]["topology"]["subsets"][2]["tolerations"] = []
    answer = _answer(engine, _review("UPDATE", new, old))
    assert answer["allowed"] is False
    assert (
        "spec.topology.subsets[2].tolerations: Forbidden: may not be changed in an update"
        in answer["status"]["message"]
    )
    new["spec"]["topology"]["subsets"] = old["spec"]["topology"]["subsets"][::-1]  # reordering is free
    assert _answer(engine, _review("UPDATE", new, old))["allowed"] is True


@pytest.mark.timeout(60)
def test_webhook_route_odd_requests(engine: PolicyEngine) -> None:
    assert _answer(engine, _review("DELETE", None))["allowed"] is True
    wrong = _answer(engine, _review("CREATE", {"apiVersion": "apps/v1", "kind": "Deployment"}))
    assert wrong["allowed"] is False and wrong["status"]["code"] == 400
    no_engine = _answer(None, _review("CREATE", uds(EXAMPLES / "ud-cpu-platforms.yaml")[0]))
    assert no_engine["allowed"] is False and no_engine["status"]["code"] == 500


# --- spreadgate validate ------------------------------------------------------------------------


def test_cli_validates_uds_beside_spreads_and_other_kinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(
        (EXAMPLES / "ud-ecs-then-serverless.yaml").read_text()
        + "---\n"
        + (EXAMPLES / "invalid" / "ud-partition-negative.yaml").read_text()
    )
    assert main(["validate", "-o", "json", str(mixed), str(EXAMPLES / "zones-20-20-60.yaml")]) == 1
    report = {entry["name"]: entry["violations"] for entry in json.loads(capsys.readouterr().out)}
    assert report["web-burst"] == []
    assert report["partition-negative"][0].startswith("spec.updateStrategy.manualUpdate.partitions[b]: ")
    assert len(report) == 3  # the HPA is not validated; the spread is


def test_cli_hostile_ud_is_a_violation_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: UnitedDeployment\nmetadata: {name: h}\n"
        "spec: {replicas: x, selector: 3, template: [1], topology: {subsets: [7, {name: [1], patch: 5}],"
        " scheduleStrategy: 3}, updateStrategy: {manualUpdate: {partitions: 3}}}\n"
    )
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "h: spec.replicas: Invalid value" in out and "Traceback" not in out


def test_cli_allow_patch_field_applies_to_uds(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "invalid" / "ud-patch-host-network.yaml")
    assert main(["validate", path]) == 1
    assert main(["validate", "--allow-patch-field", "spec.hostNetwork", path]) == 0
    assert "patch-host-network: valid" in capsys.readouterr().out


def test_gator_samples_follow_the_suite() -> None:
    suite = yaml.safe_load((GATEKEEPER / "uniteddeployment-suite.yaml").read_text())
    engine = template_engine()
    [test] = suite["tests"]
    assert test["template"] == UD_TEMPLATE_FILE
    constraint = yaml.safe_load((GATEKEEPER / test["constraint"]).read_text())
    assert constraint == yaml.safe_load((GATEKEEPER / UD_CONSTRAINT_FILE).read_text())
    assert len(test["cases"]) >= 3
    for case in test["cases"]:
        obj = yaml.safe_load((GATEKEEPER / case["object"]).read_text())
        expected = case["assertions"][0]["violations"]
        assert bool(gatekeeper_violations(engine, obj)) == (expected is True or expected == "yes"), case[
            "name"
        ]
