"""Property tests: random spreads and random create/delete sequences through the core.

The model plays the API server (status writes always land, deletes always
happen) and, at random points, a minimal controller sync (creating/deleting
entries seen, `missingReplicas = cap - live pods`, the reference formula
without pending entries). Invariants checked after every step:

* no capped subset ever holds more live pods than its cap;
* `missingReplicas` is -1 exactly for unlimited subsets, never below 0 otherwise;
* every reservation got its own `creatingPods` key (no overwrite, one subset per key);
* re-admitting a pod that is already recorded writes nothing and keeps its subset;
* `reserve_create` is deterministic and leaves its inputs untouched.
"""

from __future__ import annotations

import copy
from typing import Any

from admission_builders import NOW, make_ctx, owner_ref, pod, spread, subset
from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.model.pods import matched_spread
from py_engine.workloadspread.admission.choose import Eligibility
from py_engine.workloadspread.admission.inject import inject
from py_engine.workloadspread.admission.release import release_delete
from py_engine.workloadspread.admission.reserve import reserve_create

VERSION = "abc123"
OWNER = owner_ref("apps/v1", "ReplicaSet", "web-abc123")

caps_strategy = st.lists(st.one_of(st.none(), st.integers(min_value=0, max_value=4)), min_size=1, max_size=4)
op_strategy = st.lists(
    st.tuples(
        st.sampled_from(["create", "create-nameless", "delete", "readmit", "sync"]), st.integers(0, 1000)
    ),
    max_size=40,
)


def _entries(ws: dict[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = ws.get("status", {}).get("versionedSubsetStatuses", {}).get(VERSION, [])
    return entries


def _sync(ws: dict[str, Any], caps: list[int | None], live: dict[str, str]) -> dict[str, Any]:
    """A controller pass: every pod is seen, counts recomputed from live pods."""
    ws = copy.deepcopy(ws)
    statuses = []
    for i, cap in enumerate(caps):
        name = f"s{i}"
        count = sum(1 for s in live.values() if s == name)
        statuses.append(
            {"name": name, "replicas": count, "missingReplicas": -1 if cap is None else max(0, cap - count)}
        )
    ws.setdefault("status", {}).setdefault("versionedSubsetStatuses", {})[VERSION] = statuses
    return ws


@settings(max_examples=200, deadline=None)
@given(caps=caps_strategy, ops=op_strategy)
def test_random_creates_and_deletes_respect_caps(caps: list[int | None], ops: list[tuple[str, int]]) -> None:
    ws = spread([subset(f"s{i}", cap) for i, cap in enumerate(caps)])
    ctx = make_ctx()
    live: dict[str, str] = {}  # pod key (name or uid) -> subset, pods that exist
    pods: dict[str, dict[str, Any]] = {}  # pod key -> the admitted (mutated) pod
    reserved_since_sync: set[str] = set()
    counter = 0

    for op, pick in ops:
        if op in ("create", "create-nameless"):
            counter += 1
            name = f"web-abc123-{counter}" if op == "create" else None
            new_pod = pod(name, owner=OWNER)
            uid = f"uid-{counter}"
            frozen = copy.deepcopy((ws, new_pod))
            result = reserve_create(ws, new_pod, ctx, generated_uid=uid)
            assert result == reserve_create(ws, new_pod, ctx, generated_uid=uid), "deterministic"
            assert (ws, new_pod) == frozen, "inputs untouched"
            if result.subset is None:
                assert result.spread is None and result.warnings
                continue
            if result.spread is not None:
                key = name or uid
                assert result.uid == key
                assert key not in reserved_since_sync
                reserved_since_sync.add(key)
                ws = result.spread
            admitted = inject(new_pod, ws, result.subset, result.uid)
            key = name or uid
            live[key] = result.subset
            pods[key] = admitted
        elif op == "readmit" and reserved_since_sync:
            key = sorted(reserved_since_sync)[pick % len(reserved_since_sync)]
            original = pods[key]
            nameless = original["metadata"].get("name") is None
            again = pod(None if nameless else key, owner=OWNER)
            result = reserve_create(ws, again, ctx, generated_uid=key if nameless else "fresh-uid")
            assert result.spread is None, "re-admission writes nothing"
            recorded = matched_spread(original)
            assert recorded is not None and result.subset == recorded.subset
        elif op == "delete" and live:
            key = sorted(live)[pick % len(live)]
            victim = pods[key]
            if victim["metadata"].get("name") is None:
                victim = copy.deepcopy(victim)
                victim["metadata"]["name"] = key  # the API server named it
            annotation = matched_spread(victim)
            assert annotation is not None and annotation.subset == live[key]
            release = release_delete(ws, victim, ctx)
            if release.spread is not None:
                assert key not in reserved_since_sync, "a pod still in creatingPods gives nothing back"
                ws = release.spread
            del live[key]
        elif op == "sync":
            ws = _sync(ws, caps, live)
            reserved_since_sync.clear()

        entries = _entries(ws)
        creating_keys = [k for e in entries for k in (e.get("creatingPods") or {})]
        assert len(creating_keys) == len(set(creating_keys)) == len(reserved_since_sync)
        for i, cap in enumerate(caps):
            in_subset = sum(1 for s in live.values() if s == f"s{i}")
            if cap is not None:
                assert in_subset <= cap, f"subset s{i} holds {in_subset} pods, cap {cap}"
            for e in entries:
                if e["name"] == f"s{i}":
                    assert (e["missingReplicas"] == -1) == (cap is None)
                    assert e["missingReplicas"] >= -1
    assert NOW  # the clock never moved


def test_eligibility_dataclass_defaults() -> None:
    assert Eligibility(frozenset({"a"})).rejected == {}
