"""`spreadgate cluster` as a playground, driven by kubectl.

Exactly as README's "The embedded cluster: a playground for kubectl" shows.

One `spreadgate cluster` process (emulator, CRD, webhook, controller), then the
README's commands in order: apply the 20/20/60 example spread, create and
scale its Deployment, read the subsets off `kubectl get pods -o wide -L zone`
and the printer columns off `kubectl get sgws`, drain a node (the evictions
give the subset's slots back, so the replacements are admitted into the same
subset and wait Pending on the cordoned zone), then scale down and check that
the pods deleted are exactly the ones `spreadgate rank` predicted. Every wait
is a poll with a deadline.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubectl_kit import SPREAD_COLUMNS
from playground_kit import Playground, assert_in_order, readme_section, running_playground, table
from polling import wait_until

MATCHED = "spreadgate.dev/matched-workloadspread"
COST = "controller.kubernetes.io/pod-deletion-cost"

# The README's commands, in order (test_readme_shows_these_commands keeps them in step).
APPLY = "kubectl apply -f manifests/examples/zones-20-20-60.yaml"
CREATE = "kubectl create deployment api --image=nginx --replicas=5"
SCALE_UP = "kubectl scale deployment api --replicas=10"
PODS = "kubectl get pods -o wide -L zone"
SPREADS = "kubectl get sgws"
DRAIN = "kubectl drain zone-a-0 --ignore-daemonsets"
RANK = "kubectl get pods -l app=api -o json | spreadgate rank - --count 5 -o names"
SCALE_DOWN = "kubectl scale deployment api --replicas=5"
STATE = "kubectl get sgws,deploy,rs,pods,nodes -o json | spreadgate reconcile --state - -o json"
COMMANDS = [APPLY, CREATE, SCALE_UP, PODS, SPREADS, DRAIN, RANK, SCALE_DOWN, STATE]

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


@pytest.fixture
def playground(tmp_path: Path) -> Iterator[Playground]:
    with running_playground(tmp_path) as started:
        yield started


def subset(pod: dict[str, Any]) -> str | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED)
    return str(json.loads(raw)["subset"]) if raw else None


def live(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def settled(pg: Playground, running: int, pending: int) -> list[dict[str, Any]] | None:
    """The pods, once `running` run and `pending` wait, none terminates, and the controller has
    nothing left to write: every cost an offline sync (`spreadgate reconcile`) computes is the one
    the pod carries."""
    pods = pg.pods("app=api")
    phases = [p["status"].get("phase") for p in pods]
    if (
        len(live(pods)) != len(pods)
        or phases.count("Running") != running
        or phases.count("Pending") != pending
    ):
        return None
    plan = json.loads(pg.run(STATE))
    carried = {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(COST) for p in pods}
    wanted = {name: plan["podDeletionCost"].get(name) for name in carried}
    return pods if carried == wanted and all(carried.values()) else None


def by_subset(pods: list[dict[str, Any]]) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for p in live(pods):
        counts[subset(p)] = counts.get(subset(p), 0) + 1
    return counts


@pytest.mark.kubectl
def test_the_readme_session(playground: Playground) -> None:
    pg = playground
    assert any(line.startswith("kubeconfig: ") for line in pg.output)
    assert "workloadspread.spreadgate.dev/api-zones created" in pg.run(APPLY)
    assert "deployment.apps/api created" in pg.run(CREATE)
    pods = wait_until(lambda: settled(pg, 5, 0), 60, "5 running pods")
    assert by_subset(pods) == {"zone-a": 1, "zone-b": 1, "zone-c": 3}
    assert "deployment.apps/api scaled" in pg.run(SCALE_UP)
    pods = wait_until(lambda: settled(pg, 10, 0), 60, "10 running pods")
    assert by_subset(pods) == {"zone-a": 2, "zone-b": 2, "zone-c": 6}

    # -o wide shows each pod's node; -L zone the label its subset's patch set: the two agree.
    rows = table(pg.run(PODS))
    assert {"NAME", "READY", "STATUS", "IP", "NODE", "ZONE"} <= set(rows[0])
    assert len(rows) == 10
    for row in rows:
        assert row["STATUS"] == "Running" and row["READY"] == "1/1"
        assert row["NODE"] == f"zone-{row['ZONE']}-0"

    # The CRD's printer columns, served as a Table (FIRST-SUBSET-PODS: the first subset's pods).
    spreads = table(pg.run(SPREADS))
    assert list(spreads[0]) == SPREAD_COLUMNS
    assert {k: spreads[0][k] for k in ("NAME", "WORKLOAD-KIND", "WORKLOAD", "FIRST-SUBSET-PODS")} == {
        "NAME": "api-zones",
        "WORKLOAD-KIND": "Deployment",
        "WORKLOAD": "api",
        "FIRST-SUBSET-PODS": "2",
    }

    # Drain: the evictions give zone-a's slots back, so the replacements are admitted into zone-a
    # again and wait Pending on the cordoned node (Fixed strategy: nobody moves them).
    zone_a = {p["metadata"]["name"] for p in pods if subset(p) == "zone-a"}
    out = pg.run(DRAIN)
    assert "node/zone-a-0 drained" in out and all(f"pod/{name} evicted" in out for name in zone_a)
    pods = wait_until(lambda: settled(pg, 8, 2), 60, "2 replacements pending")
    pending = [p for p in pods if p["status"].get("phase") == "Pending"]
    assert {subset(p) for p in pending} == {"zone-a"} and not zone_a & {p["metadata"]["name"] for p in pods}
    assert all(p["metadata"]["labels"].get("zone") == "a" for p in pending)
    assert by_subset(pods) == {"zone-a": 2, "zone-b": 2, "zone-c": 6}
    assert {r["NAME"]: r["STATUS"] for r in table(pg.run(PODS))} == {
        p["metadata"]["name"]: p["status"]["phase"] for p in pods
    }

    # Scale down: the ReplicaSet controller deletes exactly the pods `spreadgate rank` names.
    predicted = pg.run(RANK).split()
    assert len(predicted) == 5 and {p["metadata"]["name"] for p in pending} <= set(predicted)
    before = {p["metadata"]["name"] for p in pods}
    assert "deployment.apps/api scaled" in pg.run(SCALE_DOWN)
    after = wait_until(lambda: settled(pg, 5, 0), 60, "the scale-down to 5")
    deleted = before - {p["metadata"]["name"] for p in after}
    assert sorted(deleted) == sorted(predicted)
    assert by_subset([p for p in pods if p["metadata"]["name"] in deleted]) == {"zone-a": 2, "zone-c": 3}
    assert by_subset(after) == {"zone-b": 2, "zone-c": 3}


def test_readme_shows_these_commands() -> None:
    section = readme_section()
    assert_in_order(section, COMMANDS)
    assert "spreadgate cluster --kubeconfig-out /tmp/sg.kubeconfig" in section
    assert "export KUBECONFIG=/tmp/sg.kubeconfig" in section
