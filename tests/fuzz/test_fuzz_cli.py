"""Fuzzing the offline commands in-process: `spreadgate validate`, `admit`, `reconcile`, `rank`.

Each example writes its (possibly hostile) objects to files and calls
`py_engine.cli.main` with them. "Never crash" means: the call returns one of
the documented exit codes (0, 1 or 2) instead of raising, and what reaches
stderr is a one-line-per-problem message, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_strategies import fuzz_settings, hostile_pods, hostile_spreads, nodes, owners
from hypothesis import given
from hypothesis import strategies as st

from py_engine.cli import main

NOW = "2024-06-01T12:00:00Z"


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="spreadgate-fuzz-") as tmp:
        yield Path(tmp)


def write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def listing(items: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items}


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse rejecting an argument is a usage error, not a crash
            code = int(exc.code or 0)
    text = err.getvalue()
    assert code in (0, 1, 2), (code, text[-2000:])
    assert "Traceback (most recent call last)" not in text, text[-3000:]
    return code, text


def named(spreads: list[Any]) -> list[Any]:
    return [dict(s, metadata=dict(s["metadata"], name=f"ws{i}")) if isinstance(s, dict)
            and isinstance(s.get("metadata"), dict) else s for i, s in enumerate(spreads)]


@fuzz_settings(weight=1.25)
@given(spreads=st.lists(hostile_spreads, min_size=1, max_size=3))
def test_validate_never_crashes(workdir: Path, spreads: list[Any]) -> None:
    path = write(workdir / "spreads.json", listing(named(spreads)))
    run(["validate", path, "-o", "json"])


@fuzz_settings(weight=1.25)
@given(spreads=st.lists(hostile_spreads, min_size=1, max_size=2), existing=st.lists(hostile_pods, max_size=4),
       pod=hostile_pods, operation=st.sampled_from(["CREATE", "DELETE", "EVICT"]), with_nodes=st.booleans(),
       output=st.sampled_from(["text", "patch", "pod", "json"]))
def test_admit_never_crashes(workdir: Path, spreads: list[Any], existing: list[Any], pod: Any, operation: str,
                             with_nodes: bool, output: str) -> None:
    state = listing([*owners(5), *named(spreads), *existing, *(nodes() if with_nodes else [])])
    run(["admit", "--state", write(workdir / "admit-state.json", state), "--pod", write(workdir / "pod.json", pod),
         "--operation", operation, "--now", NOW, "--generated-uid", "fuzz-uid", "-o", output])


def listed(pods: list[Any]) -> list[Any]:
    """Pods as a cluster lists them: whatever else is broken, the API server named every one."""
    out = []
    for index, pod in enumerate(pods):
        if isinstance(pod, dict) and isinstance(pod.get("metadata"), dict) and "name" not in pod["metadata"]:
            pod = dict(pod, metadata=dict(pod["metadata"], name=f"listed-{index}"))
        out.append(pod)
    return out


@fuzz_settings(weight=1.25)
@given(spread=hostile_spreads, existing=st.lists(hostile_pods, max_size=12), replicas=st.integers(-2, 20),
       output=st.sampled_from(["table", "json"]))
def test_reconcile_never_crashes(workdir: Path, spread: Any, existing: list[Any], replicas: int, output: str) -> None:
    state = listing([*owners(replicas), *named([spread]), *listed(existing), *nodes()])
    run(["reconcile", "--state", write(workdir / "reconcile-state.json", state), "--now", NOW, "--name", "ws0",
         "-o", output])


@fuzz_settings(weight=1.25)
@given(pods=st.lists(hostile_pods, max_size=15), controller=st.sampled_from(["replicaset", "cloneset"]),
       count=st.one_of(st.none(), st.integers(0, 20)), wrapped=st.booleans())
def test_rank_never_crashes(workdir: Path, pods: list[Any], controller: str, count: int | None,
                            wrapped: bool) -> None:
    source = write(workdir / "pods.json", listing(pods) if wrapped else pods)
    argv = ["rank", source, "--controller", controller, "--now", NOW]
    if controller == "cloneset":
        argv += ["--nodes", write(workdir / "nodes.json", listing(nodes())), "--topology-key",
                 "topology.kubernetes.io/zone"]
    if count is not None:
        argv += ["--count", str(count)]
    run(argv)


def test_reconcile_state_with_a_nameless_pod_regression(workdir: Path) -> None:
    spread = {"apiVersion": "spreadgate.dev/v1alpha1", "kind": "WorkloadSpread",
              "metadata": {"name": "ws0", "namespace": "default", "generation": 1},
              "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                       "subsets": [{"name": "s0"}]}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"namespace": "default", "generateName": "web-h-",
                        "labels": {"app": "web", "pod-template-hash": "h"},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-h",
                                             "uid": "rs-uid-1", "controller": True}]},
           "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Succeeded"}}
    state = listing([*owners(1), spread, pod, *nodes()])
    run(["reconcile", "--state", write(workdir / "nameless.json", state), "--now", NOW, "--name", "ws0"])


def test_reconcile_state_with_a_string_status_regression(workdir: Path) -> None:
    """The full run's shrunk example: a stored status that is a string, not an object."""
    spread = {"apiVersion": "spreadgate.dev/v1alpha1", "kind": "WorkloadSpread",
              "metadata": {"name": "ws0", "namespace": "default", "generation": 1},
              "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                       "subsets": [{"name": "s0"}, {"name": "s1"}]},
              "status": "x" * 1000}
    state = listing([*owners(1), spread, *nodes()])
    code, _ = run(["reconcile", "--state", write(workdir / "string-status.json", state), "--now", NOW,
                   "--name", "ws0"])
    assert code == 0
