"""Stress and fault suite: concurrent creates from several real webhook processes
against the embedded cluster with injected 409s, 500s and latency; kill -9 of a
webhook and of the controller mid-burst; the API unavailable for 5 s.

Each test has a quick variant (run by default, small enough for CI) and a full
one (the issue's sizes) gated by SPREADGATE_STRESS=1: 10 trials x 1,000 creates
from 3 webhook processes. See `stress_support` for what every trial checks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stress_support import (
    BURST_FAULTS,
    CREATING_TIMEOUT,
    FULL,
    Burst,
    Env,
    caps_for,
    check_no_overcommit,
    check_reservations,
    cluster,
    converge,
    http_pool,
    pod_of,
    review_of,
    start_webhook,
    wait_answered,
    wait_ready,
    wait_spread_seen,
    workload,
)
from webhook_testkit import WebhookProcess, webhook_processes

pytestmark = [
    pytest.mark.stress,
    pytest.mark.e2e,
    pytest.mark.timeout(900),
    # A client socket to a webhook process killed with -9 is sometimes dropped by urllib3
    # without close() and reported when collected. It is the test's own connection to a dead
    # peer (the product's sockets live in the other processes); only that exact report is
    # ignored, every other warning still fails the run.
    pytest.mark.filterwarnings("ignore:unclosed <ssl.SSLSocket:ResourceWarning"),
    pytest.mark.filterwarnings(
        r"ignore:Exception ignored in. <ssl.SSLSocket:pytest.PytestUnraisableExceptionWarning"
    ),
]

QUICK_SIZE = {"trials": 1, "pods": 300}
FULL_SIZE = {"trials": 10, "pods": 1000}
sizes = pytest.mark.parametrize(
    "size",
    [
        pytest.param(QUICK_SIZE, id="quick"),
        pytest.param(
            FULL_SIZE, id="full", marks=pytest.mark.skipif(not FULL, reason="set SPREADGATE_STRESS=1")
        ),
    ],
)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with cluster(tmp_path) as e:
        yield e


procs = webhook_processes  # the fixture, under the name the tests use


def start(env: Env, procs: list[WebhookProcess], count: int, *extra: str) -> list[WebhookProcess]:
    new = [start_webhook(env, f"webhook-{len(procs) + i}", *extra) for i in range(count)]
    procs.extend(new)
    http = http_pool()
    try:
        wait_ready(http, new)
    finally:
        http.clear()
    return new


@sizes
def test_concurrent_creates_three_processes_with_409s_500s_and_latency(
    env: Env, procs: list[WebhookProcess], size: dict[str, int]
) -> None:
    start(env, procs, 3)
    pods = size["pods"]
    for trial in range(size["trials"]):
        w = workload(env, f"t{trial}", pods, caps_for(pods))
        wait_spread_seen(procs, w)
        env.api.faults.set_spec(BURST_FAULTS, seed=trial)
        # Group commit makes few status writes (about 40 in the quick burst), so 2 % 500s
        # alone would often miss; the first two writes fail for certain, the rest at random.
        env.api.faults.force_errors(409, 500)
        outcome = Burst(env, w, procs).run(pods)
        env.api.faults.clear()
        injected = dict(env.api.faults.counts)
        assert not outcome.gave_up, outcome.gave_up[:5]
        assert len(outcome.admitted) == pods
        assert injected.get("409", 0) > 0 and injected.get("500", 0) > 0, injected
        check_no_overcommit(outcome, w)
        # With retries every slot is taken; the pods beyond the caps are admitted without a subset.
        assert outcome.per_subset() == w.caps, outcome.per_subset()
        check_reservations(env, outcome, w, exact=True)
        converge(env, outcome, w)
    for p in procs:
        assert p.alive, p.text()[-2000:]


@sizes
def test_kill_9_of_a_webhook_process_mid_burst_loses_nothing(
    env: Env, procs: list[WebhookProcess], size: dict[str, int]
) -> None:
    start(env, procs, 3)
    pods = size["pods"]
    trials = 1 if not FULL else 3
    for trial in range(trials):
        w = workload(env, f"k{trial}", pods, caps_for(pods))
        wait_spread_seen(procs, w)
        env.api.faults.set_spec("workloadspreads/status:update:latency=0-10ms", seed=trial)
        victim = next(p for p in procs if p.alive)

        def kill_and_replace(burst: Burst, victim: WebhookProcess = victim) -> None:
            wait_answered(burst, pods // 3)
            victim.kill()
            start(env, procs, 1)  # recovery: a replacement process joins the rotation

        outcome = Burst(env, w, procs).run(pods, during=kill_and_replace)
        env.api.faults.clear()
        assert not victim.alive
        assert not outcome.gave_up, outcome.gave_up[:5]
        assert len(outcome.admitted) == pods
        check_no_overcommit(outcome, w)
        # Reservations written for requests that died with the process are orphans: extra, never missing.
        check_reservations(env, outcome, w, exact=False)
        # The controller ages orphans out (creatingPods older than the timeout): no slot is leaked.
        converge(env, outcome, w, offset=CREATING_TIMEOUT + 5)


@sizes
def test_kill_9_of_the_controller_mid_burst_then_status_converges(
    env: Env, procs: list[WebhookProcess], size: dict[str, int]
) -> None:
    start(env, procs, 3)
    pods = size["pods"]
    w = workload(env, "ctl", pods, caps_for(pods))
    wait_spread_seen(procs, w)
    env.api.faults.set_spec("workloadspreads/status:update:conflict=0.1,latency=0-10ms", seed=5)
    log = open(env.tmp / "controller.log", "w+b")  # noqa: SIM115 - closed below
    controller = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "py_engine.cli",
            "controller",
            "--kubeconfig",
            env.kubeconfig,
            "--resync-period",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    killed = threading.Event()

    def kill_controller(burst: Burst) -> None:
        wait_answered(burst, pods // 2)
        assert controller.poll() is None, "the controller exited on its own"
        controller.send_signal(signal.SIGKILL)
        controller.wait(10)
        killed.set()

    try:
        outcome = Burst(env, w, procs).run(pods, during=kill_controller)
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait(10)
        log.close()
    env.api.faults.clear()
    assert killed.is_set()
    assert not outcome.gave_up and len(outcome.admitted) == pods
    check_no_overcommit(outcome, w)
    assert outcome.per_subset() == w.caps
    # Recovery: a restarted controller needs two syncs to make the status exact.
    converge(env, outcome, w)


def _post(http: Any, url: str, pod: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    resp = http.request(
        "POST",
        url + "/mutate/pods",
        body=json.dumps(review_of(pod)),
        headers={"Content-Type": "application/json"},
        timeout=20,
    )
    assert resp.status == 200, resp.data[:300]
    return time.monotonic() - started, json.loads(resp.data)["response"]


def test_api_unavailable_for_5s_answers_per_failure_mode_and_recovers(
    env: Env, procs: list[WebhookProcess]
) -> None:
    deny = start(env, procs, 1)[0]
    allow = start(env, procs, 1, "--on-commit-failure", "allow-unmodified")[0]
    w = workload(env, "outage", 1000, {"a": 500, "b": 500})
    wait_spread_seen(procs, w)
    http = http_pool()
    try:
        for p in (deny, allow):
            assert "patch" in _post(http, p.url, pod_of(w))[1]
        env.api.faults.set_spec("*:*:error500=1")
        answers: dict[str, list[dict[str, Any]]] = {"deny": [], "allow": []}
        slowest = 0.0
        until = time.monotonic() + 5.0
        while time.monotonic() < until:
            for mode, p in (("deny", deny), ("allow", allow)):
                seconds, answer = _post(http, p.url, pod_of(w))
                slowest = max(slowest, seconds)
                answers[mode].append(answer)
            time.sleep(0.05)
        env.api.faults.clear()
        assert answers["deny"] and answers["allow"]
        for answer in answers["deny"]:
            assert answer["allowed"] is False and answer["status"]["code"] == 500, answer
        for answer in answers["allow"]:
            assert answer["allowed"] is True and "patch" not in answer and answer.get("warnings"), answer
        assert slowest < 10.0, f"an answer took {slowest:.1f}s: past a 10 s webhook timeout"

        def recovered(p: WebhookProcess) -> bool:
            answer = _post(http, p.url, pod_of(w))[1]
            return bool(answer["allowed"] and "patch" in answer)

        for p in (deny, allow):
            deadline = time.monotonic() + 30
            while not recovered(p):
                assert time.monotonic() < deadline, "the webhook did not recover on its own within 30 s"
                time.sleep(0.2)
            assert p.alive and http.request("GET", p.url + "/readyz", timeout=5).status == 200
    finally:
        http.clear()
