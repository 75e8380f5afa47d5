"""Every example in manifests/examples/ says how to run it on the playground, and the runnable ones run.

Each example carries a `# Playground:` line naming the shipped `--nodes` file it needs (or the
default nodes), or saying why it is not for the playground. The runnable ones are applied here
on the embedded stack with those nodes, plus the workload the line tells the user to create,
and every pod they make must be placed: an example that leaves pods Pending on the nodes it
names is a broken example.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from py_engine.assembled_stack import Stack
from py_engine.sim.nodepool import default_pool, nodes_from_description

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"
PLAYGROUND = re.compile(r"^# Playground: (.*)$", re.M)
NODES = re.compile(r"--nodes (manifests/examples/nodes/[\w.-]+\.yaml)")
MATCHED = "spreadgate.dev/matched-workloadspread"
CREATE = re.compile(r"kubectl create deployment (\S+) --image=(\S+)(?: --replicas=(\d+))?")
RESOURCES = {
    ("apps/v1", "Deployment"): "apps/v1/deployments",
    ("spreadgate.dev/v1alpha1", "WorkloadSpread"): "spreadgate.dev/v1alpha1/workloadspreads",
    ("spreadgate.dev/v1beta1", "UnitedDeployment"): "spreadgate.dev/v1beta1/uniteddeployments",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "autoscaling/v2/horizontalpodautoscalers",
}


def _playground_line(example: Path) -> str:
    found = PLAYGROUND.search(example.read_text(encoding="utf-8"))
    assert found, f"{example.name} has no '# Playground:' line"
    return found.group(1)


def _nodes(line: str) -> list[dict[str, Any]]:
    named = NODES.search(line)
    if named is None:
        return default_pool()
    path = EXAMPLES.parents[1] / named.group(1)
    return nodes_from_description(yaml.safe_load(path.read_text(encoding="utf-8")), source=str(path))


def _deployment(name: str, image: str, replicas: int) -> dict[str, Any]:
    """What `kubectl create deployment NAME --image=IMAGE --replicas=N` creates."""
    labels = {"app": name}
    container = image.rsplit("/", 1)[-1].split(":")[0]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": container, "image": image}]},
            },
        },
    }


def test_every_example_says_how_to_run_it_on_the_playground() -> None:
    examples = sorted(EXAMPLES.glob("*.yaml"))
    assert examples
    for example in examples:
        line = _playground_line(example)
        named = NODES.search(line)
        if named is not None:
            assert _nodes(line), f"{example.name}: {named.group(1)} holds no node"


RUNNABLE = [
    "elastic-pool.yaml",
    "spot-fallback-adaptive.yaml",
    "ud-cpu-platforms.yaml",
    "ud-ecs-then-serverless.yaml",
    "zones-20-20-60.yaml",
]


@pytest.mark.parametrize("name", RUNNABLE)
def test_the_example_places_every_pod_on_the_nodes_it_names(name: str) -> None:
    example = EXAMPLES / name
    line = _playground_line(example)
    objects = list(yaml.safe_load_all(example.read_text(encoding="utf-8")))
    with Stack(_nodes(line)) as stack:
        for obj in objects:
            stack.create(RESOURCES[(obj["apiVersion"], obj["kind"])], obj)
        created = CREATE.search(example.read_text(encoding="utf-8"))  # the header's workload, if any
        if created is not None:
            stack.create(
                "apps/v1/deployments",
                _deployment(created.group(1), created.group(2), int(created.group(3) or 1)),
            )
        stack.settle(max_advance=900)  # room for an Adaptive reschedule after 60 s
        pods = stack.api.list("v1/pods", "default")["items"]
        assert pods, f"{name}: no pod was created"
        pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        assert pending == [], f"{name}: pods left Pending on its nodes: {pending}"
        if any(obj["kind"] == "WorkloadSpread" for obj in objects):
            # On nodes no subset can use, the webhook admits pods without a subset: placed, but
            # not what the example shows.
            unmatched = [
                p["metadata"]["name"] for p in pods if MATCHED not in (p["metadata"].get("annotations") or {})
            ]
            assert unmatched == [], f"{name}: pods outside every subset: {unmatched}"
