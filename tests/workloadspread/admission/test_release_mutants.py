"""Giving a slot back, details asserted literally (py_engine/workloadspread/admission/release.py;
mutation survivors of run A2, MUTATION-admission.md)."""

from __future__ import annotations

from admission_builders import pod, spread, subset

from py_engine.model import MATCHED_ANNOTATION
from py_engine.workloadspread.admission.release import find_annotated_spread


def test_the_annotated_spread_is_found_in_the_pods_own_namespace() -> None:
    in_default = spread([subset("a", 2)], namespace="default")
    in_team = spread([subset("a", 2)], namespace="team-a")
    the_pod = pod(namespace="team-a", annotations={MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'})
    assert find_annotated_spread(the_pod, [in_default, in_team]) is in_team
    assert find_annotated_spread(the_pod, [in_default]) is None
