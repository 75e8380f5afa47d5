"""Finding 5 of issue 23: validation cost must not grow without bound with the number of subsets.

A WorkloadSpread or UnitedDeployment may have at most `MAX_SUBSETS` subsets: the CRDs say so
(`maxItems`, so the API server refuses a longer list before calling the webhook), and the
policies check the count before anything else, so a longer list (sent to the webhook
directly, or validated offline) costs one count, however long it is. At the bound, every
rule is linear; the rules that were quadratic (duplicate names, the running percentage sum,
stored-subset lookups on UPDATE) are checked here at the bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.kube_objects import united_deployment, workload_spread
from py_engine.model.constants import MAX_SUBSETS
from py_engine.policy import create_engine
from py_engine.validation import build_review_input, validate_spread
from py_engine.validation.uniteddeployment import review_uniteddeployment

REPO = Path(__file__).resolve().parents[2]
ENGINE = create_engine()


def spread(subsets: list[dict[str, Any]]) -> dict[str, Any]:
    return workload_spread("ws", subsets)


def united(subsets: list[dict[str, Any]]) -> dict[str, Any]:
    return united_deployment("ud", subsets, replicas=3, app="web", workload_selector=False)


def ud_review(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None) -> Any:
    request = {"uid": "u", "operation": operation, "object": obj}
    if old is not None:
        request["oldObject"] = old
    return review_uniteddeployment(ENGINE, request)


def subsets_schema(path: str, *keys: str) -> dict[str, Any]:
    crd = yaml.safe_load((REPO / path).read_text())
    node = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for key in keys:
        node = node["properties"][key]
    return node  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("manifests/base/crd.yaml", ("spec", "subsets")),
        ("manifests/base/uniteddeployment-crd.yaml", ("spec", "topology", "subsets")),
        ("py_engine/resources/crds/workloadspread.yaml", ("spec", "subsets")),
        ("py_engine/resources/crds/uniteddeployment.yaml", ("spec", "topology", "subsets")),
    ],
)
def test_crds_bound_the_number_of_subsets(path: str, keys: tuple[str, ...]) -> None:
    assert subsets_schema(path, *keys).get("maxItems") == MAX_SUBSETS


def test_policies_use_the_crds_bound() -> None:
    assert ENGINE.evaluate("data.spreadgate.validation.max_subsets", {}) == MAX_SUBSETS
    assert ENGINE.evaluate("data.spreadgate.uniteddeployment.max_subsets", {}) == MAX_SUBSETS


# Before the bound, 1,000 subsets took 4 s to validate and 3,000 took 38 s, holding the
# interpreter lock throughout (every other request of the webhook waited).
@pytest.mark.parametrize(("count", "name"), [(MAX_SUBSETS + 1, "same"), (1_000, "s{}"), (5_000, "same")])
def test_spread_beyond_the_bound_is_refused_by_its_count_alone(count: int, name: str) -> None:
    subsets = [{"name": name.format(i), "maxReplicas": f"{i}%"} for i in range(count)]
    violations = validate_spread(ENGINE, build_review_input(spread(subsets)))
    assert [(v.field, v.message) for v in violations] == [
        ("spec.subsets", f"spec.subsets: Too many: {count}: must have at most {MAX_SUBSETS} subsets")
    ]


@pytest.mark.parametrize(("count", "name"), [(MAX_SUBSETS + 1, "same"), (1_000, "s{}"), (5_000, "same")])
def test_uniteddeployment_beyond_the_bound_is_refused_by_its_count_alone(count: int, name: str) -> None:
    result = ud_review(united([{"name": name.format(i), "replicas": 1} for i in range(count)]))
    assert (result.allowed, result.code) == (False, 422)
    assert result.message == (
        f"spec.topology.subsets: Too many: {count}: must have at most {MAX_SUBSETS} subsets"
    )


def test_duplicate_names_at_the_bound_each_name_their_first_use() -> None:
    names = [f"s{i % (MAX_SUBSETS // 2)}" for i in range(MAX_SUBSETS)]
    violations = validate_spread(ENGINE, build_review_input(spread([{"name": n} for n in names])))
    half = MAX_SUBSETS // 2
    assert [v.message for v in violations] == sorted(
        f'spec.subsets[{j}].name: Invalid value: duplicate subset name "s{j - half}" '
        f"(first used at index {j - half})"
        for j in range(half, MAX_SUBSETS)
    )


def test_uniteddeployment_duplicates_and_update_lookups_at_the_bound() -> None:
    subsets = [
        {
            "name": f"s{i}",
            "nodeSelectorTerm": {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": [f"z{i}"]}]
            },
        }
        for i in range(MAX_SUBSETS)
    ]
    old = united(subsets)
    changed = [dict(s) for s in subsets]
    changed[-1]["nodeSelectorTerm"] = {
        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["moved"]}]
    }
    changed[-2]["name"] = "s0"
    result = ud_review(united(changed), "UPDATE", old)
    assert result.message.split("; ") == [
        f"spec.topology.subsets[{MAX_SUBSETS - 2}].name: Invalid value: duplicated subset name s0",
        # Renamed to s0, it is compared with the stored s0, whose term differs.
        f"spec.topology.subsets[{MAX_SUBSETS - 2}].nodeSelectorTerm: "
        "Forbidden: may not be changed in an update",
        f"spec.topology.subsets[{MAX_SUBSETS - 1}].nodeSelectorTerm: "
        "Forbidden: may not be changed in an update",
    ]


def test_percent_sum_at_the_bound_is_reported_where_it_passes_100() -> None:
    caps = ["0%"] * (MAX_SUBSETS - 4) + ["60%", "40%", "1%"]
    subsets = [{"name": f"s{i}", "maxReplicas": c} for i, c in enumerate(caps)] + [{"name": "rest"}]
    violations = validate_spread(ENGINE, build_review_input(spread(subsets)))
    assert [v.message for v in violations] == [
        f"spec.subsets[{MAX_SUBSETS - 2}].maxReplicas: Invalid value: "
        "percentages add up to 101 at this subset, more than 100%"
    ]
