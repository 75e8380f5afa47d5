"""Pod DELETE bookkeeping (py_engine/workloadspread/admission/release.py) asserted whole: every
`DeleteRelease` is written out field by field, the spread it writes included.

Expected values follow docs/design-workloadspread.md §2.4 and the module's rule (a pod frees a slot
only while its subset, the deletion recorded, holds fewer than its cap: replicas + creatingPods -
deletingPods < cap; a percentage cap resolves against the workload's replicas; while
`metadata.generation` is ahead of `status.observedGeneration` the room is recounted from the spec's
cap, `max(0, cap - held)`). Time is the builders' NOW (2024-06-01T12:00:00Z).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from admission_builders import NOW_TEXT, deployment_chain, make_ctx, pod, spread, subset, versioned

from py_engine.model import MATCHED_ANNOTATION
from py_engine.workloadspread.admission.caches import AdmissionCaches
from py_engine.workloadspread.admission.release import DeleteRelease, find_annotated_spread, release_delete

pytestmark = pytest.mark.timeout(10)

POD = "web-abc123-x1"


def _annotated(subset_name: str, spread_name: str = "ws", **kwargs: Any) -> dict[str, Any]:
    return pod(
        annotations={MATCHED_ANNOTATION: f'{{"name":"{spread_name}","subset":"{subset_name}"}}'}, **kwargs
    )


def _with_version(ws: dict[str, Any], *entries: dict[str, Any]) -> dict[str, Any]:
    """`ws` with `entries` as the pod's version (`abc123`) written out whole."""
    out = copy.deepcopy(ws)
    out["status"] = versioned("abc123", *entries)
    return out


def test_a_spread_of_another_namespace_or_kind_or_name_is_not_the_annotated_one() -> None:
    in_default = spread([subset("a")])
    other_name = spread([subset("a")], name="other", namespace="team-a")
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ws", "namespace": "team-a"}}
    mine = spread([subset("a")], namespace="team-a")
    the_pod = _annotated("a", namespace="team-a")
    assert find_annotated_spread(the_pod, [in_default, other_name, config_map, mine]) is mine
    assert find_annotated_spread(the_pod, [in_default, other_name, config_map]) is None
    assert find_annotated_spread(_annotated("a"), [mine, in_default]) is in_default
    nameless = pod(annotations={MATCHED_ANNOTATION: '{"name":"","subset":"a"}'})
    assert find_annotated_spread(nameless, [in_default, mine]) is None


DELETED = {"deletingPods": {POD: NOW_TEXT}}


@pytest.mark.parametrize(
    ("stored", "deleted_from", "replicas", "written", "freed"),
    [
        # a (cap 3) holds 4 after its cap was lowered; the workload is not in the caches, so only
        # b's 50 % is unknown. The deletion leaves 3 held, not below 3: recorded, not freed.
        (
            ({"name": "a", "replicas": 4, "missingReplicas": 0}, {"name": "b", "missingReplicas": 1}),
            "a",
            None,
            (
                {"name": "a", "replicas": 4, "missingReplicas": 0, **DELETED},
                {"name": "b", "missingReplicas": 1},
            ),
            False,
        ),
        # b is 50 % of 6 = 3 and holds 2; the deletion leaves 1 < 3: freed, room 1 -> 2.
        (
            (
                {"name": "a", "replicas": 3, "missingReplicas": 0},
                {"name": "b", "replicas": 2, "missingReplicas": 1},
            ),
            "b",
            6,
            (
                {"name": "a", "replicas": 3, "missingReplicas": 0},
                {"name": "b", "replicas": 2, "missingReplicas": 2, **DELETED},
            ),
            True,
        ),
        # b's workload is not found: its cap is unknown, so the slot is given back (room 0 -> 1).
        (
            (
                {"name": "a", "replicas": 3, "missingReplicas": 0},
                {"name": "b", "replicas": 4, "missingReplicas": 0},
            ),
            "b",
            None,
            (
                {"name": "a", "replicas": 3, "missingReplicas": 0},
                {"name": "b", "replicas": 4, "missingReplicas": 1, **DELETED},
            ),
            True,
        ),
    ],
    ids=["integer-cap-beside-unknown-percentage", "percentage-resolved", "percentage-unknown"],
)
def test_integer_and_percentage_caps_side_by_side(
    stored: tuple[dict[str, Any], ...],
    deleted_from: str,
    replicas: int | None,
    written: tuple[dict[str, Any], ...],
    freed: bool,
) -> None:
    ws = spread([subset("a", 3), subset("b", "50%")], status=versioned("abc123", *stored))
    ctx = make_ctx(deployment_chain(replicas) if replicas is not None else ())
    expected = _with_version(ws, *written)
    assert release_delete(ws, _annotated(deleted_from), ctx) == DeleteRelease(expected, deleted_from, freed)


