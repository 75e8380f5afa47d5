"""Fault injection: spec parsing, seeded decisions, and faults visible to HTTP clients."""

from __future__ import annotations

import json
import time

import kubernetes
import pytest
from kubernetes.client import ApiException

from py_engine.sim.apiserver import ApiServer
from py_engine.sim.faults import FaultInjector, FaultSpecError, parse_duration, parse_spec


def test_parse_example_spec() -> None:
    rules = parse_spec(
        "pods:create:latency=10ms;workloadspreads/status:update:conflict=0.1,error500=0.02;*:*:latency=0-5ms"
    )
    assert [r.resource for r in rules] == ["pods", "workloadspreads/status", "*"]
    assert rules[0].latency == (0.01, 0.01) and rules[2].latency == (0.0, 0.005)
    assert rules[1].errors == ((409, 0.1), (500, 0.02))


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("pods:create", "expected RESOURCE:VERBS:EFFECTS"),
        ("pods:fly:latency=1ms", "unknown verb"),
        ("pods:create:latency=10", "expected a number with a unit"),
        ("pods:create:latency=5ms-1ms", "upper bound below"),
        ("pods:create:conflict=2", "within [0, 1]"),
        ("pods:create:conflict=x", "needs a probability"),
        ("pods:create:explode=0.1", "unknown effect 'explode'"),
        ("pods:create:conflict=0.6,error500=0.6", "sum to more than 1"),
        (":create:latency=1ms", "empty resource"),
        ("pods:create:latency", "must be KEY=VALUE"),
    ],
)
def test_parse_errors_are_clear(spec: str, fragment: str) -> None:
    with pytest.raises(FaultSpecError) as info:
        parse_spec(spec)
    assert fragment in str(info.value) and "fault rule 1" in str(info.value)


def test_bad_set_spec_keeps_old_rules() -> None:
    inj = FaultInjector("pods:get:error500=1")
    with pytest.raises(FaultSpecError):
        inj.set_spec("nonsense")
    assert inj.decide("pods", None, "get").error_code == 500


def test_durations() -> None:
    assert parse_duration("250us") == pytest.approx(0.00025)
    assert parse_duration("0.5s") == 0.5


def test_matching_and_first_rule_wins_per_effect() -> None:
    inj = FaultInjector("pods/status:update:latency=7ms;pods:*:error500=1;*:*:latency=1ms,throttle=1", seed=1)
    d = inj.decide("pods", "status", "update")
    assert d.latency == pytest.approx(0.007) and d.error_code == 429  # "pods" does not match pods/status
    d = inj.decide("pods", None, "create")
    assert d.latency == pytest.approx(0.001) and d.error_code == 500
    assert inj.decide("workloadspreads.spreadgate.dev", None, "get").error_code == 429
    inj.set_spec("pods/*:get|list:conflict=1")
    assert inj.decide("pods", "scale", "get").error_code == 409
    assert inj.decide("pods", None, "list").error_code == 409
    assert inj.decide("pods", None, "watch").error_code is None


def test_seeded_draws_are_reproducible_and_rates_hold() -> None:
    spec = "*:*:conflict=0.2,error500=0.1,latency=0-1ms"
    a = FaultInjector(spec, seed=42)
    b = FaultInjector(spec, seed=42)
    seq_a = [(d.error_code, d.latency) for d in (a.decide("pods", None, "get") for _ in range(2000))]
    seq_b = [(d.error_code, d.latency) for d in (b.decide("pods", None, "get") for _ in range(2000))]
    assert seq_a == seq_b
    conflicts = sum(1 for c, _ in seq_a if c == 409)
    errors500 = sum(1 for c, _ in seq_a if c == 500)
    assert 330 < conflicts < 470 and 140 < errors500 < 260
    assert all(0 <= lat <= 0.001 for _, lat in seq_a)


def test_forced_errors_come_first_on_matching_requests_then_draws_resume() -> None:
    inj = FaultInjector("workloadspreads/status:update:conflict=0,error500=0;pods:*:latency=1us", seed=1)
    inj.force_errors(409, 500)
    assert inj.decide("pods", None, "create").error_code is None  # no error rule: nothing forced
    assert [inj.decide("workloadspreads", "status", "update").error_code for _ in range(3)] == [
        409,
        500,
        None,
    ]
    inj.force_errors(500)
    inj.set_spec("workloadspreads/status:update:conflict=0")  # new rules drop what was still forced
    assert inj.decide("workloadspreads", "status", "update").error_code is None
    with pytest.raises(FaultSpecError, match="cannot force errors"):
        inj.force_errors(418)


def test_faults_visible_to_the_http_client(
    core_v1: kubernetes.client.CoreV1Api, apiserver: ApiServer
) -> None:
    apiserver.faults.set_spec("pods:create:throttle=1;pods:list:error500=1;configmaps:get:conflict=1")
    with pytest.raises(ApiException) as info:
        core_v1.create_namespaced_pod(
            "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        )
    assert info.value.status == 429 and info.value.headers["Retry-After"] == "1"
    assert json.loads(info.value.body)["reason"] == "TooManyRequests"
    with pytest.raises(ApiException) as info:
        core_v1.list_namespaced_pod("default")
    assert info.value.status == 500 and json.loads(info.value.body)["reason"] == "InternalError"
    with pytest.raises(ApiException) as info:
        core_v1.read_namespaced_config_map("x", "default")
    assert info.value.status == 409
    assert apiserver.list("v1/pods")["items"] == []  # injected errors never half-apply
    apiserver.faults.set_spec("namespaces:list:timeout=1,timeoutdelay=50ms;pods:list:latency=150ms")
    started = time.monotonic()
    with pytest.raises(ApiException) as info:
        core_v1.list_namespace()
    assert info.value.status == 504 and time.monotonic() - started >= 0.05
    started = time.monotonic()
    core_v1.list_namespaced_pod("default")
    assert time.monotonic() - started >= 0.15
    apiserver.faults.clear()
    assert len(core_v1.list_namespace().items) == 4
