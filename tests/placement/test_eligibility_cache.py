"""The LRU of subset-policy decisions keyed by a digest of the policy input."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest

from py_engine.placement.eligibility import (
    EligibilityCache,
    EligibilityDecision,
    SubsetInputs,
    build_eligibility_input,
    decide_eligibility,
    decide_eligibility_cached,
    decide_subsets,
    eligibility_key,
)
from py_engine.placement.inventory import NodeInventory
from py_engine.policy import create_engine


class CountingEngine:
    """A stand-in policy engine answering every query the same way, counting calls."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def evaluate(self, rule: str, input_document: Any) -> Any:
        with self._lock:
            self.calls += 1
        return {
            "eligible": [s["name"] for s in input_document["workloadSpread"]["spec"]["subsets"]],
            "rejected": [],
        }

    def close(self) -> None:
        pass


def _input(zone: str = "z1", nodes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spread = {
        "spec": {
            "subsets": [
                {
                    "name": "a",
                    "maxReplicas": 3,
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
                        ]
                    },
                },
                {"name": "b"},
            ]
        }
    }
    pod = {
        "spec": {
            "containers": [{"name": "main", "image": "nginx", "resources": {"requests": {"cpu": "250m"}}}]
        }
    }
    return build_eligibility_input(pod, spread["spec"]["subsets"], [{"name": "a", "conditions": []}], nodes)


def test_key_is_canonical_and_content_sensitive() -> None:
    a = _input()
    reordered = dict(reversed(list(a.items())))
    assert eligibility_key(a) == eligibility_key(reordered)
    assert eligibility_key(a) != eligibility_key(_input("z2"))
    with_nodes = _input(nodes=[{"name": "n1"}])
    other_nodes = _input(nodes=[{"name": "n2"}])
    assert eligibility_key(with_nodes) != eligibility_key(other_nodes)
    # A node inventory version stands for the node list.
    assert eligibility_key(with_nodes, "v1") == eligibility_key(other_nodes, "v1")
    assert eligibility_key(with_nodes, "v1") != eligibility_key(with_nodes, "v2")


def test_lru_eviction_and_recency() -> None:
    cache = EligibilityCache(maxsize=2)
    d = EligibilityDecision(("a",), {})
    cache.put("k1", d)
    cache.put("k2", d)
    assert cache.get("k1") is d  # k1 now most recent
    cache.put("k3", d)
    assert cache.get("k2") is None
    assert cache.get("k1") is d and cache.get("k3") is d
    assert len(cache) == 2 and (cache.hits, cache.misses) == (3, 1)
    cache.clear()
    assert len(cache) == 0
    with pytest.raises(ValueError):
        EligibilityCache(0)


def test_cached_decisions_evaluate_once_per_input() -> None:
    engine = CountingEngine()
    cache = EligibilityCache()
    for _ in range(3):
        assert decide_eligibility_cached(engine, _input(), cache).eligible == ("a", "b")
    decide_eligibility_cached(engine, _input("z2"), cache)
    assert engine.calls == 2 and (cache.hits, cache.misses) == (2, 2)
    for _ in range(3):
        decide_eligibility_cached(engine, _input(), None)
    assert engine.calls == 5


def test_concurrent_use_from_threads() -> None:
    engine = CountingEngine()
    cache = EligibilityCache(maxsize=4)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(50):
                decide_eligibility_cached(engine, _input(f"z{(i + j) % 6}"), cache)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors and not any(t.is_alive() for t in threads)
    assert len(cache) <= 4 and cache.hits + cache.misses == 200


class CountingProxy:
    """The real engine, counting the evaluations that reach it."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0

    def evaluate(self, rule: str, input_document: Any) -> Any:
        self.calls += 1
        return self.engine.evaluate(rule, input_document)

    def close(self) -> None:
        self.engine.close()


def test_a_hit_returns_the_real_decision_without_evaluating() -> None:
    """What makes a hit cheap is that it never reaches the engine (the benchmarks measure
    how much cheaper); here: the real engine's decision, evaluated once for many hits."""
    engine = CountingProxy(create_engine())
    try:
        nodes = NodeInventory(
            [
                {
                    "name": f"n{i}",
                    "labels": {"topology.kubernetes.io/zone": f"z{i % 3}"},
                    "taints": [],
                    "unschedulable": False,
                    "free": {"cpu": 4.0, "memory": 2**33, "pods": 100},
                }
                for i in range(30)
            ]
        )
        policy_input = _input(nodes=list(nodes))
        uncached = decide_eligibility_cached(engine, policy_input, None)
        assert engine.calls == 1
        cache = EligibilityCache()
        rounds = 30
        decisions = [
            decide_eligibility_cached(engine, policy_input, cache, nodes_version=nodes.version)
            for _ in range(rounds)
        ]
    finally:
        engine.close()
    assert engine.calls == 2, "only the first cached lookup may evaluate"
    assert cache.hits == rounds - 1 and cache.misses == 1
    assert all(d == uncached for d in decisions)


