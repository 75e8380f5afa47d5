"""Fuzzing the offline commands in-process: `spreadgate validate`, `admit`, `reconcile`, `rank`.

Each example writes its (possibly hostile) objects to files and calls
`py_engine.cli.main` with them. "Never crash" means: the call returns one of
the documented exit codes (0, 1 or 2) instead of raising, and what reaches
stderr is a one-line-per-problem message, never a traceback. Beyond not
crashing, the answers must hold together (issue 29):

* validate: the verdict (the violations found) does not change when every
  object's keys are written in another order;
* admit: a pod admitted into a subset gets a subset of the spread's spec, its
  matched annotation names it, and a slot taken never leaves the subset's
  `missingReplicas` below zero (no pod beyond its cap); the same decision when
  the keys are reordered;
* reconcile: every status entry belongs to a spec subset, with `replicas >= 0`
  and `missingReplicas` -1 or within [0, the integer cap];
* rank: each pod at most once, positions 1..n, never more than `--count` or
  than the pods given; the same answer when the keys are reordered.
"""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fuzz_support
from fuzz_strategies import RS_UID, fuzz_settings, hostile_pods, hostile_spreads, nodes, owners
from fuzz_support import write
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.kube_objects import replicaset_pod, workload_spread
from py_engine.cli import main
from py_engine.model import MATCHED_ANNOTATION
from py_engine.workloadspread.admission.offline import OfflineAdmission

NOW = "2024-06-01T12:00:00Z"
workdir = fuzz_support.workdir  # the fixture, used by name


def listing(items: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items}


def run(argv: list[str]) -> tuple[int, str]:
    code, _, text = run_with_output(argv)
    return code, text


def run_with_output(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr), with the no-crash assertions."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse rejecting an argument is a usage error, not a crash
            code = int(exc.code or 0)
    text = err.getvalue()
    assert code in (0, 1, 2), (code, text[-2000:])
    assert "Traceback (most recent call last)" not in text, text[-3000:]
    return code, out.getvalue(), text


