"""What a write conflict between webhook replicas costs the committer, counted (issue 28).

Between replicas a 409 is the normal case: another replica's write moved the
resourceVersion and is already on its way to this process's watch cache. These tests make
that happen at a chosen moment (a second client writes the spread) and count the work the
committer does about it: write attempts, GETs, pauses, applies. Each of the first three
failed on the committer that answered every 409 with a jittered pause and a GET, and kept
writing on the object it last wrote while the cache showed a newer one.

The embedded API server over HTTPS, one real watch cache per "replica"; the reservations are
toys (a list of holders in `status.conditions`, a field the CRD declares).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from metrics_kit import value
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from py_engine.apiclient import KubeClient, WatchCache
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.admission.runtime.committer import Committer, KubeStatusStore
from webhook.metrics import WebhookMetrics

pytestmark = pytest.mark.timeout(60)
CLOCK = RealClock()
JSON = dict[str, Any]


def held(obj: JSON) -> list[str]:
    status = obj.get("status") or {}
    return [str(c["reason"]) for c in status.get("conditions") or [] if c.get("type") == "Holder"]


def with_holder(obj: JSON, holder: str) -> JSON:
    conditions = [*(obj.get("status") or {}).get("conditions", []), holder_condition(holder)]
    return dict(obj, status=dict(obj.get("status") or {}, conditions=conditions))


def holder_condition(holder: str) -> JSON:
    return {"type": "Holder", "status": "True", "reason": holder}


def take(holder: str, applies: list[str] | None = None) -> Callable[[JSON], tuple[JSON | None, bool]]:
    """A reservation: add `holder` unless present (idempotent); `applies` records each call."""

    def apply(obj: JSON) -> tuple[JSON | None, bool]:
        if applies is not None:
            applies.append(holder)
        if holder in held(obj):
            return None, True
        return with_holder(obj, holder), True

    return apply


class CountingStore(KubeStatusStore):
    """`KubeStatusStore` counting GETs and write attempts; `before_write` runs before a write."""

    def __init__(self, client: KubeClient, cache: WatchCache) -> None:
        super().__init__(client, SPREADS, cache)
        self.gets = 0
        self.attempts = 0
        self.before_write: Callable[[], None] | None = None

    def get(self, namespace: str, name: str, *, timeout: float) -> JSON:
        self.gets += 1
        return super().get(namespace, name, timeout=timeout)

    def replace_status(self, namespace: str, name: str, obj: JSON, *, timeout: float) -> JSON:
        self.attempts += 1
        hook, self.before_write = self.before_write, None
        if hook is not None:
            hook()
        return super().replace_status(namespace, name, obj, timeout=timeout)


class Replica:
    """One webhook replica's committer on its own client and watch cache."""

    def __init__(self, env: KubeEnv) -> None:
        self.client = KubeClient.load(env.kubeconfig, timeout=5)
        self.cache = WatchCache(self.client, SPREADS, watch_timeout_seconds=30).start()
        assert self.cache.wait_synced(5)
        self.store = CountingStore(self.client, self.cache)
        # conflict_wait: long enough that the watch always delivers first on a loaded machine.
        self.committer = Committer(self.store, CLOCK, seed=1, linger=0.0, conflict_wait=10.0)

    def submit(self, apply: Callable[[JSON], tuple[JSON | None, bool]]) -> bool:
        result: bool = self.committer.submit("default", "ws", apply, CLOCK.monotonic() + 20)
        return result

    def sees(self, obj: JSON) -> bool:
        cached = self.cache.get("default", "ws")
        return (
            cached is not None and cached["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
        )

    def close(self) -> None:
        self.cache.stop()
        self.client.close()


@pytest.fixture
def env(request: pytest.FixtureRequest) -> KubeEnv:
    """`kube_env` from webhook_testkit under a local name (no shadowed import)."""
    return request.getfixturevalue("kube_env")  # type: ignore[no-any-return]


@pytest.fixture
def replica(env: KubeEnv) -> Iterator[Replica]:
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    made = Replica(env)
    yield made
    made.close()


def peer_write(env: KubeEnv, holder: str) -> JSON:
    """Another replica's successful status write."""
    current = env.client.get(SPREADS, "default", "ws")
    return env.client.replace_status(SPREADS, "default", "ws", with_holder(current, holder))


def stored(env: KubeEnv) -> list[str]:
    return held(env.client.get(SPREADS, "default", "ws"))


def test_a_conflict_with_a_peer_retries_at_once_on_the_cached_copy(env: KubeEnv, replica: Replica) -> None:
    """A peer writes while this replica's write is on the wire: one 409, then the retry waits for
    the peer's object in the watch cache and goes on it: no GET, no pause, two attempts in all."""
    assert replica.submit(take("first"))
    replica.store.gets = replica.store.attempts = 0

    def peer_first() -> None:
        peer_write(env, "peer")

    replica.store.before_write = peer_first
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
        replica.store.before_write = env.faults.clear  # the second attempt goes through

    replica.store.before_write = stop_conflicts
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

    replica.store.before_write = peer_first
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
    replica.store.before_write = lambda: setattr(replica.store, "before_write", env.faults.clear)
    assert replica.submit(take("fourth"))  # a 409 nothing newer explains: a GET, a pause
    assert counted() == {
        "spreadgate_status_write_retries_total": 2.0,
        "spreadgate_status_conflict_refreshes_total": 1.0,
        "spreadgate_status_reads_total": 1.0,
        "spreadgate_commit_backoffs_total": 1.0,
        "spreadgate_commit_stale_skips_total": 1.0,
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
    "spreadgate_commit_committed_total",
    "spreadgate_commit_applies_total",
)
