"""The patch guard's refusal of a patch nested too deep, in words
(py_engine/workloadspread/admission/patch_guard.py; mutation survivors of run A2, MUTATION-admission.md)."""

from __future__ import annotations

from typing import Any

from admission_builders import pod, spread, subset

from py_engine.workloadspread.admission.patch_guard import PatchGuard


class _NoEngine:
    """An engine the depth check must refuse before: any evaluation fails the test."""

    def evaluate(self, rule: str, input_document: Any) -> Any:
        raise AssertionError("a patch nested too deep is refused without evaluating the policy")

    def close(self) -> None:
        pass


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"x": value}
    return value


def test_a_patch_nested_deeper_than_validation_accepts_is_refused_and_says_so() -> None:
    # Reviews are read to 64 levels and a subset patch sits 6 levels into one: 58 levels at most.
    ws = spread([subset("a"), subset("b", patch=_nested(59))])
    guard = PatchGuard(_NoEngine())
    assert guard.refusals(ws, "b", pod(), None) == (
        "spec.subsets[1].patch is nested deeper than 58 levels, more than validation accepts",
    )