def test_only_a_lone_unlimited_subset_takes_the_shortcut() -> None:
    unlimited_first = spread(
        [subset("a"), subset("b", 3)],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 5, "missingReplicas": -1},
            {"name": "b", "replicas": 3, "missingReplicas": 0},
        ),
    )
    expected = _with_version(
        unlimited_first,
        {"name": "a", "replicas": 5, "missingReplicas": -1},
        {"name": "b", "replicas": 3, "missingReplicas": 1, "deletingPods": {POD: NOW_TEXT}},
    )
    assert release_delete(unlimited_first, _annotated("b"), make_ctx()) == DeleteRelease(expected, "b", True)
    capped_alone = spread(
        [subset("a", 3)], status=versioned("abc123", {"name": "a", "replicas": 3, "missingReplicas": 0})
    )
    expected = _with_version(
        capped_alone, {"name": "a", "replicas": 3, "missingReplicas": 1, "deletingPods": {POD: NOW_TEXT}}
    )
    assert release_delete(capped_alone, _annotated("a"), make_ctx()) == DeleteRelease(expected, "a", True)
    alone = spread(
        [subset("solo")], status=versioned("abc123", {"name": "solo", "replicas": 2, "missingReplicas": -1})
    )
    assert release_delete(alone, _annotated("solo"), make_ctx()) == DeleteRelease(None, "solo", False)


def test_a_synced_status_without_a_spec_cap_decides_by_its_own_count() -> None:
    """The controller has seen this generation; the entry still reads room 2 while the spec has no
    cap for b: the stored count is trusted, the slot given back (cap unknown)."""
    ws = spread(
        [subset("a", 3), subset("b")],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 3, "missingReplicas": 0},
            {"name": "b", "replicas": 1, "missingReplicas": 2},
        ),
    )
    expected = _with_version(
        ws,
        {"name": "a", "replicas": 3, "missingReplicas": 0},
        {"name": "b", "replicas": 1, "missingReplicas": 3, "deletingPods": {POD: NOW_TEXT}},
    )
    assert release_delete(ws, _annotated("b"), make_ctx()) == DeleteRelease(expected, "b", True)


def _ahead(*entries: dict[str, Any]) -> dict[str, Any]:
    """Spec generation 2 (a lowered to 2, b made unlimited) over a status of generation 1."""
    ws = spread([subset("a", 2), subset("b")], status=versioned("abc123", *entries))
    ws["metadata"]["generation"] = 2
    ws["status"]["observedGeneration"] = 1
    return ws


def test_while_the_spec_is_ahead_the_room_is_recounted_from_the_spec_cap() -> None:
    ws = _ahead(
        {"name": "a", "replicas": 3, "missingReplicas": 0}, {"name": "b", "replicas": 1, "missingReplicas": 2}
    )
    expected = copy.deepcopy(ws)
    expected["status"]["versionedSubsetStatuses"]["abc123"][0] = {
        "name": "a",
        "replicas": 3,
        "missingReplicas": 0,  # held 3 - 1 = 2, not below the new cap 2: max(0, 2 - 2)
        "deletingPods": {POD: NOW_TEXT},
    }
    assert release_delete(ws, _annotated("a"), make_ctx()) == DeleteRelease(expected, "a", False)
    # b is unlimited in the spec the controller has not synced: nothing recorded.
    assert release_delete(ws, _annotated("b"), make_ctx()) == DeleteRelease(None, None, False)


def test_the_callers_status_is_not_touched_unless_handed_over() -> None:
    ws = spread(
        [subset("a", 3), subset("b")],
        status=versioned(
            "abc123", {"name": "a", "replicas": 3, "missingReplicas": 0, "deletingPods": {"old": NOW_TEXT}}
        ),
    )
    before = copy.deepcopy(ws)
    result = release_delete(ws, _annotated("a"), make_ctx())
    assert ws == before
    assert result.spread is not None and result.freed is True
    assert result.spread["status"]["versionedSubsetStatuses"]["abc123"][0]["deletingPods"] == {
        "old": NOW_TEXT,
        POD: NOW_TEXT,
    }


def test_the_spread_is_parsed_through_the_runtimes_cache() -> None:
    caches = AdmissionCaches()
    ws = spread(
        [subset("a", 3), subset("b")],
        status=versioned("abc123", {"name": "a", "replicas": 3, "missingReplicas": 0}),
    )
    release_delete(ws, _annotated("a"), make_ctx(caches=caches))
    release_delete(ws, _annotated("a", name="web-abc123-x2"), make_ctx(caches=caches))
    assert (caches.spreads.misses, caches.spreads.hits, len(caches.spreads)) == (1, 1, 1)


def test_an_unannotated_pod_names_no_spread() -> None:
    assert find_annotated_spread(pod(), [spread([subset("a")])]) is None


def test_a_version_without_entries_is_made_from_the_spec_with_the_percentage_resolved() -> None:
    """No status for the pod's version: a is 50 % of 6 = 3 with nothing counted (room 3); the
    deletion then leaves -1 held, below 3: freed, room 4 (no upper clamp)."""
    ws = spread([subset("a", "50%"), subset("b")])
    expected = _with_version(
        ws,
        {"name": "a", "replicas": 0, "missingReplicas": 4, "deletingPods": {POD: NOW_TEXT}},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
    )
    assert release_delete(ws, _annotated("a"), make_ctx(deployment_chain(6))) == DeleteRelease(
        expected, "a", True
    )


@pytest.mark.parametrize("field", ["creatingPods", "deletingPods"])
def test_a_pod_already_recorded_in_any_subset_gives_nothing_back(field: str) -> None:
    ws = spread(
        [subset("a", 3), subset("b", 3)],
        status=versioned(
            "abc123",
            {"name": "a", "replicas": 3, "missingReplicas": 0},
            {"name": "b", "replicas": 1, "missingReplicas": 2, field: {POD: NOW_TEXT}},
        ),
    )
    assert release_delete(ws, _annotated("a"), make_ctx()) == DeleteRelease(None, None, False)
