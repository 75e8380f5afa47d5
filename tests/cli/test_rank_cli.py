"""`spreadgate rank`: output formats, options, and clean failures on bad input.

Most cases call `py_engine.cli.main` in-process; one runs the installed
`spreadgate` console script with pods piped on stdin, as `kubectl get pods -o
json | spreadgate rank -` does.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from py_engine.cli import main
from py_engine.semantics.timeutil import format_time

NOW = datetime(2024, 6, 1, tzinfo=UTC)
NOW_TEXT = format_time(NOW)


def ago(**delta: float) -> str:
    return format_time(NOW - timedelta(**delta))


def pod(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready: bool = True,
    ready_at: str | None = None,
    created: str | None = None,
    restarts: int = 0,
    cost: str | None = None,
    uid: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "web",
        "uid": uid or f"uid-{name}",
        "creationTimestamp": created or ago(hours=10),
        "labels": labels or {"app": "web"},
    }
    if cost is not None:
        metadata["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": ready_at or ago(hours=9),
                }
            ],
            "containerStatuses": [{"name": "c", "restartCount": restarts}],
        },
    }


def pod_list(*pods: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(pods)}


PODS = pod_list(
    pod("steady", node="n1", created=ago(hours=30), ready_at=ago(hours=29)),
    pod("doubled-a", node="n2", created=ago(hours=20), ready_at=ago(hours=19)),
    pod("doubled-b", node="n2", created=ago(hours=21), ready_at=ago(hours=20, minutes=30)),
    pod("starting", node="n3", ready=False, created=ago(minutes=2)),
    pod("pending", node="", phase="Pending", ready=False, created=ago(minutes=1)),
    pod("cheap", node="n1", cost="-50", created=ago(hours=40), ready_at=ago(hours=39)),
    pod("finished", node="n1", phase="Succeeded", ready=False),
)
EXPECTED_ORDER = ["pending", "starting", "cheap", "doubled-a", "doubled-b", "steady"]


def write(tmp_path: Path, name: str, document: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["rank", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_names_first_victim_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["-f", write(tmp_path, "pods.json", PODS), "--now", NOW_TEXT], capsys)
    assert code == 0
    assert out.splitlines() == EXPECTED_ORDER
    assert "ignored 1 inactive pod" in err


def test_reads_stdin_and_bare_arrays(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(PODS["items"])))
    code, out, _ = run(["-", "--now", NOW_TEXT], capsys)
    assert code == 0
    assert out.splitlines() == EXPECTED_ORDER


def test_json_output_has_rank_and_deciding_criterion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["-f", write(tmp_path, "pods.json", PODS), "--now", NOW_TEXT, "-o", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == EXPECTED_ORDER
    assert [row["position"] for row in rows] == list(range(1, 7))
    by_name = {row["name"]: row for row in rows}
    assert by_name["doubled-a"]["rank"] == 2 and by_name["steady"]["rank"] == 2  # n1 holds steady and cheap
    assert by_name["pending"]["rank"] == 1 and by_name["pending"]["node"] == ""
    assert [row["criterion"] for row in rows] == [
        "scheduled",
        "ready",
        "deletion-cost",
        # doubled-a was ready 19 h ago (log2 bucket 45), doubled-b 20.5 h ago (bucket 46)
        "ready-time",
        # doubled-b and steady: both rank 2, ready 20.5 h and 29 h ago share bucket 46: UID order
        "ready-time-uid",
        "last",
    ]
    assert rows[0]["namespace"] == "web"


def test_table_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["-f", write(tmp_path, "pods.json", PODS), "--now", NOW_TEXT, "-o", "table"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["#", "NAME", "NODE", "PHASE", "READY", "COST", "RANK", "DECIDED", "BY"]
    assert lines[1].split() == ["1", "pending", "<none>", "Pending", "no", "0", "1", "scheduled"]
    assert lines[3].split()[:6] == ["3", "cheap", "n1", "Running", "yes", "-50"]
    assert len(lines) == 7


def test_count_prints_the_victims_of_a_scale_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "pods.json", PODS)
    code, out, _ = run(["-f", path, "--now", NOW_TEXT, "--count", "2"], capsys)
    assert code == 0
    assert out.splitlines() == EXPECTED_ORDER[:2]
    code, out, _ = run(["-f", path, "--now", NOW_TEXT, "--count", "6", "-o", "json"], capsys)
    rows = json.loads(out)
    # Every active pod goes: the ReplicaSet takes them unsorted, in list order.
    assert [row["name"] for row in rows] == [
        "steady",
        "doubled-a",
        "doubled-b",
        "starting",
        "pending",
        "cheap",
    ]
    assert {row["criterion"] for row in rows[:-1]} == {"unsorted"} and rows[-1]["criterion"] == "last"
    assert all(row["rank"] is None for row in rows)
    code, out, _ = run(["-f", path, "--now", NOW_TEXT, "--count", "0"], capsys)
    assert (code, out) == (0, "")


def test_feature_gates_change_the_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = pod_list(
        pod("a", uid="a", ready_at=ago(hours=6), restarts=0),
        pod("b", uid="b", ready_at=ago(hours=5), restarts=100),
    )
    path = write(tmp_path, "pods.json", pods)
    assert run(["-f", path, "--now", NOW_TEXT], capsys)[1].split() == ["a", "b"]
    gated = run(["-f", path, "--now", NOW_TEXT, "--feature-gates", "LogarithmicScaleDown=false"], capsys)
    assert gated[1].split() == ["b", "a"]
    costs = pod_list(pod("x", cost="5", created=ago(hours=1)), pod("y", cost="-5", created=ago(hours=2)))
    costs_path = write(tmp_path, "costs.json", costs)
    assert run(["-f", costs_path, "--now", NOW_TEXT], capsys)[1].split() == ["y", "x"]
    off = run(["-f", costs_path, "--now", NOW_TEXT, "--feature-gates", "PodDeletionCost=false"], capsys)
    assert off[1].split() == ["x", "y"]


def test_related_pods_and_bare_replicasets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = pod_list(
        pod("mine-1", node="n1", created=ago(hours=2)),
        pod("mine-2", node="n2", created=ago(hours=3)),
    )
    siblings = pod_list(pod("new-1", node="n2"), pod("new-2", node="n2"))
    path = write(tmp_path, "own.json", own)
    related = write(tmp_path, "related.json", siblings)
    code, out, _ = run(["-f", path, "--related", related, "--now", NOW_TEXT, "-o", "json"], capsys)
    assert code == 0
    assert [(row["name"], row["rank"]) for row in json.loads(out)] == [("mine-2", 3), ("mine-1", 1)]
    code, out, _ = run(["-f", path, "--no-controller-owner", "--now", NOW_TEXT, "-o", "json"], capsys)
    assert [(row["name"], row["rank"]) for row in json.loads(out)] == [("mine-1", 0), ("mine-2", 0)]


def test_explicit_ranks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "pods.json", PODS)
    ranks = {name: 0 for name in EXPECTED_ORDER}
    ranks["steady"] = 9
    code, out, _ = run(
        ["-f", path, "--ranks", write(tmp_path, "ranks.json", ranks), "--now", NOW_TEXT], capsys
    )
    assert code == 0
    assert out.splitlines()[3] == "steady"  # rank is rule 5: after phase, readiness and cost


def test_cloneset_with_zone_spread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = pod_list(
        pod("a-0", node="na", created=ago(minutes=50)),
        pod("a-1", node="na", created=ago(minutes=40)),
        pod("a-2", node="na", created=ago(minutes=30)),
        pod("b-0", node="nb", created=ago(minutes=20)),
        pod("c-0", node="nc", created=ago(minutes=10)),
    )
    nodes = {
        "kind": "List",
        "items": [
            {"kind": "Node", "metadata": {"name": "na", "labels": {"zone": "z1"}}},
            {"kind": "Node", "metadata": {"name": "nb", "labels": {"zone": "z1"}}},
            {"kind": "Node", "metadata": {"name": "nc", "labels": {"zone": "z2"}}},
        ],
    }
    base = ["-f", write(tmp_path, "pods.json", pods), "--controller", "cloneset", "--now", NOW_TEXT]
    nodes_path = write(tmp_path, "nodes.json", nodes)
    code, out, _ = run([*base, "--nodes", nodes_path, "--topology-key", "zone", "-o", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    # z1 holds four pods, z2 one: z1 is drained first, the crowded node na first within it.
    assert [row["name"] for row in rows] == ["a-2", "a-1", "b-0", "c-0", "a-0"]
    assert rows[0]["rank"] == pytest.approx(4 * 1.3862943611198906)
    # Without topology keys: the same-node ranker alone.
    code, out, _ = run(base, capsys)
    assert out.splitlines() == ["a-2", "a-1", "c-0", "b-0", "a-0"]
    # The template's constraints and revision come from the CloneSet object.
    cloneset = {
        "kind": "CloneSet",
        "spec": {
            "replicas": 5,
            "scaleStrategy": {"podsToDelete": ["c-0"]},
            "template": {"spec": {"topologySpreadConstraints": [{"topologyKey": "zone"}]}},
        },
        "status": {"updateRevision": "rev-2"},
    }
    code, out, _ = run(
        [*base, "--nodes", nodes_path, "--cloneset", write(tmp_path, "cs.json", cloneset)], capsys
    )
    assert code == 0
    assert out.splitlines()[0] == "c-0"


def test_cloneset_revisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = pod_list(
        pod("new", node="n1", created=ago(minutes=5), labels={"controller-revision-hash": "web-2"}),
        pod("old", node="n2", created=ago(hours=5), labels={"controller-revision-hash": "web-1"}),
    )
    path = write(tmp_path, "pods.json", pods)
    code, out, _ = run(["-f", path, "--controller", "cloneset", "--now", NOW_TEXT, "-o", "json"], capsys)
    assert [row["name"] for row in json.loads(out)] == ["new", "old"]
    code, out, _ = run(
        [
            "-f",
            path,
            "--controller",
            "cloneset",
            "--update-revision",
            "web-2",
            "--now",
            NOW_TEXT,
            "-o",
            "json",
        ],
        capsys,
    )
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == ["old", "new"]
    assert rows[0]["criterion"] == "revision"


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["-"], "not json", "pods from stdin is not valid JSON"),
        (["-"], "", "pods from stdin is empty"),
        (["-"], "[" * 100000, "nested too deeply"),
        (["-"], '{"kind": "Deployment"}', "expected a PodList or a JSON array of pods"),
        (["-"], "[42]", "item 0: expected a pod object"),
        (["-"], '[{"metadata": {}}]', "metadata.name is missing"),
        (["-"], '[{"metadata": {"name": "p", "creationTimestamp": "noon"}}]', "not an RFC 3339 timestamp"),
        (["-", "--feature-gates", "Nope=true"], "[]", "unrecognized feature gate: 'Nope'"),
        (["-", "--feature-gates", "PodDeletionCost=maybe"], "[]", "invalid value 'maybe'"),
        (["-", "--now", "tomorrow"], "[]", "--now: not an RFC 3339 timestamp"),
        (["-", "--count", "1"], "[]", "--count 1 exceeds the 0 active pod(s)"),
        (
            ["-", "--controller", "cloneset", "--feature-gates", "PodDeletionCost=true"],
            "[]",
            "does not apply",
        ),
        (["-", "--nodes", "/dev/null"], "[]", "--nodes does not apply to --controller replicaset"),
        (["-", "--controller", "cloneset", "--topology-key", "zone"], "[]", "needs node labels"),
        (["-", "--related", "/nonexistent/related.json"], "[]", "cannot read related pods"),
        (["-", "--related", "-"], "[]", "only the pods can be read from stdin"),
        (["-f", "/nonexistent/pods.json"], "", "cannot read pods from '/nonexistent/pods.json'"),
        ([], "", "no pods given"),
        (["-", "-f", "x.json"], "", "either as an argument or with -f"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    argv: list[str],
    stdin: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("spreadgate rank: error: ")
    assert message in err
    assert "Traceback" not in err


def test_bad_ranks_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "pods.json", PODS)
    for ranks, message in [
        ([1, 2], "must be a JSON object"),
        ({name: "1" for name in EXPECTED_ORDER}, "must be an integer"),
        ({name: 1.5 for name in EXPECTED_ORDER}, "must be an integer"),
        ({"steady": 1}, "has no rank for 5 pod(s)"),
        ({**{name: 1 for name in EXPECTED_ORDER}, "ghost": 1}, "not among the active input pods: ghost"),
    ]:
        code, _, err = run(
            ["-f", path, "--ranks", write(tmp_path, "r.json", ranks), "--now", NOW_TEXT], capsys
        )
        assert code == 2, ranks
        assert message in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rank", "-", "--count", "-1"])
    assert exc.value.code == 2
    assert "must not be negative" in capsys.readouterr().err


def test_console_script_reads_a_pipe(tmp_path: Path) -> None:
    script = shutil.which("spreadgate") or str(Path(sys.executable).parent / "spreadgate")
    assert Path(script).exists(), script
    done = subprocess.run(
        [script, "rank", "-", "--now", NOW_TEXT, "--count", "3"],
        input=json.dumps(PODS),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == EXPECTED_ORDER[:3]
    failed = subprocess.run(
        [script, "rank", "-"], input="{oops", capture_output=True, text=True, timeout=60, check=False
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith("spreadgate rank: error: pods from stdin is not valid JSON")
    assert "Traceback" not in failed.stderr


def test_cloneset_puts_preparing_delete_first_and_the_help_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The newest, not-ready pod would lead by the comparator alone; Scale() finishes the
    # PreparingDelete pod first.
    pods = pod_list(
        pod("fresh", ready=False, created=ago(minutes=1)),
        pod(
            "leaving",
            created=ago(hours=9),
            labels={"app": "web", "lifecycle.apps.kruise.io/state": "PreparingDelete"},
        ),
    )
    path = write(tmp_path, "pods.json", pods)
    code, out, _ = run(["-f", path, "--controller", "cloneset", "--now", NOW_TEXT, "-o", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == ["leaving", "fresh"]
    assert rows[0]["criterion"] == "preparing-delete"
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    assert "Scale() finishes" in " ".join(capsys.readouterr().out.split())


def test_reads_yaml_multi_document_and_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    items = PODS["items"]
    multi = tmp_path / "pods.yaml"
    multi.write_text(yaml.safe_dump_all(items[:3]) + "---\n" + yaml.safe_dump(pod_list(*items[3:])))
    code, out, err = run(["-f", str(multi), "--now", NOW_TEXT], capsys)
    assert code == 0, err
    assert out.splitlines() == EXPECTED_ORDER
    single = tmp_path / "one.yaml"
    single.write_text(yaml.safe_dump(items[0]))
    code, out, _ = run([str(single), "--now", NOW_TEXT], capsys)
    assert (code, out.splitlines()) == (0, ["steady"])
    ranks = tmp_path / "ranks.yaml"
    ranks.write_text("".join(f"{name}: {index}\n" for index, name in enumerate(EXPECTED_ORDER)))
    code, out, err = run(["-f", str(multi), "--ranks", str(ranks), "--now", NOW_TEXT, "-o", "json"], capsys)
    assert code == 0, err
    assert {row["name"]: row["rank"] for row in json.loads(out)}["steady"] == 5
    bad = tmp_path / "bad.yaml"
    bad.write_text("items: [unclosed\n")
    code, _, err = run(["-f", str(bad)], capsys)
    assert code == 2 and "is not valid JSON or YAML: not valid YAML or JSON at line 2" in err


def test_an_explicitly_empty_related_list_means_no_related_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "pods.json", PODS)
    for empty in ([], pod_list()):
        code, out, err = run(
            ["-f", path, "--related", write(tmp_path, "r.json", empty), "--now", NOW_TEXT, "-o", "json"],
            capsys,
        )
        assert code == 0, err
        assert {row["rank"] for row in json.loads(out)} == {0}
    code, out, _ = run(
        ["-f", path, "--now", NOW_TEXT, "-o", "json"], capsys
    )  # not given: the pods themselves
    assert {row["name"]: row["rank"] for row in json.loads(out)}["steady"] == 2
    code, _, err = run(["-f", path, "--related", ""], capsys)
    assert code == 2 and "--related needs a file name" in err
