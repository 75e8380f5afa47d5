"""A status write overtaken on the wire by another writer's (issue 28; docs/scale.md,
"Overtaken writes").

Between replicas, a batch's write is usually sent while a peer's write is still in flight; the
peer's lands first and this one can only be answered 409, a whole write latency later. While
another writer contends for the spread, the committer sends its write from a thread of its own
and watches the cache meanwhile: the peer's object there is enough to apply the batch again and
send it at once. These tests hold a write on the wire (a hook on the store) and see what the
committer does meanwhile. The first failed on the committer that waited for every answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

import pytest
from memory_store import FollowedMemoryStore, MemoryStore
from metrics_kit import value
from polling import wait_until
from replica_kit import CONFLICT_OPTIONS, JSON, Replica, peer_write, stored, take
from webhook_testkit import SPREADS, KubeEnv, spread

from py_engine.workloadspread.admission.ports import CommitTimeout
from py_engine.workloadspread.admission.runtime.committer import Committer
from webhook.metrics import WebhookMetrics

pytestmark = pytest.mark.timeout(60)


def no_write_in_flight() -> bool:
    return not any(thread.name.startswith("status-write-") for thread in threading.enumerate())


def contended(env: KubeEnv, replica: Replica) -> None:
    """Two writes, the second answered 409 by a peer's: the replica now knows another writer."""
    assert replica.submit(take("first"))
    replica.store.hooks.before = lambda: peer_write(env, "peer")
    assert replica.submit(take("second"))
    assert replica.committer.stats.snapshot()["conflicts"] == 1


def test_an_overtaken_write_is_sent_again_before_its_409_comes_back(env: KubeEnv, replica: Replica) -> None:
    """A peer's write lands and reaches the cache while this replica's write is held on the wire:
    the batch is applied on the peer's object and written again, and answered, while the first
    write is still held (the old committer waited for its 409 first)."""
    contended(env, replica)
    release = threading.Event()

    def peer_then_hold() -> None:
        peer_write(env, "peer-2")
        overtaken = replica.committer.stats.snapshot
        wait_until(lambda: overtaken()["overtaken"] == 1, what="the held write given up as overtaken")
        release.wait(30)

    replica.store.hooks.before = peer_then_hold
    replica.store.attempts = 0
    answered: list[bool] = []
    submitter = threading.Thread(target=lambda: answered.append(replica.submit(take("mine"))))
    submitter.start()
    try:
        wait_until(lambda: answered, timeout=10, what="the batch answered while its first write is held")
    finally:
        release.set()
        submitter.join(10)
    assert answered == [True]
    assert stored(env) == ["first", "peer", "second", "peer-2", "mine"]
    assert replica.store.attempts == 2
    wait_until(no_write_in_flight, what="the held write sent and refused")
    stats = replica.committer.stats.snapshot()
    assert stats["overtaken"] == 1 and stats["conflicts"] == 2 and stats["writes"] == 3, stats
    assert stats["reads"] == 0 and stats["backoffs"] == 0, stats
    metrics = WebhookMetrics()
    metrics.committer = replica.committer.stats.snapshot
    assert value(metrics.render(), "spreadgate_commit_overtaken_total") == 1.0
    assert stored(env) == ["first", "peer", "second", "peer-2", "mine"]  # the held one changed nothing


def test_a_write_whose_own_object_reaches_the_cache_first_waits_for_its_answer(
    env: KubeEnv, replica: Replica
) -> None:
    """The write's own object (its status as sent) reaches the cache before its answer: that is
    no other writer's, so the committer waits for the answer instead of applying the batch again."""
    contended(env, replica)
    applies: list[str] = []

    def answer_once_seen(written: JSON) -> None:
        rv = written["metadata"]["resourceVersion"]
        found = replica.store.waited
        wait_until(
            lambda: any(seen is not None and seen["metadata"]["resourceVersion"] == rv for seen in found),
            what="the committer to find the write's own object in the cache",
        )

    replica.store.waited.clear()
    replica.store.hooks.after = answer_once_seen
    assert replica.submit(take("mine", applies))
    stats = replica.committer.stats.snapshot()
    assert applies == ["mine"] and stats["overtaken"] == 0 and stats["writes"] == 3, stats
    assert stored(env) == ["first", "peer", "second", "mine"]


def test_writes_leave_the_leaders_thread_only_while_another_writer_contends(env: KubeEnv) -> None:
    """A lone writer sends from the leading thread, as before; after a peer's 409 the writes go
    from threads of their own, at most `max_write_threads` at a time (0: never)."""
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    for limit, expected in ((16, "status-write-default/ws"), (0, "MainThread")):
        made = Replica(env, **CONFLICT_OPTIONS, max_write_threads=limit)
        try:
            assert made.submit(take(f"lone-{limit}"))
            made.store.hooks.before = partial(peer_write, env, f"peer-{limit}")
            assert made.submit(take(f"contended-{limit}"))  # a 409, then the retry
            assert made.submit(take(f"after-{limit}"))
            assert made.store.writers == ["MainThread", "MainThread", expected, expected], made.store.writers
        finally:
            made.close()


