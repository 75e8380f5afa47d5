"""`Committer.submit_async`: answered once through its continuation, counted exactly beside
blocking submits, and never keeping a blocking caller beyond its own batch.

An in-memory status store whose writes can be held at a gate, so every interleaving
asserted here is forced, not hoped for.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest
from memory_store import MemoryStore
from polling import wait_until

from py_engine.apiclient import Conflict
from py_engine.semantics.clock import Clock, RealClock, VirtualClock
from py_engine.workloadspread.admission.runtime.committer import Committer, CommitTimeout

pytestmark = pytest.mark.timeout(30)
S = TypeVar("S", bound=MemoryStore)


class GatedStore(MemoryStore):
    """Writes wait at `gate` while it is closed; `writing` is set while one waits there."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.writing = threading.Event()
        self.writes = 0

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        self.writing.set()
        assert self.gate.wait(10), "the test never opened the gate"
        self.writing.clear()
        self.writes += 1
        return super().replace_status(namespace, name, obj, timeout=timeout)


def take_slot(holder: str, cap: int) -> Any:
    """Append `holder` to status.holders unless `cap` holders exist (result: taken or not)."""

    def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        holders = list(obj["status"].get("holders") or [])
        if len(holders) >= cap:
            return None, False
        return dict(obj, status={"holders": [*holders, holder]}), True

    return apply


class Answers:
    """Collects continuation calls: (key, result, error), and how often each key was answered."""

    def __init__(self) -> None:
        self.got: queue.SimpleQueue[tuple[str, Any, BaseException | None]] = queue.SimpleQueue()

    def for_key(self, key: str) -> Any:
        return lambda result, error: self.got.put((key, result, error))

    def collect(self, count: int, timeout: float = 10.0) -> list[tuple[str, Any, BaseException | None]]:
        return [self.got.get(timeout=timeout) for _ in range(count)]


def one_spread(store: S, clock: Clock | None = None, **options: Any) -> tuple[S, Clock, Committer, Answers]:
    """`store` holding default/ws, a committer over it (`options`), and a fresh `Answers`."""
    store.add("default", "ws")
    clock = clock or RealClock()
    return store, clock, Committer(store, clock, **options), Answers()


def holders(store: MemoryStore) -> list[str]:
    return list(store.objects[("default", "ws")]["status"].get("holders") or [])


def hold_first_write(store: Any, clock: Clock, committer: Committer, answers: Answers) -> threading.Thread:
    """Closes the store's gate and starts a thread whose async submit of holder "first" is
    then on the wire (waiting at the gate); the caller opens the gate and joins it."""
    store.gate.clear()
    first = threading.Thread(
        target=committer.submit_async,
        args=("default", "ws", take_slot("first", 10), clock.monotonic() + 5, answers.for_key("first")),
    )
    first.start()
    assert store.writing.wait(5)
    return first


def test_async_and_blocking_submits_are_answered_once_and_counted_exactly() -> None:
    store, clock, committer, answers = one_spread(MemoryStore(), seed=1)
    blocking: dict[str, bool] = {}

    def one(i: int) -> None:
        key = f"p{i}"
        if i % 5 == 0:
            blocking[key] = committer.submit("default", "ws", take_slot(key, 90), clock.monotonic() + 10)
        else:
            committer.submit_async(
                "default", "ws", take_slot(key, 90), clock.monotonic() + 10, answers.for_key(key)
            )

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(one, range(150)))
    got = answers.collect(120)
    assert answers.got.empty()  # nobody answered twice
    assert sorted(key for key, _, _ in got) == sorted(f"p{i}" for i in range(150) if i % 5)
    assert all(error is None for _, _, error in got)
    taken = {key for key, result, _ in got if result is True} | {key for key, ok in blocking.items() if ok}
    assert len(taken) == 90 and set(holders(store)) == taken and len(holders(store)) == 90
    stats = committer.stats.snapshot()
    assert stats["committed"] == 150
    assert stats["writes"] < 90  # batched


