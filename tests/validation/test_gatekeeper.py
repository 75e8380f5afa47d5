"""The Gatekeeper ConstraintTemplate: checked in current, and deciding as the policy does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gatekeeper_kit import gatekeeper_violations as kit_violations
from gatekeeper_kit import template_engine as kit_template_engine

from py_engine.cli import main
from py_engine.policy import load_policy_sources
from py_engine.validation.gatekeeper import constraint, constraint_template, to_yaml

REPO = Path(__file__).resolve().parents[2]
GATEKEEPER = REPO / "manifests" / "gatekeeper"
EXAMPLES = REPO / "manifests" / "examples"


def template_engine() -> Any:
    """A regorus engine holding only the template's Rego, as Gatekeeper would load it."""
    return kit_template_engine("constraint-template.yaml")


def gatekeeper_violations(
    engine: Any, obj: dict[str, Any], parameters: dict[str, Any] | None = None
) -> list[Any]:
    return kit_violations(engine, "data.spreadgate.validation.violation", obj, parameters)


def test_checked_in_files_are_current() -> None:
    sources = load_policy_sources()
    assert (GATEKEEPER / "constraint-template.yaml").read_text() == to_yaml(constraint_template(sources))
    assert (GATEKEEPER / "constraint.yaml").read_text() == to_yaml(constraint())


def test_generator_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "gatekeeper",
                "-o",
                str(tmp_path),
                "--custom-workload",
                "game.kruise.io/GameServerSet",
                "--allow-patch-field",
                "spec.nodeSelector",
            ]
        )
        == 0
    )
    written = yaml.safe_load((tmp_path / "constraint.yaml").read_text())
    assert written["spec"]["parameters"]["customWorkloads"] == [
        {"group": "game.kruise.io", "kind": "GameServerSet"}
    ]
    assert written["spec"]["parameters"]["allowedPatchFields"] == ["spec.nodeSelector"]
    assert main(["gatekeeper"]) == 0
    assert "kind: ConstraintTemplate" in capsys.readouterr().out
    assert main(["gatekeeper", "--custom-workload", "nogroup"]) == 2
    assert main(["gatekeeper", "--allow-patch-field", "$patch"]) == 2
    assert "--allow-patch-field" in capsys.readouterr().err


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "WorkloadSpread"]


def workloads_inventory(path: Path) -> dict[str, Any]:
    """The file's other objects as Gatekeeper's synced `data.inventory` holds them."""
    inventory: dict[str, Any] = {}
    for d in yaml.safe_load_all(path.read_text()):
        if d and d.get("kind") != "WorkloadSpread":
            by_name = inventory.setdefault(d["metadata"]["namespace"], {}).setdefault(d["apiVersion"], {})
            by_name.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    return {"namespace": inventory}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_valid_examples_pass_in_the_template(path: Path) -> None:
    engine = template_engine()
    for obj in documents(path):
        assert gatekeeper_violations(engine, obj) == []


# UnitedDeployment examples (ud-*) have their own template: tests/validation/test_ud_examples.py.
@pytest.mark.parametrize(
    "path",
    [p for p in sorted((EXAMPLES / "invalid").glob("*.yaml")) if not p.stem.startswith("ud-")],
    ids=lambda p: p.stem,
)
def test_invalid_examples_are_denied_by_the_template(path: Path) -> None:
    engine = template_engine()
    objs = documents(path)
    if len(objs) > 1:
        # one spread per workload: Gatekeeper sees the other spread through its synced inventory
        inventory = {
            "namespace": {
                "default": {
                    "spreadgate.dev/v1alpha1": {"WorkloadSpread": {objs[1]["metadata"]["name"]: objs[1]}}
                }
            }
        }
        engine.add_data({"inventory": inventory})
    else:
        # the patch rules that need the target workload find it in the synced Deployments
        engine.add_data({"inventory": workloads_inventory(path)})
    assert gatekeeper_violations(engine, objs[0]) != []


def test_allowed_patch_fields_come_from_constraint_parameters() -> None:
    engine = template_engine()
    obj = documents(EXAMPLES / "invalid" / "patch-host-path-volume.yaml")[0]
    assert [v["details"]["field"] for v in gatekeeper_violations(engine, obj)] == [
        "spec.subsets[0].patch.spec.volumes"
    ]
    assert gatekeeper_violations(engine, obj, {"allowedPatchFields": ["spec.volumes"]}) == []
    assert gatekeeper_violations(engine, obj, {"allowedPatchFields": ["spec.volumeMounts"]}) != []


def test_template_schema_declares_allowed_patch_fields() -> None:
    template = yaml.safe_load((GATEKEEPER / "constraint-template.yaml").read_text())
    properties = template["spec"]["crd"]["spec"]["validation"]["openAPIV3Schema"]["properties"]
    assert properties["allowedPatchFields"] == {
        **properties["allowedPatchFields"],
        "type": "array",
        "items": {"type": "string"},
    }
    assert (
        yaml.safe_load((GATEKEEPER / "constraint.yaml").read_text())["spec"]["parameters"][
            "allowedPatchFields"
        ]
        == []
    )


def test_custom_workloads_come_from_constraint_parameters() -> None:
    engine = template_engine()
    obj = documents(EXAMPLES / "invalid" / "target-custom-kind.yaml")[0]
    assert gatekeeper_violations(engine, obj) != []
    allowed = {"customWorkloads": [{"group": "game.kruise.io", "kind": "GameServerSet"}]}
    assert gatekeeper_violations(engine, obj, allowed) == []


def test_samples_follow_the_suite() -> None:
    suite = yaml.safe_load((GATEKEEPER / "suite.yaml").read_text())
    engine = template_engine()
    cases = [case for test in suite["tests"] for case in test["cases"]]
    assert len(cases) >= 3
    for case in cases:
        obj = yaml.safe_load((GATEKEEPER / case["object"]).read_text())
        expected = case["assertions"][0]["violations"]
        assert bool(gatekeeper_violations(engine, obj)) == (expected is True or expected == "yes"), case[
            "name"
        ]