class SteppedClock:
    """A `Clock` the test moves (`seconds`); `sleep` moves it too."""

    def __init__(self) -> None:
        self.seconds = 1000.0

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.seconds, UTC)

    def monotonic(self) -> float:
        return self.seconds

    def sleep(self, seconds: float) -> None:
        self.seconds += seconds


def holders(store: FollowedMemoryStore) -> list[str]:
    return list(store.get("default", "ws", timeout=1)["status"].get("holders", []))


def hold(holder: str) -> Callable[[JSON], tuple[JSON | None, bool]]:
    """A reservation on the in-memory spread: add `holder` unless present (idempotent)."""

    def apply(obj: JSON) -> tuple[JSON | None, bool]:
        if holder in obj["status"].get("holders", []):
            return None, True
        return dict(obj, status={"holders": [*obj["status"].get("holders", []), holder]}), True

    return apply


def peer_adds(store: FollowedMemoryStore, holder: str) -> None:
    """Another writer's status write, and its arrival in the cache."""
    current = store.get("default", "ws", timeout=1)
    written_over = dict(current, status={"holders": [*holders(store), holder]})
    MemoryStore.replace_status(store, "default", "ws", written_over, timeout=1)  # no hooks
    store.publish("default", "ws")


@pytest.fixture
def memory() -> tuple[FollowedMemoryStore, SteppedClock, Committer]:
    """A committer on the in-memory store that has already met another writer (one 409)."""
    store, clock = FollowedMemoryStore(), SteppedClock()
    store.add("default", "ws")
    store.publish("default", "ws")
    committer = Committer(store, clock, linger=0.0, conflict_wait=5.0)
    assert committer.submit("default", "ws", hold("first"), clock.monotonic() + 10)
    store.hooks.before = partial(peer_adds, store, "peer")
    assert committer.submit("default", "ws", hold("second"), clock.monotonic() + 10)
    assert committer.stats.snapshot()["conflicts"] == 1
    return store, clock, committer


def submitted_while_held(
    committer: Committer, clock: SteppedClock, holder: str, release: threading.Event
) -> list[object]:
    """Submit `holder` (deadline 5 s of the test's clock) and return its answer (the result or
    the error) once it comes, releasing the held write afterwards."""
    answers: list[object] = []

    def submit() -> None:
        try:
            answers.append(committer.submit("default", "ws", hold(holder), clock.monotonic() + 5))
        except Exception as exc:
            answers.append(exc)

    submitter = threading.Thread(target=submit)
    submitter.start()
    try:
        wait_until(lambda: answers, timeout=10, what=f"{holder} answered while its first write is held")
    finally:
        release.set()
        submitter.join(10)
    return answers


def test_an_overtaken_write_stored_after_all_is_answered_even_past_its_deadline(
    memory: tuple[FollowedMemoryStore, SteppedClock, Committer],
) -> None:
    """The write was stored and a peer wrote on top of it; the cache shows only the peer's object
    (its follower woke after both), and the deadline passed meanwhile. Applied on that object
    the reservation is already there: the request is answered committed, not timed out (its
    slot is held), and nothing is written twice."""
    store, clock, committer = memory
    release = threading.Event()

    def stored_then_written_over(written: JSON) -> None:
        peer_adds(store, "peer-2")
        clock.seconds += 30
        release.wait(10)

    store.hooks.after = stored_then_written_over
    assert submitted_while_held(committer, clock, "mine", release) == [True]
    assert holders(store) == ["first", "peer", "second", "mine", "peer-2"]
    assert committer.stats.snapshot()["overtaken"] == 1


def test_an_overtaken_write_not_stored_fails_its_requests_past_their_deadline(
    memory: tuple[FollowedMemoryStore, SteppedClock, Committer],
) -> None:
    """A peer's write lands first, so this one is refused; the deadline passed meanwhile. Applied
    on the peer's object the reservation would be new: the request times out and nothing of it
    is written, as after a 409."""
    store, clock, committer = memory
    release = threading.Event()

    def overtaken_then_held() -> None:
        peer_adds(store, "peer-2")
        clock.seconds += 30
        release.wait(10)

    store.hooks.before = overtaken_then_held
    answers = submitted_while_held(committer, clock, "late", release)
    assert len(answers) == 1 and isinstance(answers[0], CommitTimeout), answers
    assert holders(store) == ["first", "peer", "second", "peer-2"]
    assert committer.stats.snapshot()["overtaken"] == 1
