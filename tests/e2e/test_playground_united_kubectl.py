"""The README's UnitedDeployment playground recipe, run verbatim with kubectl.

`spreadgate cluster` with the example's shipped `--nodes` file, then the README's commands in
order: apply the ECS-then-serverless UnitedDeployment (and its HPA), read the subsets' replica
counts off the Deployments the controller made, and scale through `/scale` up and down. Every
wait is a poll with a deadline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playground_kit import Playground, assert_in_order, readme_section, running_playground, table
from polling import wait_until

NODES = "manifests/examples/nodes/ud-ecs-then-serverless.yaml"
START = f"spreadgate cluster --nodes {NODES} --kubeconfig-out /tmp/sgud.kubeconfig &"
APPLY = "kubectl apply -f manifests/examples/ud-ecs-then-serverless.yaml"
GET = "kubectl get sgud"
SUBSETS = "kubectl get deploy -L spreadgate.dev/subset-name"
SCALE_UP = "kubectl scale sgud/web-burst --replicas=10"
SCALE_DOWN = "kubectl scale sgud/web-burst --replicas=3"
COMMANDS = [START, APPLY, GET, SUBSETS, SCALE_UP, SCALE_DOWN]

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


@pytest.fixture
def playground(tmp_path: Path) -> Iterator[Playground]:
    with running_playground(tmp_path, "--nodes", NODES) as started:
        yield started


def ready_per_subset(pg: Playground, wanted: dict[str, str]) -> dict[str, str] | None:
    """SUBSET-NAME -> READY of the UnitedDeployment's Deployments, once it reads `wanted`."""
    rows = table(pg.run(SUBSETS))
    found = {row["SUBSET-NAME"]: row["READY"] for row in rows}
    return found if found == wanted else None


@pytest.mark.kubectl
def test_the_readme_united_session(playground: Playground) -> None:
    pg = playground
    out = pg.run(APPLY)
    assert "uniteddeployment.spreadgate.dev/web-burst created" in out
    assert "horizontalpodautoscaler.autoscaling/web-burst created" in out
    wait_until(
        lambda: ready_per_subset(pg, {"ecs": "4/4", "serverless": "2/2"}),
        60,
        "4 pods on ecs and 2 serverless",
    )
    row = table(pg.run(GET))[0]
    assert {key: row[key] for key in ("NAME", "DESIRED", "CURRENT", "READY")} == {
        "NAME": "web-burst",
        "DESIRED": "6",
        "CURRENT": "6",
        "READY": "6",
    }
    assert "uniteddeployment.spreadgate.dev/web-burst scaled" in pg.run(SCALE_UP)
    wait_until(lambda: ready_per_subset(pg, {"ecs": "4/4", "serverless": "6/6"}), 60, "the scale-up to 10")
    assert "uniteddeployment.spreadgate.dev/web-burst scaled" in pg.run(SCALE_DOWN)
    wait_until(lambda: ready_per_subset(pg, {"ecs": "3/3", "serverless": "0/0"}), 60, "the scale-down to 3")
    pods = pg.pods("app=web-burst")
    assert len(pods) == 3 and {p["spec"]["nodeName"] for p in pods} <= {"ecs-0", "ecs-1"}


def test_readme_shows_these_commands() -> None:
    section = readme_section()
    assert_in_order(section, COMMANDS)
