"""The UnitedDeployment CRD: every UnitedDeployment example validates against its
openAPIV3Schema, the schema rejects what it can express (types, enums, required
fields), and the resource is wired for kubectl and an HPA (short name, printer
columns, status and scale subresources). Like the WorkloadSpread schema test, the
invalid examples' faults the schema already catches are pinned, so a schema
change that starts or stops catching one is noticed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from manifest_support import MANIFESTS, find, render
from test_crd_schema import _translate

UD_CRD = "uniteddeployments.spreadgate.dev"


def _crd() -> dict[str, Any]:
    return find(render("base"), "CustomResourceDefinition", UD_CRD)


def _validator() -> jsonschema.Draft202012Validator:
    schema = _translate(_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _uds(directory: Path, pattern: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(directory.glob(pattern)):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "UnitedDeployment":
                out.append((path.name, doc))
    return out


EXAMPLES = _uds(MANIFESTS / "examples", "ud-*.yaml")
INVALID = _uds(MANIFESTS / "examples" / "invalid", "ud-*.yaml")
SCHEMA_CATCHES = {
    "ud-selector-missing.yaml",
    "ud-schedule-type-unknown.yaml",
    "ud-update-strategy-type.yaml",
    "ud-patch-not-object.yaml",
}


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 2 and len(INVALID) >= 40


@pytest.mark.timeout(60)
@pytest.mark.parametrize("ud", [u for _, u in EXAMPLES], ids=[n for n, _ in EXAMPLES])
def test_schema_accepts_every_valid_example(ud: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(ud), key=str)
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors]


@pytest.mark.timeout(60)
def test_schema_catches_exactly_the_structural_faults_among_the_invalid_examples() -> None:
    validator = _validator()
    assert {name for name, ud in INVALID if list(validator.iter_errors(ud))} == SCHEMA_CATCHES


def _base() -> dict[str, Any]:
    return copy.deepcopy(next(u for n, u in EXAMPLES if n == "ud-cpu-platforms.yaml"))


MALFORMED = {
    "replicas a string": lambda u: u["spec"].__setitem__("replicas", "ten"),
    "subsets not a list": lambda u: u["spec"]["topology"].__setitem__("subsets", {"name": "a"}),
    "subset without a name": lambda u: u["spec"]["topology"]["subsets"][0].pop("name"),
    "subset replicas a boolean": lambda u: u["spec"]["topology"]["subsets"][0].__setitem__("replicas", True),
    "template spec missing": lambda u: u["spec"]["template"]["cloneSetTemplate"].pop("spec"),
    "partition a string": lambda u: u["spec"]["updateStrategy"]["manualUpdate"].__setitem__(
        "partitions", {"a": "1"}
    ),
    "adaptive duration a string": lambda u: u["spec"]["topology"].__setitem__(
        "scheduleStrategy", {"type": "Adaptive", "adaptive": {"unschedulableDuration": "300"}}
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_schema_rejects_malformed_uds(name: str) -> None:
    ud = _base()
    assert list(_validator().iter_errors(ud)) == []
    MALFORMED[name](ud)
    assert list(_validator().iter_errors(ud)), f"schema accepted: {name}"


def test_int_or_string_counts_accept_both_forms() -> None:
    for value in (3, "30%"):
        ud = _base()
        ud["spec"]["topology"]["subsets"][0]["maxReplicas"] = value
        assert list(_validator().iter_errors(ud)) == []


def test_names_columns_and_subresources() -> None:
    crd = _crd()
    assert crd["spec"]["group"] == "spreadgate.dev" and crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["kind"] == "UnitedDeployment" and crd["spec"]["names"]["shortNames"] == [
        "sgud"
    ]
    [version] = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1beta1", True, True)
    assert version["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.labelSelector",
        },
    }
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert columns == {
        "Desired": ".spec.replicas",
        "Current": ".status.replicas",
        "Updated": ".status.updatedReplicas",
        "Ready": ".status.readyReplicas",
        "Age": ".metadata.creationTimestamp",
    }
    template = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"][
        "properties"
    ]
    assert sorted(template) == [
        "advancedStatefulSetTemplate",
        "cloneSetTemplate",
        "deploymentTemplate",
        "statefulSetTemplate",
    ]
    for t in template.values():  # schemaless, as in Kruise's CRD
        assert t["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] is True
