"""Issue 24, finding 4: admission trusts a stored spread no more than validation does.

A spread that reached the store without the validating webhook (stored before it existed, or
while it was down) has its subset patch applied only if the patch passes the checks
validation makes: nesting depth, container names, label keys and values. Otherwise the pod is
admitted into its subset without the patch, with a warning, as for an allowlist refusal.
"""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment_chain, make_ctx, pod, spread, subset

from py_engine.model import MATCHED_ANNOTATION
from py_engine.policy import create_engine
from py_engine.workloadspread.admission.patch_guard import PatchGuard, inject_checked

ENGINE = create_engine()


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"x": "1"}
    for _ in range(levels):
        value = {"a": value}
    return value


def _admit(patch: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    ctx = make_ctx(deployment_chain(), patch_guard=PatchGuard(ENGINE))
    ws = spread([subset("a", zone="z1", patch=patch), subset("b")])
    ws["metadata"]["generation"] = 1
    return inject_checked(pod(), ws, "a", None, ctx)


def test_a_patch_nested_900_levels_is_left_out_not_a_recursion_error() -> None:
    mutated, warnings = _admit({"metadata": {"annotations": {"deep": _nested(900)}}})
    assert "deep" not in mutated["metadata"].get("annotations", {})
    assert MATCHED_ANNOTATION in mutated["metadata"]["annotations"], "the pod is still placed in its subset"
    assert len(warnings) == 1 and "nested deeper than" in warnings[0]


def test_a_patch_as_deep_as_validation_allows_is_still_checked_normally() -> None:
    mutated, warnings = _admit({"metadata": {"labels": {"cost": "spot"}}})
    assert warnings == () and mutated["metadata"]["labels"]["cost"] == "spot"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"spec": {"containers": [{"name": 7, "resources": {}}]}}, "spec.subsets[0].patch"),
        ({"spec": {"containers": [{"name": "", "resources": {}}]}}, "spec.subsets[0].patch"),
        ({"metadata": {"labels": {"bad key!": "v"}}}, "spec.subsets[0].patch"),
        ({"metadata": {"labels": {"ok": "bad value!"}}}, "spec.subsets[0].patch"),
        ({"metadata": {"annotations": {"Sidecar.Istio.IO/inject": "false"}}}, "spec.subsets[0].patch"),
        ({"metadata": {"annotations": {"note": 5}}}, "spec.subsets[0].patch"),
    ],
    ids=["name-7", "name-empty", "label-key", "label-value", "uppercase-prefix", "annotation-not-string"],
)
def test_what_validation_refuses_is_not_applied_at_admission(patch: Any, field: str) -> None:
    mutated, warnings = _admit(patch)
    assert len(warnings) == 1 and field in warnings[0], warnings
    assert mutated["spec"]["containers"] == [{"name": "main", "image": "nginx"}]
    assert "bad key!" not in mutated["metadata"]["labels"] and "ok" not in mutated["metadata"]["labels"]
