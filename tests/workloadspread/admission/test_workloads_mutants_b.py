"""What admission reads of the target workload (py_engine/workloadspread/admission/workloads.py),
call by call: which lookup is asked, with which four arguments, how often, and what it answers.

Expected values are written out from docs/design-workloadspread.md §1.4 and §2.1.3: only a spread
with a percentage cap needs the replica count; StatefulSet targets (both groups) are placed by
ordinal; an unresolvable `targetFilter.replicasPathList` denies the pod.
"""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import NOW, Objects, spread, subset, workload

from py_engine.model import WorkloadSpread
from py_engine.model.workloads import whitelist_from_entries
from py_engine.workloadspread.admission.context import AdmissionContext, AdmissionError
from py_engine.workloadspread.admission.workloads import TargetWorkload

pytestmark = pytest.mark.timeout(10)


def _target(obj: dict[str, Any], cached: Objects, fresh: Objects | None = None, **ctx: Any) -> TargetWorkload:
    context = AdmissionContext(
        now=NOW, lookup=cached.lookup, fresh_lookup=fresh.lookup if fresh is not None else None, **ctx
    )
    return TargetWorkload(WorkloadSpread.from_object(obj), context)


def test_without_a_percentage_cap_the_count_is_zero_and_nothing_is_looked_up() -> None:
    cached, fresh = Objects([workload("apps/v1", "Deployment", "web", replicas=6)]), Objects()
    target = _target(spread([subset("a", 2), subset("b")]), cached, fresh)
    assert (target.replicas(), target.fresh_replicas(), target.ordinal_placement) == (0, None, False)
    assert (cached.calls, fresh.calls) == ([], [])


def test_a_percentage_cap_reads_the_cached_workload_once_and_the_fresh_one_on_every_ask() -> None:
    cached = Objects([workload("apps/v1", "Deployment", "web", namespace="team-a", replicas=6)])
    fresh = Objects([workload("apps/v1", "Deployment", "web", namespace="team-a", replicas=9)])
    target = _target(spread([subset("a", "50%"), subset("b")], namespace="team-a"), cached, fresh)
    assert [target.replicas(), target.replicas(), target.fresh_replicas(), target.fresh_replicas()] == [
        6,
        6,
        9,
        9,
    ]
    asked = ("apps/v1", "Deployment", "team-a", "web")
    assert (cached.calls, fresh.calls) == ([asked], [asked, asked])


def test_a_missing_workload_reads_none_and_is_not_asked_again() -> None:
    cached = Objects()
    target = _target(spread([subset("a", "50%")]), cached)
    assert (target.replicas(), target.replicas(), target.fresh_replicas()) == (None, None, None)
    assert cached.calls == [("apps/v1", "Deployment", "default", "web")]


def test_a_spread_without_a_namespace_looks_in_default() -> None:
    obj = spread([subset("a", "50%")])
    del obj["metadata"]["namespace"]
    cached = Objects([workload("apps/v1", "Deployment", "web", replicas=4)])
    assert _target(obj, cached).replicas() == 4
    assert cached.calls == [("apps/v1", "Deployment", "default", "web")]


def test_a_custom_kind_reads_its_whitelisted_replicas_path() -> None:
    game = workload("example.com/v1", "Game", "g", size=8)
    obj = spread([subset("a", "50%")], target=("example.com/v1", "Game", "g"))
    whitelist = whitelist_from_entries(
        [{"group": "example.com", "kind": "Game", "replicasPath": "spec.size"}]
    )
    assert _target(obj, Objects([game]), whitelist=whitelist).replicas() == 8
    assert _target(obj, Objects([game])).replicas() == 0  # not whitelisted: the reference reads 0


@pytest.mark.parametrize(
    ("target", "ordinal"),
    [
        (("apps/v1", "StatefulSet", "db"), True),
        (("apps.kruise.io/v1beta1", "StatefulSet", "db"), True),
        (("apps/v1", "Deployment", "db"), False),
        (("apps.kruise.io/v1alpha1", "CloneSet", "db"), False),
        (("example.com/v1", "Game", "db"), False),  # no known kind at all
    ],
)
def test_ordinal_placement_is_for_statefulsets_of_both_groups(
    target: tuple[str, str, str], ordinal: bool
) -> None:
    assert _target(spread([subset("a", 1)], target=target), Objects()).ordinal_placement is ordinal


def test_an_unresolvable_replicas_path_list_denies_with_the_spread_and_the_path_named() -> None:
    obj = spread(
        [subset("a", "50%")], namespace="team-a", targetFilter={"replicasPathList": ["spec.missing"]}
    )
    cached = Objects([workload("apps/v1", "Deployment", "web", namespace="team-a", replicas=6)])
    with pytest.raises(AdmissionError) as info:
        _target(obj, cached).replicas()
    assert info.value.message == (
        "WorkloadSpread team-a/ws: targetFilter.replicasPathList:"
        " path 'spec.missing' not found in the workload"
    )