class EchoEngine:
    """Answers with one 'subset' named after a digest of the whole input: a decision served for
    the wrong input (a stale or mis-keyed hit) cannot equal the decision for the right one."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, rule: str, input_document: Any) -> Any:
        self.calls += 1
        return {"eligible": [eligibility_key(input_document)]}

    def close(self) -> None:
        pass


def _pod(selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "250m"}}}]}
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"metadata": {"name": "p"}, "spec": spec}


def _spread(zone: str = "z1") -> dict[str, Any]:
    return {
        "metadata": {"uid": "u", "generation": 1},
        "spec": {
            "subsets": [
                {
                    "name": "a",
                    "maxReplicas": 3,
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]
                    },
                },
                {"name": "b", "tolerations": [{"key": "spot", "operator": "Exists"}]},
            ]
        },
    }


UNSCHEDULABLE = [{"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}, {"name": "b"}]


def test_decide_subsets_is_the_decision_on_the_whole_input() -> None:
    """Miss and hit alike: the decision the engine gives for `build_eligibility_input`."""
    engine, cache, inputs = EchoEngine(), EligibilityCache(), SubsetInputs()
    nodes = NodeInventory(
        [
            {
                "name": "n1",
                "labels": {"zone": "z1"},
                "taints": [],
                "unschedulable": False,
                "free": {"cpu": 4.0, "memory": 2**33, "pods": 100},
            }
        ]
    )
    cases: list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], Any, str | None]] = [
        (_pod(), _spread(), [], None, None),
        (_pod({"zone": "z2"}), _spread(), [{"name": "a"}], None, None),
        (_pod(), _spread(), UNSCHEDULABLE, None, None),
        (_pod(), _spread(), [], nodes, nodes.version),
        (_pod(), _spread(), [], list(nodes), None),  # nodes without a version: keyed by the node list
    ]
    for pod, spread, statuses, node_list, version in cases:
        expected = decide_eligibility(
            EchoEngine(), build_eligibility_input(pod, spread["spec"]["subsets"], statuses, node_list)
        )
        for _ in range(2):
            assert (
                decide_subsets(
                    engine,
                    pod,
                    spread["spec"]["subsets"],
                    statuses,
                    node_list,
                    cache,
                    inputs,
                    nodes_version=version,
                )
                == expected
            )


def test_decide_subsets_serves_no_stale_decision() -> None:
    """Each part of the input is in the key: a different pod template, a new spread generation
    (a new subsets list with another term), other subset conditions or another node inventory
    version each get their own decision; the same input is evaluated once."""
    engine, cache, inputs = EchoEngine(), EligibilityCache(), SubsetInputs()
    spread = _spread()

    def decide(
        pod: dict[str, Any], ws: dict[str, Any], statuses: Any = (), version: str | None = None
    ) -> Any:
        nodes = (
            [{"name": f"node-{version}"}] if version is not None else None
        )  # the list `version` stands for
        got = decide_subsets(
            engine, pod, ws["spec"]["subsets"], statuses, nodes, cache, inputs, nodes_version=version
        )
        assert got == decide_eligibility(
            EchoEngine(), build_eligibility_input(pod, ws["spec"]["subsets"], statuses, nodes)
        )
        return got

    first = decide(_pod(), spread)
    assert decide(_pod(), spread) == first and engine.calls == 1
    assert decide(_pod({"zone": "z2"}), spread) != first
    assert (
        decide(_pod(), {**spread, "metadata": {"uid": "u", "generation": 2}, "spec": _spread("z2")["spec"]})
        != first
    )
    assert decide(_pod(), spread, UNSCHEDULABLE) != first
    with_v1 = decide(_pod(), spread, version="v1")
    assert with_v1 != first and decide(_pod(), spread, version="v2") != with_v1
    assert engine.calls == 6


def test_subset_inputs_are_kept_per_list_object_and_bounded() -> None:
    inputs = SubsetInputs(maxsize=2)
    subsets = _spread()["spec"]["subsets"]
    trimmed, text = inputs.trimmed(subsets, node_fit=True)
    assert inputs.trimmed(subsets, node_fit=True)[0] is trimmed and (inputs.hits, inputs.misses) == (1, 1)
    same_content = copy.deepcopy(subsets)  # another object (another version of the spread): rebuilt, equal
    assert inputs.trimmed(same_content, node_fit=True) == (trimmed, text) and inputs.misses == 2
    assert inputs.trimmed(subsets, node_fit=False)[1] != text, "node fit reads the tolerations too"
    assert len(inputs._entries) == 2
    with pytest.raises(ValueError):
        SubsetInputs(0)
