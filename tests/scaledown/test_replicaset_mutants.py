"""ReplicaSet scale-down plumbing: related-pod ranks, merging, per-sync re-ranking.

Expected orders are written out from the ReplicaSet rules (`manageReplicas`,
`getPodsRankedByRelatedPodsOnSameNode`, `ActivePodsWithRanks`) as
`py_engine/scaledown/replicaset.py` states them. Written for issue 29.
"""

from __future__ import annotations

import pytest
from scaledown_times import BASE as SHARED_BASE
from scaledown_times import HOUR, NOW, NOW_NS, SECOND

from py_engine.scaledown import (
    PodFacts,
    get_pods_to_delete,
    merge_related,
    related_pod_ranks,
    scale_down_passes,
)
from py_engine.scaledown.gates import FeatureGates
from py_engine.scaledown.replicaset import replicaset_order

COST_OFF = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=True)

BASE = SHARED_BASE._replace(uid="")


def test_a_node_without_related_pods_ranks_zero() -> None:
    pods = [BASE._replace(name="a", node_name="n1"), BASE._replace(name="b", node_name="n9")]
    related = [BASE._replace(name=f"r{i}", node_name="n1") for i in range(3)]
    assert related_pod_ranks(pods, related) == [3, 0]


def test_replicaset_order_ranks_by_related_pods_on_the_node() -> None:
    # b is newer, but a shares its node with three related pods: a goes first.
    pods = [
        BASE._replace(name="a", node_name="n1"),
        BASE._replace(name="b", node_name="n2", created=NOW_NS - HOUR),
    ]
    related = [BASE._replace(name=f"r{i}", node_name="n1") for i in range(3)]
    order = replicaset_order(pods, related, now=NOW)
    assert order.order == [0, 1]
    assert list(order.ranks) == [3, 0]
    assert replicaset_order(pods, None, now=NOW).order == [1, 0]
    assert replicaset_order(pods, related, now=NOW, ranks=[0, 1]).order == [1, 0]


def same_bucket_pair() -> list[PodFacts]:
    """Created 5 h -/+ 1 s ago (one log2 bucket); "a" is older but has the smaller UID; "b" costs more."""
    return [
        BASE._replace(name="a", uid="a", created=NOW_NS - 5 * HOUR - SECOND),
        BASE._replace(name="b", uid="b", created=NOW_NS - 5 * HOUR + SECOND, cost=1),
    ]


def test_now_and_gates_reach_the_ranking() -> None:
    pods = same_bucket_pair()
    # Cost off, buckets on with now: one bucket, the smaller UID ("a") first.
    assert replicaset_order(pods, None, now=NOW, gates=COST_OFF).order == [0, 1]
    assert get_pods_to_delete(pods, None, 1, now=NOW, gates=COST_OFF) == [0]
    # Cost off, no now: exact times, the newer ("b") first.
    assert replicaset_order(pods, None, now=None, gates=COST_OFF).order == [1, 0]
    assert get_pods_to_delete(pods, None, 1, now=None, gates=COST_OFF) == [1]
    # Default gates: the cheaper ("a") first whatever the times.
    assert get_pods_to_delete(pods, None, 1, now=None) == [0]


def test_get_pods_to_delete_rejects_a_diff_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"^cannot delete 3 of 2 pods$"):
        get_pods_to_delete(same_bucket_pair(), None, 3, now=NOW)


def test_merge_related_deduplicates_by_uid_else_by_name() -> None:
    own = [BASE._replace(name="a", uid="u1"), BASE._replace(name="x")]
    others = [BASE._replace(name="b", uid="u1"), BASE._replace(name="y"), BASE._replace(name="x")]
    merged = merge_related(own, others)
    assert [pod.name for pod in merged] == ["a", "x", "y"]


def test_each_sync_drops_its_victims_from_the_related_pods_without_uids() -> None:
    # x and y share n1 (rank 2), z is alone on n2 (rank 1). Sync 1 takes x (rank 2, newest).
    # With x gone, y and z both rank 1 and the newer z goes in sync 2.
    pods = [
        BASE._replace(name="x", node_name="n1", created=NOW_NS - HOUR),
        BASE._replace(name="y", node_name="n1", created=NOW_NS - 9 * HOUR),
        BASE._replace(name="z", node_name="n2", created=NOW_NS - 2 * HOUR),
    ]
    passes = scale_down_passes(pods, pods, 2, now=None, burst=1)
    assert [[placement.item for placement in sync] for sync in passes] == [[0], [2]]
    assert [[placement.rank for placement in sync] for sync in passes] == [[2.0], [1.0]]


def test_scale_down_passes_rejects_bad_arguments_with_a_clear_message() -> None:
    pods = same_bucket_pair()
    with pytest.raises(ValueError, match=r"^cannot scale down by 3: there are 2 active pods$"):
        scale_down_passes(pods, None, 3, now=NOW)
    with pytest.raises(ValueError, match=r"^cannot scale down by -1: there are 2 active pods$"):
        scale_down_passes(pods, None, -1, now=NOW)
    with pytest.raises(ValueError, match=r"^burst must be at least 1$"):
        scale_down_passes(pods, None, 1, now=NOW, burst=0)
    with pytest.raises(ValueError, match=r"^1 ranks for 2 pods$"):
        scale_down_passes(pods, None, 1, now=NOW, ranks=[1])


def test_scale_down_passes_uses_now_gates_and_explicit_ranks() -> None:
    pods = same_bucket_pair()
    first = scale_down_passes(pods, None, 1, now=NOW, gates=COST_OFF)
    assert [placement.item for placement in first[0]] == [0]  # one bucket: smaller UID
    assert [
        placement.item for placement in scale_down_passes(pods, None, 1, now=None, gates=COST_OFF)[0]
    ] == [1]
    assert [
        placement.item
        for placement in scale_down_passes(pods, None, 1, now=NOW, gates=COST_OFF, ranks=[0, 5])[0]
    ] == [1]
    assert scale_down_passes(pods, None, 1, now=NOW, gates=COST_OFF, ranks=[0, 5])[0][0].rank == 5.0
