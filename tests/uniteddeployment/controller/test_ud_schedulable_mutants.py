"""Adaptive bookkeeping, whole verdicts written out literally: what mutation testing (run U1)
found unpinned.

The rules and the conditions' reasons and messages (docs/uniteddeployment.md, "Adaptive
scheduling" and "Reservation mode"): `T_c` = rescheduleCriticalSeconds = 30 and `T_u` =
unschedulableDuration = 300 here. Default mode: a subset marked `Schedulable=False` stays
unschedulable until `T_u` after the mark, then recovers (`True/recover/"unschedulable subset
recovered after 300 seconds"`); a pod pending and unschedulable for `T_c` (a deadline exactly at
now has passed) marks it (`False/reschedule/"timeout pending pods found"`, requeue after `T_u`).
Reservation mode: a new pod of a marked subset starts reserved; a reserved pod is released once
Running on the updated revision and Ready for strictly more than `T_u`; a pod on the updated
revision becomes reserved when it timed out pending; an old-revision pod once the update began
`T_c` ago (an update-timeout pod); the subset reads `False/reschedule/"reserved pods found"` or
`True/reschedule/"no reserved pods"`; only strictly positive delays are requeued. After
allocation, a recovered (marked, schedulable) subset that grows is marked again
(`False/reschedule/"subset just recovered scaled up"`). A condition whose status and reason are
unchanged keeps its time and message.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from ud_testkit import NOW, NOW_TEXT, REVISION, condition

from py_engine.model.uniteddeployment import AdaptiveOptions
from py_engine.uniteddeployment.controller.schedulable import (
    PodReservation,
    SubsetVerdict,
    after_allocation,
    classify_pod,
    default_verdict,
    reserving_verdict,
)

pytestmark = pytest.mark.timeout(30)

OPTIONS = AdaptiveOptions(reschedule_critical_seconds=30, unschedulable_duration_seconds=300)
RESERVED = "spreadgate.dev/united-deployment-reserved-pod"
KRUISE_RESERVED = "apps.kruise.io/united-deployment-reserved-pod"


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return condition("Schedulable", status, reason, message, when)


def pending(
    name: str, waiting_since: datetime, *, revision: str = "r2", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": "2025-12-31T00:00:00Z",
            "labels": {REVISION: revision, **(labels or {})},
        },
        "spec": {},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "lastTransitionTime": text(waiting_since),
                }
            ],
        },
    }


def running(
    name: str, ready_since: datetime | None, *, revision: str = "r2", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    conditions = (
        []
        if ready_since is None
        else [{"type": "Ready", "status": "True", "lastTransitionTime": text(ready_since)}]
    )
    return {
        "metadata": {"name": name, "labels": {REVISION: revision, **(labels or {})}},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running", "conditions": conditions},
    }


# --- default mode -----------------------------------------------------------------------------


def default(
    stored: dict[str, Any] | None, pods: list[dict[str, Any]], now: datetime = NOW, ready: int = 1
) -> SubsetVerdict:
    return default_verdict(
        status_replicas=2, ready_replicas=ready, pods=pods, stored=stored, options=OPTIONS, now=now
    )


def test_a_marked_subset_stays_unschedulable_until_the_duration_is_over() -> None:
    stored = cond("False", "reschedule", "timeout pending pods found", text(ago(100)))
    assert default(stored, [], ready=2) == SubsetVerdict(
        unschedulable=True, condition=stored, requeue=(200.0,)
    )
    half = NOW + timedelta(seconds=0.5)
    late = cond("False", "reschedule", "m", text(ago(300)))
    assert default(late, [], now=half - timedelta(seconds=1), ready=2) == SubsetVerdict(
        unschedulable=True, condition=late, requeue=(0.5,)
    )


def test_a_marked_subset_recovers_when_the_duration_is_over_exactly() -> None:
    stored = cond("False", "reschedule", "timeout pending pods found", text(ago(300)))
    recovered = cond("True", "recover", "unschedulable subset recovered after 300 seconds", NOW_TEXT)
    assert default(stored, [], ready=2) == SubsetVerdict(unschedulable=False, condition=recovered)
    undated = {k: v for k, v in stored.items() if k != "lastTransitionTime"}
    assert default(undated, [], ready=2) == SubsetVerdict(unschedulable=False, condition=recovered)


def test_a_schedulable_stored_condition_is_kept_as_a_copy() -> None:
    stored = cond("True", "recover", "m", "2025-01-01T00:00:00Z")
    verdict = default(stored, [], ready=2)
    assert verdict == SubsetVerdict(unschedulable=False, condition=stored)
    assert verdict.condition is not stored


def test_timed_out_pending_pods_mark_the_subset_and_are_counted() -> None:
    pods = [
        pending("late", ago(40)),
        pending("exact", ago(30)),
        pending("early", ago(10)),
        running("up", ago(500)),
    ]
    marked = cond("False", "reschedule", "timeout pending pods found", NOW_TEXT)
    assert default(None, pods) == SubsetVerdict(
        unschedulable=True, condition=marked, timed_out_pods=2, requeue=(20.0, 300.0)
    )
    # Every subset pod is ready: the pods are not even looked at.
    assert default(None, pods, ready=2) == SubsetVerdict(unschedulable=False, condition=None)


def test_a_pod_half_a_second_short_of_the_timeout_is_requeued() -> None:
    now = NOW + timedelta(seconds=0.5)
    verdict = default(None, [pending("p", ago(29))], now=now)
    assert verdict == SubsetVerdict(unschedulable=False, condition=None, requeue=(0.5,))


def test_a_mark_with_the_same_reason_keeps_its_time_when_pods_time_out_again() -> None:
    stored = cond("False", "reschedule", "old words", text(ago(100)))
    verdict = default(stored, [pending("p", ago(60))])
    assert verdict == SubsetVerdict(
        unschedulable=True, condition=stored, timed_out_pods=1, requeue=(200.0, 300.0)
    )


def test_a_recovered_subset_with_timed_out_pods_is_marked_again_now() -> None:
    stored = cond("False", "reschedule", "old words", text(ago(400)))
    verdict = default(stored, [pending("p", ago(60))])
    marked = cond("False", "reschedule", "timeout pending pods found", NOW_TEXT)
    assert verdict == SubsetVerdict(unschedulable=True, condition=marked, timed_out_pods=1, requeue=(300.0,))


# --- reservation mode: one pod ---------------------------------------------------------------


def classify(
    pod: dict[str, Any], *, marked: bool = False, updated_since: datetime | None = None, now: datetime = NOW
) -> PodReservation:
    return classify_pod(
        pod,
        marked=marked,
        updated_revision="r2",
        updated_since=updated_since,
        pending_timeout=30,
        ready_for=300,
        now=now,
    )


def reserved(pod: dict[str, Any], value: str = "true", key: str = RESERVED) -> dict[str, Any]:
    pod["metadata"]["labels"][key] = value
    return pod


@pytest.mark.parametrize(
    ("pod", "marked", "updated_since", "expected"),
    [
        (running("new", None), True, None, PodReservation(True, 300)),
        (reserved(running("ready-100", ago(100))), False, None, PodReservation(True, 200.0)),
        (reserved(running("ready-300", ago(300))), False, None, PodReservation(True, 0.0)),
        (reserved(running("ready-301", ago(301))), False, None, PodReservation(False, None)),
        (
            reserved(running("kruise-301", ago(301)), key=KRUISE_RESERVED),
            True,
            None,
            PodReservation(False, None),
        ),
        (reserved(running("old-rev", ago(1000), revision="r1")), False, None, PodReservation(True, 300)),
        (reserved(running("not-ready", None)), False, None, PodReservation(True, 300)),
        (reserved(pending("pending", ago(1000))), False, None, PodReservation(True, 300)),
        (pending("timed-out", ago(30)), False, None, PodReservation(True, 300)),
        (pending("waiting", ago(10)), False, None, PodReservation(False, 20.0)),
        (running("healthy", ago(10)), False, None, PodReservation(False, None)),
        (running("old-no-update", ago(10), revision="r1"), False, None, PodReservation(False, None)),
        (
            running("old-update-late", ago(10), revision="r1"),
            False,
            ago(30),
            PodReservation(True, 300, update_timeout=True),
        ),
        (running("old-update-early", ago(10), revision="r1"), False, ago(10), PodReservation(False, 20.0)),
        (
            reserved(running("labelled-false", ago(10), revision="r1"), "false"),
            False,
            ago(40),
            PodReservation(True, 300, update_timeout=True),
        ),
    ],
    ids=lambda value: value["metadata"]["name"] if isinstance(value, dict) else None,
)
def test_each_pod_is_classified(
    pod: dict[str, Any], marked: bool, updated_since: datetime | None, expected: PodReservation
) -> None:
    assert classify(pod, marked=marked, updated_since=updated_since) == expected


def test_a_terminating_old_revision_pod_is_never_an_update_timeout() -> None:
    pod = running("going", ago(10), revision="r1")
    pod["metadata"]["deletionTimestamp"] = text(ago(5))
    assert classify(pod, updated_since=ago(100)) == PodReservation(False, None)


def test_deadlines_half_a_second_away_have_not_passed() -> None:
    now = NOW + timedelta(seconds=0.5)
    assert classify(pending("p", ago(30)), now=now - timedelta(seconds=1)) == PodReservation(False, 0.5)
    old = running("old", ago(10), revision="r1")
    assert classify(old, updated_since=ago(29.5)) == PodReservation(False, 0.5)


# --- reservation mode: a subset --------------------------------------------------------------


def reserving(
    pods: list[dict[str, Any]],
    stored: dict[str, Any] | None,
    updated_since: datetime | None = None,
    now: datetime = NOW,
) -> SubsetVerdict:
    return reserving_verdict(
        pods=pods, stored=stored, updated_revision="r2", updated_since=updated_since, options=OPTIONS, now=now
    )


def test_a_marked_subset_reserves_its_new_pods_and_relabels_what_changed() -> None:
    stored = cond("False", "reschedule", "subset just recovered scaled up", text(ago(50)))
    pods = [
        running("new", ago(10)),  # no label in a marked subset: reserved
        reserved(
            running("kruise-done", ago(400)), key=KRUISE_RESERVED
        ),  # released, Spreadgate's label written
        reserved(running("done", ago(400))),  # released
        reserved(running("still", ago(100))),  # reserved 200 s more, already labelled
        reserved(running("exact", ago(300))),  # reserved, recheck in 0 s: not requeued
        reserved(running("ok", ago(10)), "false"),
    ]
    verdict = reserving(pods, stored)
    assert verdict == SubsetVerdict(
        unschedulable=True,
        condition=stored,  # same status and reason: kept with its time and message
        reserved_pods=3,
        requeue=(300.0, 200.0),
        pod_labels={"new": "true", "kruise-done": "false", "done": "false"},
    )


def test_update_timeout_pods_are_counted_and_reserved() -> None:
    pods = [
        running("old-1", ago(10), revision="r1"),
        running("old-2", ago(10), revision="r1"),
        running("new", ago(10)),
    ]
    verdict = reserving(pods, None, updated_since=ago(30))
    assert verdict == SubsetVerdict(
        unschedulable=True,
        condition=cond("False", "reschedule", "reserved pods found", NOW_TEXT),
        reserved_pods=2,
        update_timeout_pods=2,
        requeue=(300.0, 300.0),
        pod_labels={"old-1": "true", "old-2": "true", "new": "false"},
    )
    later = reserving(pods[:1] + pods[2:], None, updated_since=ago(30))
    assert (later.reserved_pods, later.update_timeout_pods) == (1, 1)


def test_a_subset_without_reserved_pods_is_schedulable() -> None:
    stored = cond("False", "reschedule", "reserved pods found", text(ago(50)))
    pods = [
        running("a", ago(10), labels={RESERVED: "false"}),
        pending("b", ago(29), labels={KRUISE_RESERVED: "false"}),
    ]
    verdict = reserving(pods, stored, now=NOW + timedelta(seconds=0.5))
    assert verdict == SubsetVerdict(
        unschedulable=False,
        condition=cond("True", "reschedule", "no reserved pods", NOW_TEXT),
        requeue=(0.5,),
        pod_labels={"b": "false"},
    )


def test_a_marked_subset_without_pods_is_schedulable_but_stays_marked_until_rewritten() -> None:
    stored = cond("False", "recover", "m", text(ago(50)))
    verdict = reserving([running("unlabelled", ago(10))], stored)
    assert verdict.reserved_pods == 1 and verdict.pod_labels == {"unlabelled": "true"}
    assert verdict.condition == cond("False", "reschedule", "reserved pods found", NOW_TEXT)


# --- after allocation ------------------------------------------------------------------------


def after(
    current: dict[str, Any] | None, *, unschedulable: bool = False, marked: bool = True, grows: int = 1
) -> Any:
    return after_allocation(
        current,
        unschedulable=unschedulable,
        marked=marked,
        current_replicas=2,
        next_replicas=2 + grows,
        now=NOW,
    )


def test_a_recovered_subset_that_grows_is_marked_again() -> None:
    again = cond("False", "reschedule", "subset just recovered scaled up", NOW_TEXT)
    assert after(None) == again
    assert after(cond("True", "reschedule", "no reserved pods", "2025-01-01T00:00:00Z")) == again
    same = cond("False", "reschedule", "reserved pods found", "2025-01-01T00:00:00Z")
    assert after(same) == same  # same status and reason: kept


@pytest.mark.parametrize(
    ("unschedulable", "marked", "grows"),
    [(True, True, 1), (False, False, 1), (False, True, 0), (False, True, -1)],
)
def test_otherwise_the_condition_is_handed_back(unschedulable: bool, marked: bool, grows: int) -> None:
    current = cond("True", "reschedule", "no reserved pods", "2025-01-01T00:00:00Z")
    assert after(current, unschedulable=unschedulable, marked=marked, grows=grows) is current
