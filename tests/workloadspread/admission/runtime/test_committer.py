"""Group commit against the embedded API server over HTTPS, with injected 409s and latency.

The reservation functions here are toys (a capped counter plus the list of holders),
so the committer is tested independently of the admission core. The holders are kept in a
field the WorkloadSpread CRD declares (one `status.conditions` entry each, the holder as its
reason): the embedded API server prunes undeclared fields, as kube-apiserver does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import webhook_testkit
from replica_kit import CLOCK, Replica
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from py_engine.workloadspread.admission.runtime.committer import (
    CommitError,
    CommitTimeout,
    KubeStatusStore,
    SpreadNotFound,
)

env = webhook_testkit.env  # the fixture, used by name


def held(status: Any) -> list[str]:
    """The toy's holders, in the order they took a slot."""
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return [str(c.get("reason")) for c in conditions or [] if c.get("type") == "Holder"]


def holding(holders: list[str]) -> dict[str, Any]:
    return {"conditions": [{"type": "Holder", "status": "True", "reason": h} for h in holders]}


def take_slot(holder: str, cap: int) -> Any:
    """A pure reservation: append `holder` unless `cap` holders exist; idempotent per holder."""

    def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        holders = held(obj.get("status"))
        if holder in holders:
            return None, True
        if len(holders) >= cap:
            return None, False
        new = dict(obj, status=dict(obj.get("status") or {}, **holding([*holders, holder])))
        return new, True

    return apply


@pytest.fixture
def procs(env: KubeEnv) -> Iterator[list[Replica]]:
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    made: list[Replica] = []
    yield made
    for p in made:
        p.close()


def holders(env: KubeEnv) -> list[str]:
    return held(env.client.get(SPREADS, "default", "ws").get("status"))


def burst(procs: list[Replica], n: int, cap: int, timeout: float = 8.0, workers: int = 64) -> list[Any]:
    deadline_of = CLOCK.monotonic

    def one(i: int) -> Any:
        try:
            return procs[i % len(procs)].committer.submit(
                "default", "ws", take_slot(f"p{i}", cap), deadline_of() + timeout
            )
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, range(n)))


def test_exact_counting_with_conflicts_and_far_fewer_writes(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env))
    env.faults.set_spec("workloadspreads/status:update:conflict=0.1,latency=5ms", seed=3)
    results = burst(procs, 200, cap=120)
    assert results.count(True) == 120 and results.count(False) == 80, results
    got = holders(env)
    assert len(got) == 120 and len(set(got)) == 120
    assert {f"p{i}" for i, r in enumerate(results) if r is True} == set(got)
    stats = procs[0].committer.stats.snapshot()
    # Every injected 409 was seen and retried (re-read, re-applied) by the committer.
    assert stats["conflicts"] == env.faults.counts["409"]
    assert stats["writes"] <= 40, stats  # batched: 120 reservations in far fewer writes
    assert 120 <= sum(size * count for size, count in stats["batch_sizes"].items()) <= 200


def test_two_processes_stay_exact(env: KubeEnv, procs: list[Replica]) -> None:
    procs.extend([Replica(env), Replica(env)])
    env.faults.set_spec("workloadspreads/status:update:conflict=0.1,latency=2ms", seed=5)
    results = burst(procs, 300, cap=180)
    assert results.count(True) == 180 and results.count(False) == 120
    got = holders(env)
    assert sorted(got) == sorted(f"p{i}" for i, r in enumerate(results) if r is True)
    conflicts = sum(p.committer.stats.conflicts for p in procs)
    # Injected 409s plus real ones between the two processes (stale resourceVersions).
    assert conflicts >= env.faults.counts["409"]


def test_three_replicas_keep_group_commit_and_count_exactly(env: KubeEnv, procs: list[Replica]) -> None:
    """Three webhook replicas, requests spread round robin as a Service spreads them (issue 28):
    conflicts between replicas cost re-reads, not one write per pod; every slot is held once.
    Counted, not timed (the 1,500-pod figure is `python -m benchmarks bench_scale`)."""
    procs.extend([Replica(env), Replica(env), Replica(env)])
    env.faults.set_spec("workloadspreads/status:update:latency=10ms")
    results = burst(procs, 150, cap=100, workers=48)
    assert results.count(True) == 100 and results.count(False) == 50, results
    got = holders(env)
    assert sorted(got) == sorted(f"p{i}" for i, r in enumerate(results) if r is True)
    writes = sum(p.committer.stats.writes for p in procs)
    # One write per pod would be 150; batches of a few dozen per replica, plus retries after
    # another replica's write, stay far below.
    assert writes <= 45, [p.committer.stats.snapshot() for p in procs]