def test_an_async_submit_that_finds_nobody_leading_answers_before_it_returns() -> None:
    store, clock, committer, answers = one_spread(MemoryStore(), linger=0.0)
    committer.submit_async("default", "ws", take_slot("a", 5), clock.monotonic() + 5, answers.for_key("a"))
    assert answers.got.qsize() == 1 and answers.collect(1) == [("a", True, None)]
    assert holders(store) == ["a"]
    committer.submit_async(
        "default", "ws", take_slot("b", 5), clock.monotonic() + 5, answers.for_key("b"), dry_run=True
    )
    assert answers.collect(1) == [("b", True, None)]
    assert holders(store) == ["a"] and committer.stats.writes == 1


def test_a_blocking_leader_returns_after_its_own_batch_while_async_requests_wait() -> None:
    store, clock, committer, answers = one_spread(GatedStore(), linger=0.0)
    store.gate.clear()
    returned = threading.Event()

    def lead() -> None:
        committer.submit("default", "ws", take_slot("lead", 10), clock.monotonic() + 10)
        returned.set()

    leader = threading.Thread(target=lead)
    leader.start()
    assert store.writing.wait(5)  # the blocking caller leads and its write is held
    for i in range(5):  # queued behind it; none of these calls waits
        committer.submit_async(
            "default", "ws", take_slot(f"a{i}", 10), clock.monotonic() + 10, answers.for_key(f"a{i}")
        )
    assert answers.got.empty()
    store.gate.set()
    store.gate.clear()  # hold the next write: the async batch's
    wait_until(lambda: returned.is_set(), 5, "the blocking caller to return after its own batch")
    leader.join(5)
    assert holders(store) == ["lead"] and answers.got.empty()
    store.gate.set()
    got = answers.collect(5)
    assert sorted(key for key, _, _ in got) == [f"a{i}" for i in range(5)]
    assert all(result is True and error is None for _, result, error in got)
    assert holders(store) == ["lead", "a0", "a1", "a2", "a3", "a4"]
    assert store.writes == 2  # the five rode in one batch, led by the thread the blocking caller started


def test_an_async_request_whose_deadline_passed_behind_a_write_fails_cleanly() -> None:
    clock = VirtualClock(datetime(2024, 6, 1, tzinfo=UTC))
    store, _, committer, answers = one_spread(GatedStore(), clock, linger=0.0)  # a virtual clock never moves
    first = hold_first_write(store, clock, committer, answers)
    committer.submit_async(
        "default", "ws", take_slot("late", 10), clock.monotonic() + 1, answers.for_key("late")
    )
    clock.advance(3)  # past the second request's deadline while the first write is on the wire
    store.gate.set()
    got = dict((key, (result, error)) for key, result, error in answers.collect(2))
    first.join(5)
    assert got["first"] == (True, None)  # its write landed; never reported failed
    assert got["late"][0] is None and isinstance(got["late"][1], CommitTimeout)
    assert "nothing was written" in str(got["late"][1])
    assert holders(store) == ["first"] and committer.stats.timeouts == 1


def test_a_failing_continuation_is_logged_once_and_spoils_nothing(caplog: pytest.LogCaptureFixture) -> None:
    store, clock, committer, answers = one_spread(GatedStore(), linger=0.0)

    def broken(result: Any, error: BaseException | None) -> None:
        raise RuntimeError("continuation bug")

    first = hold_first_write(store, clock, committer, answers)
    committer.submit_async("default", "ws", take_slot("bad", 10), clock.monotonic() + 5, broken)
    committer.submit_async(
        "default", "ws", take_slot("after", 10), clock.monotonic() + 5, answers.for_key("after")
    )
    with caplog.at_level(logging.ERROR, logger="py_engine.workloadspread.admission.runtime.committer"):
        store.gate.set()
        got = sorted(key for key, _, _ in answers.collect(2))
        first.join(5)
    assert got == ["after", "first"]
    assert holders(store) == ["first", "bad", "after"]
    failures = [r for r in caplog.records if "continuation failed" in r.getMessage()]
    assert len(failures) == 1


