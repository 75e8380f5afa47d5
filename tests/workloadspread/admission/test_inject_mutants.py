"""Injection details asserted literally (py_engine/workloadspread/admission/inject.py; mutation
survivors of run A2, MUTATION-admission.md)."""

from __future__ import annotations

from py_engine.workloadspread.admission.inject import apply_subset_patch


def test_a_pod_whose_spec_is_not_an_object_is_patched_without_reading_its_priority_class() -> None:
    patched = apply_subset_patch(
        {"metadata": {"name": "p"}, "spec": ["junk"]}, {"metadata": {"labels": {"a": "b"}}}
    )
    assert patched == {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": ["junk"]}
