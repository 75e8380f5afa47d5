"""The CRD's openAPIV3Schema accepts every valid WorkloadSpread example and rejects malformed ones.

The schema is checked with `jsonschema` (Draft 2020-12 is a superset of the OpenAPI v3
subset structural schemas use) after translating the Kubernetes extension that matters:
`x-kubernetes-int-or-string: true` means "integer or string" (`maxReplicas: 3` and `"30%"`).
Unknown fields are pruned by the API server, not rejected, so they are not tested here.
The examples under manifests/examples/invalid/ break rules; most are Rego rules the schema
cannot express (the webhook rejects them), a few are caught by the schema already, and the
test pins which, so a schema change that starts or stops catching one is noticed.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from example_objects import spreadgate_objects
from manifest_support import MANIFESTS, find, render


def _translate(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _translate(v) for k, v in node.items()}
        if out.pop("x-kubernetes-int-or-string", False):
            out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
            out.pop("type", None)
        return out
    if isinstance(node, list):
        return [_translate(v) for v in node]
    return node


def _validator() -> jsonschema.Draft202012Validator:
    crd = find(render("base"), "CustomResourceDefinition", "workloadspreads.spreadgate.dev")
    schema = _translate(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _spreads(directory: Path) -> list[tuple[str, dict[str, Any]]]:
    return spreadgate_objects(directory, MANIFESTS, {"WorkloadSpread"})


EXAMPLES = [(n, s) for n, s in _spreads(MANIFESTS / "examples") if "/invalid/" not in n]
INVALID = _spreads(MANIFESTS / "examples" / "invalid")
# Invalid examples whose fault the structural schema already catches (required, enum, minLength, type).
SCHEMA_CATCHES = {
    "patch-not-object.yaml",
    "strategy-type-unknown.yaml",
    "subset-name-empty.yaml",
    "target-ref-missing.yaml",
}


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 5 and len(INVALID) >= 20


@pytest.mark.parametrize("spread", [s for _, s in EXAMPLES], ids=[n for n, _ in EXAMPLES])
def test_schema_accepts_every_valid_example(spread: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(spread), key=str)
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors]


def test_schema_catches_exactly_the_structural_faults_among_the_invalid_examples() -> None:
    validator = _validator()
    caught = {
        name.split(":")[0].rsplit("/", 1)[-1]
        for name, spread in INVALID
        if list(validator.iter_errors(spread))
    }
    assert caught == SCHEMA_CATCHES


def _base() -> dict[str, Any]:
    return copy.deepcopy(next(s for n, s in EXAMPLES if "zones-20-20-60" in n))


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _drop(doc: dict[str, Any], path: list[Any]) -> dict[str, Any]:
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return doc


MALFORMED = {
    "no targetRef": lambda: _drop(_base(), ["spec", "targetRef"]),
    "targetRef not an object": lambda: _set(_base(), ["spec", "targetRef"], "web"),
    "subsets not a list": lambda: _set(_base(), ["spec", "subsets"], {"name": "a"}),
    "subset name a number": lambda: _set(_base(), ["spec", "subsets", 0, "name"], 7),
    "maxReplicas a boolean": lambda: _set(_base(), ["spec", "subsets", 0, "maxReplicas"], True),
    "maxReplicas an object": lambda: _set(_base(), ["spec", "subsets", 0, "maxReplicas"], {"n": 1}),
    "tolerations not a list": lambda: _set(_base(), ["spec", "subsets", 0, "tolerations"], "spot"),
    "rescheduleCriticalSeconds a string": lambda: _set(
        _base(),
        ["spec", "scheduleStrategy"],
        {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": "30"}},
    ),
    "rescheduleCriticalSeconds negative": lambda: _set(
        _base(),
        ["spec", "scheduleStrategy"],
        {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": -1}},
    ),
    "spec a list": lambda: _set(_base(), ["spec"], []),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_schema_rejects_malformed_spreads(name: str) -> None:
    assert list(_validator().iter_errors(_base())) == []  # the starting point is valid
    assert list(_validator().iter_errors(MALFORMED[name]())), f"schema accepted: {name}"


def test_int_or_string_accepts_both_forms() -> None:
    for value in (3, "30%"):
        assert (
            list(_validator().iter_errors(_set(_base(), ["spec", "subsets", 0, "maxReplicas"], value))) == []
        )
