"""Reservation details asserted literally: the StatefulSet no-room warning and the ordinal's
upper bound (py_engine/workloadspread/admission/reserve.py, choose.py; mutation survivors of run A2,
MUTATION-admission.md)."""

from __future__ import annotations

from typing import Any

from admission_builders import make_ctx, owner_ref, pod, spread, subset, workload

from py_engine.workloadspread.admission.choose import pod_ordinal
from py_engine.workloadspread.admission.reserve import CreateReservation, reserve_create

DB = owner_ref("apps/v1", "StatefulSet", "db")


def _statefulset_spread(namespace: str) -> dict[str, Any]:
    ws = spread([subset("a", 2), subset("b", 2)], target=("apps/v1", "StatefulSet", "db"))
    if namespace:
        ws["metadata"]["namespace"] = namespace
    else:
        del ws["metadata"]["namespace"]
    return ws


def test_a_statefulset_pod_beyond_every_cap_is_admitted_with_a_warning_naming_the_spread() -> None:
    ctx = make_ctx([workload("apps/v1", "StatefulSet", "db", namespace="team-a", replicas=9)])
    the_pod = pod("db-7", owner=DB, namespace="team-a")
    result = reserve_create(_statefulset_spread("team-a"), the_pod, ctx, generated_uid="u")
    assert result == CreateReservation(
        None,
        None,
        "db-7",
        (
            "WorkloadSpread team-a/ws: no subset has room for this pod (ordinal 7); "
            "admitted without subset constraints",
        ),
    )


def test_a_spread_without_namespace_is_named_in_the_default_one() -> None:
    ctx = make_ctx([workload("apps/v1", "StatefulSet", "db", replicas=9)])
    result = reserve_create(_statefulset_spread(""), pod("db-4", owner=DB), ctx, generated_uid="u")
    assert result.warnings == (
        "WorkloadSpread default/ws: no subset has room for this pod (ordinal 4); "
        "admitted without subset constraints",
    )


def test_the_largest_ordinal_is_the_largest_int32() -> None:
    assert pod_ordinal("db-2147483647") == 2147483647
    assert pod_ordinal("db-2147483648") == -1