def test_batching_disabled_writes_once_per_reservation(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env, batching=False))
    results = burst(procs, 40, cap=30, workers=16)
    assert results.count(True) == 30
    stats = procs[0].committer.stats.snapshot()
    assert stats["writes"] == 30 and stats["batch_sizes"] == {1: 30}


def test_deadline_fails_cleanly_and_writes_nothing(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env))
    env.faults.set_spec("workloadspreads/status:update:conflict=1")
    start = CLOCK.monotonic()
    results = burst(procs, 10, cap=5, timeout=0.3, workers=10)
    elapsed = CLOCK.monotonic() - start
    assert all(isinstance(r, CommitTimeout) for r in results), results
    assert "nothing was written" in str(results[0])
    assert elapsed < 3.0
    env.faults.clear()
    assert holders(env) == []
    assert procs[0].committer.stats.timeouts == 10


def test_dry_run_decides_without_writing(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env))
    c = procs[0].committer
    assert c.submit("default", "ws", take_slot("x", 1), CLOCK.monotonic() + 2, dry_run=True) is True
    assert holders(env) == [] and c.stats.writes == 0
    assert c.submit("default", "ws", take_slot("x", 1), CLOCK.monotonic() + 2) is True
    assert c.submit("default", "ws", take_slot("y", 1), CLOCK.monotonic() + 2, dry_run=True) is False
    assert holders(env) == ["x"]


def test_missing_spread_failing_apply_and_write_errors(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env))
    c = procs[0].committer
    with pytest.raises(SpreadNotFound):
        c.submit("default", "absent", take_slot("x", 1), CLOCK.monotonic() + 2)

    def boom(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        raise ValueError("bad patch")

    with pytest.raises(ValueError, match="bad patch"):
        c.submit("default", "ws", boom, CLOCK.monotonic() + 2)
    assert c.submit("default", "ws", take_slot("ok", 3), CLOCK.monotonic() + 2) is True
    env.faults.set_spec("workloadspreads/status:update:error500=1")
    with pytest.raises(CommitError, match="500"):
        c.submit("default", "ws", take_slot("z", 3), CLOCK.monotonic() + 2)
    env.faults.clear()
    assert holders(env) == ["ok"]


def test_a_failing_apply_does_not_spoil_its_batch(env: KubeEnv, procs: list[Replica]) -> None:
    procs.append(Replica(env))
    c = procs[0].committer
    env.faults.set_spec("workloadspreads/status:update:latency=30ms")
    gate = threading.Barrier(12)

    def one(i: int) -> Any:
        gate.wait(5)
        try:
            if i % 4 == 0:
                return c.submit(
                    "default", "ws", lambda o: (_ for _ in ()).throw(ValueError("x")), CLOCK.monotonic() + 5
                )
            return c.submit("default", "ws", take_slot(f"p{i}", 100), CLOCK.monotonic() + 5)
        except ValueError:
            return "error"

    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(one, range(12)))
    assert results.count("error") == 3 and results.count(True) == 9
    assert sorted(holders(env)) == sorted(f"p{i}" for i in range(12) if i % 4)


def test_the_status_store_rebuilds_the_stored_spread_from_a_metadata_answer(env: KubeEnv) -> None:
    """A status write asks for the stored metadata alone; what the store returns is the object
    the API server stored (the same a GET reads), and a server answering the whole object is
    taken as it answers."""
    created = env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    store = KubeStatusStore(env.client, SPREADS)
    written = store.replace_status("default", "ws", dict(created, status=holding(["p"])), timeout=5)
    assert written == env.client.get(SPREADS, "default", "ws")

    class WholeObjectClient:
        def replace_status(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return {
                "kind": "WorkloadSpread",
                "metadata": {"resourceVersion": "9"},
                "status": {"from": "server"},
            }

    old_server = KubeStatusStore(WholeObjectClient(), SPREADS)  # type: ignore[arg-type]
    assert old_server.replace_status("default", "ws", written, timeout=5)["status"] == {"from": "server"}
