"""What a write conflict between webhook replicas costs the committer, counted (issue 28).

Between replicas a 409 is the normal case: another replica's write moved the
resourceVersion and is already on its way to this process's watch cache. These tests make
that happen at a chosen moment (a second client writes the spread) and count the work the
committer does about it: write attempts, GETs, pauses, applies. Each of the first three
failed on the committer that answered every 409 with a jittered pause and a GET, and kept
writing on the object it last wrote while the cache showed a newer one.

The embedded API server over HTTPS, one real watch cache per "replica" (`replica_kit`). A
write overtaken on the wire by a peer's, before its 409 comes back, is
`test_committer_overtaken.py`'s.
"""

from __future__ import annotations

import pytest
from metrics_kit import value
from polling import wait_until
from replica_kit import JSON, Replica, peer_write, stored, take
from webhook_testkit import KubeEnv

from webhook.metrics import WebhookMetrics

pytestmark = pytest.mark.timeout(60)


def test_a_conflict_with_a_peer_retries_at_once_on_the_cached_copy(env: KubeEnv, replica: Replica) -> None:
    """A peer writes while this replica's write is on the wire: one 409, then the retry waits for
    the peer's object in the watch cache and goes on it: no GET, no pause, two attempts in all."""
    assert replica.submit(take("first"))
    replica.store.gets = replica.store.attempts = 0

    def peer_first() -> None:
        peer_write(env, "peer")

    replica.store.hooks.before = peer_first
    assert replica.submit(take("mine"))
    stats = replica.committer.stats.snapshot()
    assert stats["conflicts"] == 1 and replica.store.attempts == 2
    assert replica.store.gets == 0 and stats["reads"] == 0, stats  # the old committer: 1 GET
    assert stats["backoffs"] == 0 and stats["refreshed"] == 1, stats
    assert stored(env) == ["first", "peer", "mine"]


def test_a_newer_cached_copy_from_a_peer_is_written_on_without_a_conflict(
    env: KubeEnv, replica: Replica
) -> None:
    """After this replica's own write, a peer writes and the watch cache shows it: the next batch
    is applied on the cache's copy, not on the object this replica wrote (a certain 409)."""
    assert replica.submit(take("first"))
    theirs = peer_write(env, "peer")
    wait_until(lambda: replica.sees(theirs), what="the peer's write in the watch cache")
    replica.store.gets = replica.store.attempts = 0
    assert replica.submit(take("mine"))
    stats = replica.committer.stats.snapshot()
    assert replica.store.attempts == 1 and stats["conflicts"] == 0, stats  # the old committer: 2 and 1
    assert replica.store.gets == 0
    assert stored(env) == ["first", "peer", "mine"]


def test_a_batch_the_cache_shows_superseded_is_applied_again_not_sent(env: KubeEnv, replica: Replica) -> None:
    """A peer's write reaches the watch cache while the batch is being applied: the batch is
    applied again on the newer copy and written once; no write that could only be a 409."""
    assert replica.submit(take("first"))
    applies: list[str] = []
    inner = take("mine", applies)

    def apply(obj: JSON) -> tuple[JSON | None, bool]:
        if not applies:  # the first apply: a peer writes meanwhile, and the cache shows it
            theirs = peer_write(env, "peer")
            wait_until(lambda: replica.sees(theirs), what="the peer's write in the watch cache")
        return inner(obj)

    replica.store.gets = replica.store.attempts = 0
    assert replica.submit(apply)
    stats = replica.committer.stats.snapshot()
    assert replica.store.attempts == 1 and stats["conflicts"] == 0, stats  # the old committer: 2 and 1
    assert stats["stale_skips"] == 1 and applies == ["mine", "mine"]
    assert replica.store.gets == 0
    assert stored(env) == ["first", "peer", "mine"]


def test_a_conflict_no_newer_object_explains_backs_off_and_reads_once(env: KubeEnv, replica: Replica) -> None:
    """A 409 with the resourceVersion unchanged (an injected one here) is not a peer's success:
    the cache has nothing newer, so the committer reads the spread once, pauses, and retries."""
    assert replica.submit(take("first"))
    replica.committer.conflict_wait = 0.05
    env.faults.set_spec("workloadspreads/status:update:conflict=1")
    replica.store.gets = replica.store.attempts = 0

    def stop_conflicts() -> None:
        replica.store.hooks.before = env.faults.clear  # the second attempt goes through

    replica.store.hooks.before = stop_conflicts
    assert replica.submit(take("mine"))
    stats = replica.committer.stats.snapshot()
    assert stats["conflicts"] == 1 and replica.store.attempts == 2
    assert replica.store.gets == 1 and stats["backoffs"] == 1 and stats["refreshed"] == 0, stats
    assert stored(env) == ["first", "mine"]


def test_the_conflict_path_is_counted_on_the_webhook_metrics(env: KubeEnv, replica: Replica) -> None:
    """The committer's retries, refreshes from the cache, GETs, pauses, skipped sends and applies
    are the webhook's `/metrics` counters (docs/operations.md, "Metrics"): each moves when its
    case happens (a peer's conflict, a superseded batch, a 409 nothing newer explains)."""
    metrics = WebhookMetrics()
    metrics.committer = replica.committer.stats.snapshot

    def counted() -> dict[str, float | None]:
        text = metrics.render()
        return {name: value(text, name) for name in COUNTERS}

    assert replica.submit(take("first"))
    assert counted() == dict.fromkeys(COUNTERS, 0.0) | {
        "spreadgate_commit_applies_total": 1.0,
        "spreadgate_commit_committed_total": 1.0,
    }

    def peer_first() -> None:
        peer_write(env, "peer")

    replica.store.hooks.before = peer_first
    assert replica.submit(take("mine"))  # a 409, retried on the cache's copy: applied twice
    applies: list[str] = []
    inner = take("third", applies)

    def apply(obj: JSON) -> tuple[JSON | None, bool]:
        if not applies:  # a peer's write reaches the cache while this batch is applied
            theirs = peer_write(env, "peer-2")
            wait_until(lambda: replica.sees(theirs), what="the peer's write in the watch cache")
        return inner(obj)

    assert replica.submit(apply)  # applied again on the newer copy, not sent
    replica.committer.conflict_wait = 0.05
    env.faults.set_spec("workloadspreads/status:update:conflict=1")
    replica.store.hooks.before = lambda: setattr(replica.store.hooks, "before", env.faults.clear)
    assert replica.submit(take("fourth"))  # a 409 nothing newer explains: a GET, a pause
    assert counted() == {
        "spreadgate_status_write_retries_total": 2.0,
        "spreadgate_status_conflict_refreshes_total": 1.0,
        "spreadgate_status_reads_total": 1.0,
        "spreadgate_commit_backoffs_total": 1.0,
        "spreadgate_commit_stale_skips_total": 1.0,
        "spreadgate_commit_overtaken_total": 0.0,
        "spreadgate_commit_committed_total": 4.0,
        "spreadgate_commit_applies_total": 7.0,
    }
    assert stored(env) == ["first", "peer", "mine", "peer-2", "third", "fourth"]


COUNTERS = (
    "spreadgate_status_write_retries_total",
    "spreadgate_status_conflict_refreshes_total",
    "spreadgate_status_reads_total",
    "spreadgate_commit_backoffs_total",
    "spreadgate_commit_stale_skips_total",
    "spreadgate_commit_overtaken_total",
    "spreadgate_commit_committed_total",
    "spreadgate_commit_applies_total",
)