class BrokenAfterConflict(GatedStore):
    """The first write waits at the gate, then conflicts; the next one fails with a bug."""

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        self.writing.set()
        assert self.gate.wait(10), "the test never opened the gate"
        self.writes += 1
        if self.writes == 1:
            raise Conflict(409, "Conflict", "stale")
        raise RuntimeError("store bug")


def test_requests_that_join_a_retry_are_answered_when_the_write_then_fails() -> None:
    store, clock, committer, answers = one_spread(BrokenAfterConflict(), linger=0.0, conflict_backoff=0.0)
    first = hold_first_write(store, clock, committer, answers)
    for key in ("joined-1", "joined-2"):  # queued while the first write is on the wire; the retry takes them
        committer.submit_async(
            "default", "ws", take_slot(key, 10), clock.monotonic() + 5, answers.for_key(key)
        )
    store.gate.set()
    got = {key: error for key, _, error in answers.collect(3)}
    first.join(5)
    assert sorted(got) == ["first", "joined-1", "joined-2"]
    assert all(isinstance(error, RuntimeError) and "store bug" in str(error) for error in got.values())
    assert answers.got.empty() and holders(store) == []


def test_applies_share_the_spec_and_cannot_reach_the_stored_status() -> None:
    """A batch's applies start from the stored object with `status` copied and `spec` shared:
    an apply that changes the status it was given in place leaves the stored object as it was,
    and every apply sees the stored spec itself (what keeps the parsed-view cache hitting)."""
    store = MemoryStore()
    store.add("ns", "ws")
    stored = store.objects[("ns", "ws")]
    stored["spec"] = {"subsets": [{"name": "a"}]}
    stored["status"] = {"holders": ["x"]}
    seen: list[dict[str, Any]] = []

    def meddle(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        seen.append(obj)
        obj["status"]["holders"].append("stray")  # a bug an apply must not be able to spread
        return None, True

    committer = Committer(store, RealClock(), seed=1)
    assert committer.submit("ns", "ws", meddle, RealClock().monotonic() + 5) is True
    assert stored["status"] == {"holders": ["x"]}
    assert seen and seen[0]["spec"] is stored["spec"]
    assert seen[0]["metadata"] == stored["metadata"] and seen[0]["metadata"] is not stored["metadata"]


class ConflictOnce(MemoryStore):
    """The first write finds that another writer moved the spread on (409)."""

    def __init__(self) -> None:
        super().__init__()
        self.conflicted = False

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        if not self.conflicted:
            self.conflicted = True
            with self.lock:
                self.rv += 1
                current = self.objects[(namespace, name)]
                pods = dict(current["status"].get("pods") or {}, other=0)
                self.objects[(namespace, name)] = dict(
                    current,
                    status={"pods": pods},
                    metadata=dict(current["metadata"], resourceVersion=str(self.rv)),
                )
        return super().replace_status(namespace, name, obj, timeout=timeout)


def test_applies_that_extend_the_status_in_place_are_re_applied_to_a_fresh_copy_after_a_conflict() -> None:
    """The contract reservations rely on (`Apply`): an apply that writes may extend the maps of
    the status it was given. A batch that conflicts starts again from a fresh copy of the
    re-read object, so each pod is written once and the objects read stay as they were."""
    store = ConflictOnce()
    store.add("ns", "ws")
    store.objects[("ns", "ws")]["status"] = {"pods": {"x": 0}}
    read_first = store.objects[("ns", "ws")]

    def extend(key: str) -> Any:
        def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
            obj["status"].setdefault("pods", {})[key] = len(obj["status"]["pods"])
            return obj, True

        return apply

    committer = Committer(store, RealClock(), linger=0.0, conflict_backoff=0.0, seed=1)
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(
                lambda key: committer.submit("ns", "ws", extend(key), RealClock().monotonic() + 5),
                ["a", "b", "c", "d"],
            )
        )
    assert results == [True] * 4 and store.conflicted
    assert sorted(store.objects[("ns", "ws")]["status"]["pods"]) == ["a", "b", "c", "d", "other", "x"]
    assert read_first["status"] == {"pods": {"x": 0}}
