"""Percentage caps follow the workload's current replica count at admission.

The controller resolves `N%` against the replica count of its last sync; right
after a scale-up that status reads every percentage subset full. Spreadgate
re-resolves the cap from the current count and the slots each entry holds, so
the first pods after a scale-up still land in their share (Kruise admits them
without a subset and the split drifts).
"""

from __future__ import annotations

from admission_builders import deployment_chain, make_ctx, pod, spread, subset, versioned

from py_engine.workloadspread.admission.ledger import occupied_slots
from py_engine.workloadspread.admission.reserve import reserve_create

SUBSETS = [subset("a", "20%", "z1"), subset("b", "20%", "z2"), subset("c", "60%", "z3")]


def synced_at_ten() -> dict[str, object]:
    """The status the controller wrote at 10 replicas: 2/2/6 pods, every subset full."""
    return versioned(
        "abc123",
        {"name": "a", "replicas": 2, "missingReplicas": 0},
        {"name": "b", "replicas": 2, "missingReplicas": 0},
        {"name": "c", "replicas": 6, "missingReplicas": 0},
    )


def test_scale_up_opens_the_new_share_in_subset_order() -> None:
    ctx = make_ctx(deployment_chain(replicas=20))
    reservation = reserve_create(spread(SUBSETS, status=synced_at_ten()), pod("p1"), ctx, generated_uid="u")
    assert reservation.subset == "a"
    assert reservation.spread is not None
    entries = reservation.spread["status"]["versionedSubsetStatuses"]["abc123"]
    assert [e["missingReplicas"] for e in entries] == [1, 2, 6]  # 4-2-1, 4-2, 12-6


def test_without_the_scale_up_the_full_subsets_stay_full() -> None:
    ctx = make_ctx(deployment_chain(replicas=10))
    reservation = reserve_create(spread(SUBSETS, status=synced_at_ten()), pod("p1"), ctx, generated_uid="u")
    assert reservation.subset is None
    assert reservation.spread is None and reservation.warnings


def test_pending_admissions_and_deletions_count_as_held_slots() -> None:
    status = versioned(
        "abc123",
        {
            "name": "a",
            "replicas": 2,
            "missingReplicas": 0,
            "creatingPods": {"n1": "2024-06-01T12:00:00Z", "n2": "2024-06-01T12:00:00Z"},
        },
        {"name": "b", "replicas": 2, "missingReplicas": 1, "deletingPods": {"old": "2024-06-01T12:00:00Z"}},
        {"name": "c", "replicas": 6, "missingReplicas": 0},
    )
    assert [occupied_slots(e) for e in status["versionedSubsetStatuses"]["abc123"]] == [4, 1, 6]  # type: ignore[index]
    ctx = make_ctx(deployment_chain(replicas=20))
    reservation = reserve_create(spread(SUBSETS, status=status), pod("p1"), ctx, generated_uid="u")
    assert reservation.subset == "b"  # a holds 4 of its 4; b holds 1 of 4


def test_unlimited_in_status_and_missing_workload_are_left_as_stored() -> None:
    status = versioned(
        "abc123",
        {"name": "a", "replicas": 9, "missingReplicas": -1},
        {"name": "b", "replicas": 0, "missingReplicas": 0},
        {"name": "c", "replicas": 0, "missingReplicas": 0},
    )
    reservation = reserve_create(
        spread(SUBSETS, status=status), pod("p1"), make_ctx(deployment_chain(replicas=20)), generated_uid="u"
    )
    assert (
        reservation.subset == "a" and reservation.spread is None
    )  # -1 trumps the spec until the controller syncs
    orphan = reserve_create(
        spread(SUBSETS, status=synced_at_ten()), pod("p1"), make_ctx([]), generated_uid="u"
    )
    assert orphan.subset is None  # no workload to read the count from: the stored status decides


def test_a_cache_behind_a_scale_up_is_checked_against_the_api_once() -> None:
    from dataclasses import replace

    from admission_builders import Objects

    stale = make_ctx(deployment_chain(replicas=10))
    api = Objects(deployment_chain(replicas=20))
    ctx = replace(stale, fresh_lookup=api.lookup)
    reservation = reserve_create(spread(SUBSETS, status=synced_at_ten()), pod("p1"), ctx, generated_uid="u")
    assert reservation.subset == "a"
    assert len(api.calls) == 1  # only because the cached view said "full"
    roomy = versioned(
        "abc123",
        {"name": "a", "replicas": 0, "missingReplicas": 2},
        {"name": "b", "replicas": 0, "missingReplicas": 2},
        {"name": "c", "replicas": 0, "missingReplicas": 6},
    )
    reserve_create(spread(SUBSETS, status=roomy), pod("p2"), ctx, generated_uid="u2")
    assert len(api.calls) == 1


def test_first_pods_after_creation_read_the_replicas_from_the_api_when_the_cache_says_zero() -> None:
    """The Deployment was created with 0 replicas and scaled at once: its first pods can
    arrive while the cache still says 0, so the version is initialised with caps of 0."""
    from dataclasses import replace

    from admission_builders import Objects

    ctx = replace(
        make_ctx(deployment_chain(replicas=0)), fresh_lookup=Objects(deployment_chain(replicas=10)).lookup
    )
    reservation = reserve_create(spread(SUBSETS), pod("p1"), ctx, generated_uid="u")
    assert reservation.subset == "a"
    assert reservation.spread is not None
    entries = reservation.spread["status"]["versionedSubsetStatuses"]["abc123"]
    assert [e["missingReplicas"] for e in entries] == [1, 2, 6]