def reordered(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order (JSON objects are unordered)."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


def _spec_subsets(spread: Any) -> dict[str, Any]:
    """name -> maxReplicas (None: unlimited) of a spread's well-formed subsets, first of a name wins."""
    spec = spread.get("spec") if isinstance(spread, dict) else None
    items = spec.get("subsets") if isinstance(spec, dict) else None
    found: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            found.setdefault(item["name"], item.get("maxReplicas"))
    return found


def _int_cap(cap: Any) -> int | None:
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 0 else None


def named(spreads: list[Any]) -> list[Any]:
    return [
        dict(s, metadata=dict(s["metadata"], name=f"ws{i}"))
        if isinstance(s, dict) and isinstance(s.get("metadata"), dict)
        else s
        for i, s in enumerate(spreads)
    ]


@fuzz_settings(weight=1.25)
@given(spreads=st.lists(hostile_spreads, min_size=1, max_size=3))
def test_validate_never_crashes(workdir: Path, spreads: list[Any]) -> None:
    path = write(workdir / "spreads.json", listing(named(spreads)))
    code, out, _ = run_with_output(["validate", path, "-o", "json"])
    again = write(workdir / "spreads-reordered.json", reordered(listing(named(spreads))))
    code_again, out_again, _ = run_with_output(["validate", again, "-o", "json"])
    assert code_again == code
    if code in (0, 1):
        assert _verdicts(out_again) == _verdicts(out), "the verdict depends on the order of the keys"


def _verdicts(out: str) -> Any:
    """The violations of a `validate -o json` answer, each as sorted JSON text, order-free."""
    document = json.loads(out)

    def canonical(value: Any) -> Any:
        if isinstance(value, dict):
            return sorted((k, canonical(v)) for k, v in value.items() if k not in ("file", "line", "path"))
        if isinstance(value, list):
            return sorted(json.dumps(canonical(v), sort_keys=True, default=str) for v in value)
        return value

    return canonical(document)


@fuzz_settings(weight=1.25)
@given(
    spreads=st.lists(hostile_spreads, min_size=1, max_size=2),
    existing=st.lists(hostile_pods, max_size=4),
    pod=hostile_pods,
    operation=st.sampled_from(["CREATE", "DELETE", "EVICT"]),
    with_nodes=st.booleans(),
    output=st.sampled_from(["text", "patch", "pod", "json"]),
)
def test_admit_never_crashes(
    workdir: Path,
    spreads: list[Any],
    existing: list[Any],
    pod: Any,
    operation: str,
    with_nodes: bool,
    output: str,
) -> None:
    state = listing([*owners(5), *named(spreads), *existing, *(nodes() if with_nodes else [])])
    argv = ["--operation", operation, "--now", NOW, "--generated-uid", "fuzz-uid", "-o", output]
    code, out, _ = run_with_output(
        [
            "admit",
            "--state",
            write(workdir / "admit-state.json", state),
            "--pod",
            write(workdir / "pod.json", pod),
            *argv,
        ]
    )
    if output != "json" or code != 0:
        return
    answer = json.loads(out)
    check_admission(answer, operation)
    code_again, out_again, _ = run_with_output(
        [
            "admit",
            "--state",
            write(workdir / "admit-reordered.json", reordered(state)),
            "--pod",
            write(workdir / "pod-reordered.json", reordered(pod)),
            *argv,
        ]
    )
    assert code_again == 0
    again = json.loads(out_again)
    decision = ("allowed", "subset", "statusWritten")
    assert {k: again[k] for k in decision} == {k: answer[k] for k in decision}, (
        "the decision depends on key order"
    )


def check_admission(answer: dict[str, Any], operation: str) -> None:
    """A CREATE admitted into a subset: a spec subset, named by the pod's annotation, and never a slot
    beyond the cap (the written `missingReplicas` of that subset stays >= 0, or -1 for unlimited)."""
    assert isinstance(answer["allowed"], bool)
    subset, spread = answer["subset"], answer["workloadSpread"]
    if operation != "CREATE" or not answer["allowed"] or subset is None:
        return
    subsets = _spec_subsets(spread)
    assert subset in subsets, (subset, sorted(subsets))
    pod = answer["pod"]
    if isinstance(pod, dict):
        annotation = json.loads(pod["metadata"]["annotations"][MATCHED_ANNOTATION])
        assert annotation["subset"] == subset and annotation["name"] == spread["metadata"]["name"]
    if not answer["statusWritten"]:
        return
    key = pod["metadata"].get("name") or "fuzz-uid" if isinstance(pod, dict) else None
    versions = spread["status"]["versionedSubsetStatuses"]
    entries = [
        e
        for statuses in versions.values()
        for e in statuses
        if isinstance(e, dict) and e.get("name") == subset and key in (e.get("creatingPods") or {})
    ]
    assert len(entries) == 1, "the slot is recorded once, in the chosen subset"
    missing = entries[0].get("missingReplicas")
    assert isinstance(missing, int) and missing >= 0, entries[0]


def listed(pods: list[Any]) -> list[Any]:
    """Pods as a cluster lists them: whatever else is broken, the API server named every one."""
    out = []
    for index, pod in enumerate(pods):
        if isinstance(pod, dict) and isinstance(pod.get("metadata"), dict) and "name" not in pod["metadata"]:
            pod = dict(pod, metadata=dict(pod["metadata"], name=f"listed-{index}"))
        out.append(pod)
    return out


@fuzz_settings(weight=1.25)
@given(
    spread=hostile_spreads,
    existing=st.lists(hostile_pods, max_size=12),
    replicas=st.integers(-2, 20),
    output=st.sampled_from(["table", "json"]),
)
def test_reconcile_never_crashes(
    workdir: Path, spread: Any, existing: list[Any], replicas: int, output: str
) -> None:
    state = listing([*owners(replicas), *named([spread]), *listed(existing), *nodes()])
    code, out, _ = run_with_output(
        [
            "reconcile",
            "--state",
            write(workdir / "reconcile-state.json", state),
            "--now",
            NOW,
            "--name",
            "ws0",
            "-o",
            output,
        ]
    )
    if output == "json" and code == 0:
        check_reconciled(json.loads(out), spread)


def check_reconciled(answer: Any, spread: Any) -> None:
    """Every status entry is a spec subset's; replicas >= 0; missingReplicas -1 or within [0, cap]."""
    status = answer.get("status") if isinstance(answer, dict) else None
    if not isinstance(status, dict):
        return
    subsets = _spec_subsets(spread)
    lists = [status.get("subsetStatuses") or [], *(status.get("versionedSubsetStatuses") or {}).values()]
    for entries in lists:
        for entry in entries:
            assert entry["name"] in subsets, (entry["name"], sorted(subsets))
            assert isinstance(entry["replicas"], int) and entry["replicas"] >= 0, entry
            missing = entry["missingReplicas"]
            cap = _int_cap(subsets[entry["name"]])
            assert missing == -1 or missing >= 0, entry
            if cap is not None:
                assert missing <= cap, (entry, cap)


@fuzz_settings(weight=1.25)
@given(
    pods=st.lists(hostile_pods, max_size=15),
    controller=st.sampled_from(["replicaset", "cloneset"]),
    count=st.one_of(st.none(), st.integers(0, 20)),
    wrapped=st.booleans(),
)
def test_rank_never_crashes(
    workdir: Path, pods: list[Any], controller: str, count: int | None, wrapped: bool
) -> None:
    source = write(workdir / "pods.json", listing(pods) if wrapped else pods)
    argv = ["rank", source, "--controller", controller, "--now", NOW]
    if controller == "cloneset":
        argv += [
            "--nodes",
            write(workdir / "nodes.json", listing(nodes())),
            "--topology-key",
            "topology.kubernetes.io/zone",
        ]
    if count is not None:
        argv += ["--count", str(count)]
    code, out, _ = run_with_output([*argv, "-o", "json"])
    if code != 0:
        return
    ranked = json.loads(out)
    assert [entry["position"] for entry in ranked] == list(range(1, len(ranked) + 1))
    identities = [(entry["namespace"], entry["name"]) for entry in ranked]
    assert len(ranked) <= len(pods)
    assert len(set(identities)) == len(identities) or any(not name for _, name in identities)
    if count is not None:
        assert len(ranked) <= count
    # The same pods with their keys written in another order: the same answer.
    again = write(workdir / "pods-reordered.json", reordered(listing(pods) if wrapped else pods))
    code_again, out_again, _ = run_with_output([*argv[:1], again, *argv[2:], "-o", "json"])
    assert (code_again, json.loads(out_again)) == (0, ranked)


def test_reconcile_state_with_a_nameless_pod_regression(workdir: Path) -> None:
    spread = workload_spread("ws0", [{"name": "s0"}], generation=1)
    pod = {**replicaset_pod(RS_UID), "status": {"phase": "Succeeded"}}
    state = listing([*owners(1), spread, pod, *nodes()])
    run(["reconcile", "--state", write(workdir / "nameless.json", state), "--now", NOW, "--name", "ws0"])


def test_reconcile_state_with_a_string_status_regression(workdir: Path) -> None:
    """The full run's shrunk example: a stored status that is a string, not an object."""
    spread = {**workload_spread("ws0", [{"name": "s0"}, {"name": "s1"}], generation=1), "status": "x" * 1000}
    state = listing([*owners(1), spread, *nodes()])
    code, _ = run(
        ["reconcile", "--state", write(workdir / "string-status.json", state), "--now", NOW, "--name", "ws0"]
    )
    assert code == 0


@fuzz_settings(weight=1.5)
@given(
    caps=st.lists(st.one_of(st.integers(0, 3), st.integers(1, 3), st.none()), min_size=1, max_size=4),
    creations=st.integers(1, 10),
    synced=st.booleans(),
)
def test_admitted_pods_stay_inside_their_subsets_caps(
    caps: list[int | None], creations: int, synced: bool
) -> None:
    """Pods created one after another through `spreadgate admit`'s engine
    (py_engine.workloadspread.admission.offline), each admission's status write kept: every pod
    goes to the first subset, in spec order, that is
    unlimited or below its cap (docs/design-workloadspread.md §2.1.1), so no subset ever holds more
    pods than its cap; with every subset full the pod is admitted without a subset. Both with the
    counts taken from the status (`synced`) and recounted from the spec (spec ahead of the status)."""
    subsets = [
        {"name": f"s{i}", **({} if cap is None else {"maxReplicas": cap})} for i, cap in enumerate(caps)
    ]
    spread = workload_spread("ws0", subsets, generation=1, uid="ws-uid")
    if synced:  # the controller has seen this generation: the counts in the status are used as they are
        spread["status"] = {"observedGeneration": 1}
    admission = OfflineAdmission(
        [*owners(20), spread], datetime(2024, 6, 1, 12, tzinfo=UTC), generated_uid="fuzz-uid"
    )
    held = [0] * len(caps)
    for index in range(creations):
        pod = replicaset_pod(RS_UID, name=f"web-h-{index}")
        outcome = admission.create(pod)
        assert outcome.allowed
        room = [i for i, cap in enumerate(caps) if cap is None or held[i] < cap]
        expected = f"s{room[0]}" if room else None
        assert outcome.subset == expected, (caps, held, outcome.subset)
        if room:
            held[room[0]] += 1
    assert all(cap is None or count <= cap for count, cap in zip(held, caps, strict=True))
