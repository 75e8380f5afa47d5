"""The shipped CRDs (manifests/base/crd.yaml, uniteddeployment-crd.yaml), installed in the embedded
API server, accept every valid Spreadgate example in manifests/examples/ and refuse the invalid
examples whose fault is structural, with the causes kube-apiserver gives. The rest of the invalid
examples break rules the admission webhook enforces, not the schema: the server stores them (no
webhook is registered here)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from example_objects import spreadgate_objects
from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.sim.apiserver import ApiServer
from py_engine.sim.defaulting import default_custom_object
from py_engine.sim.interface import ApiError
from py_engine.sim.pruning import prune_custom_object
from py_engine.sim.structural import validate_custom_object

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples"
CRD_FILES = (
    REPO / "manifests" / "base" / "crd.yaml",
    REPO / "manifests" / "base" / "uniteddeployment-crd.yaml",
)
PLURALS = {"WorkloadSpread": "workloadspreads", "UnitedDeployment": "uniteddeployments"}
SCHEMAS = {
    crd["spec"]["names"]["kind"]: crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for path in CRD_FILES
    for crd in yaml.safe_load_all(path.read_text(encoding="utf-8"))
    if crd
}


OBJECTS = spreadgate_objects(EXAMPLES, EXAMPLES, PLURALS)
VALID = [(n, o) for n, o in OBJECTS if not n.startswith("invalid/")]
INVALID = [(n, o) for n, o in OBJECTS if n.startswith("invalid/")]

# Invalid examples the schemas refuse, and the first cause of each. The jsonschema check in
# tests/manifests/test_crd_schema.py (SCHEMA_CATCHES) finds the four WorkloadSpread ones without
# list-map keys; kube-apiserver also refuses the duplicate subset name (x-kubernetes-list-map-keys).
STRUCTURAL = {
    "patch-not-object.yaml": ("spec.subsets[0].patch", "FieldValueTypeInvalid"),
    "strategy-type-unknown.yaml": ("spec.scheduleStrategy.type", "FieldValueNotSupported"),
    "subset-name-duplicate.yaml": ("spec.subsets[1]", "FieldValueDuplicate"),
    "subset-name-empty.yaml": ("spec.subsets[1].name", "FieldValueInvalid"),
    "target-ref-missing.yaml": ("spec.targetRef", "FieldValueRequired"),
    "ud-patch-not-object.yaml": ("spec.topology.subsets[0].patch", "FieldValueTypeInvalid"),
    "ud-schedule-type-unknown.yaml": ("spec.topology.scheduleStrategy.type", "FieldValueNotSupported"),
    "ud-selector-missing.yaml": ("spec.selector", "FieldValueRequired"),
    "ud-update-strategy-type.yaml": ("spec.updateStrategy.type", "FieldValueNotSupported"),
}


@pytest.fixture(scope="module")
def api() -> Any:
    server = ApiServer(history_size=100)
    for path in CRD_FILES:
        for crd in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if crd:
                server.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, crd)
    yield server
    server.close()


def _create(api: ApiServer, obj: dict[str, Any]) -> dict[str, Any]:
    group_version = obj["apiVersion"]
    namespace = obj["metadata"].get("namespace") or "default"
    if api.store.get("namespaces", "", namespace) is None:
        api.create("v1/namespaces", None, {"metadata": {"name": namespace}})
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "labels", "annotations")}
    body = {**obj, "metadata": meta}  # state snapshots carry server-set metadata
    return api.create(f"{group_version}/{PLURALS[obj['kind']]}", namespace, body, dry_run=True)


def test_examples_were_found() -> None:
    assert len(VALID) >= 8 and len(INVALID) >= 40


@pytest.mark.parametrize("obj", [o for _, o in VALID], ids=[n for n, _ in VALID])
def test_every_valid_example_is_accepted(api: ApiServer, obj: dict[str, Any]) -> None:
    stored = _create(api, obj)
    assert stored["spec"] == obj["spec"]  # nothing pruned, nothing refused


def test_exactly_the_structural_faults_are_refused(api: ApiServer) -> None:
    refused: dict[str, tuple[str, str]] = {}
    for name, obj in INVALID:
        try:
            _create(api, obj)
        except ApiError as exc:
            assert exc.code == 422, (name, exc.status)
            cause = exc.status["details"]["causes"][0]
            refused[name.split(":")[0].rsplit("/", 1)[-1]] = (cause["field"], cause["reason"])
    refused.pop("ud-name-invalid.yaml", None)  # metadata.name, refused for every kind
    assert refused == STRUCTURAL


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 300)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "subsets",
                    "name",
                    "maxReplicas",
                    "patch",
                    "targetRef",
                    "topology",
                    "replicas",
                    "selector",
                    "scheduleStrategy",
                    "type",
                    "status",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=80, deadline=None)
@given(
    body=st.dictionaries(st.sampled_from(["spec", "status", "other"]), JSON_VALUES, max_size=3),
    kind=st.sampled_from(sorted(PLURALS)),
)
def test_any_json_gets_causes_never_an_exception(body: dict[str, Any], kind: str) -> None:
    schema = SCHEMAS[kind]
    obj = copy.deepcopy(body)
    prune_custom_object(obj, schema)
    default_custom_object(obj, schema)
    found = validate_custom_object(obj, schema)
    assert all(isinstance(f, str) and r.startswith("FieldValue") and m for f, r, m in found)
    assert validate_custom_object(obj, schema) == found  # validation does not change the object
