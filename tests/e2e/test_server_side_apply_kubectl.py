"""`kubectl apply --server-side` on the shipped examples, against the assembled stack.

One stack (the playground's: CRDs, webhooks, controllers, HTTPS) serves the whole module; every
example in manifests/examples/ that says it runs on the playground is applied server-side, then
applied again with a field changed, then made to conflict with another manager (`kubectl scale`,
`--field-manager=other`) and forced. kubectl prints kube-apiserver's conflict message itself, so
the text checked here is what a user sees on a real cluster.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_kit import require_kubectl

from py_engine.assembled_stack import Stack
from py_engine.sim.nodepool import default_pool

pytestmark = [pytest.mark.e2e, pytest.mark.kubectl, pytest.mark.timeout(180)]
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples"
PLAYGROUND = re.compile(r"^# Playground: (.*)$", re.M)
RESOURCE = {
    "Deployment": "apps/v1/deployments",
    "WorkloadSpread": "spreadgate.dev/v1alpha1/workloadspreads",
    "UnitedDeployment": "spreadgate.dev/v1beta1/uniteddeployments",
    "HorizontalPodAutoscaler": "autoscaling/v2/horizontalpodautoscalers",
}


def playground_examples() -> list[Path]:
    """The examples whose `# Playground:` line says they run there (the others say why not)."""
    out = []
    for example in sorted(EXAMPLES.glob("*.yaml")):
        line = PLAYGROUND.search(example.read_text(encoding="utf-8"))
        if line is not None and not line.group(1).startswith("not for the playground"):
            out.append(example)
    return out


class Kubectl:
    def __init__(self, stack: Stack, home: Path) -> None:
        self.stack = stack
        self.env = {**os.environ, "KUBECONFIG": str(stack.cluster.kubeconfig_path), "HOME": str(home)}
        self.kubectl = require_kubectl()
        self.home = home

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.kubectl, *args], env=self.env, capture_output=True, text=True, timeout=60, check=False
        )

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    def get(self, kind: str, name: str) -> dict[str, Any]:
        """The stored object, read in process (quicker than one more kubectl run)."""
        return self.stack.api.get(RESOURCE[kind], "default", name)

    def write(self, name: str, docs: list[dict[str, Any]]) -> str:
        path = self.home / name
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
        return str(path)


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    require_kubectl()
    with Stack(default_pool()) as stack:
        runner = Kubectl(stack, tmp_path_factory.mktemp("ssa-kubectl"))
        for example in playground_examples():
            runner.ok("apply", "--server-side", "-f", str(example))
        yield runner


def docs_of(example: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((EXAMPLES / example).read_text(encoding="utf-8")))


def appliers(obj: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
        for e in obj["metadata"]["managedFields"]
    }


def test_every_playground_example_applies_server_side_again_changed_and_back(kubectl: Kubectl) -> None:
    examples = playground_examples()
    assert {e.name for e in examples} >= {
        "elastic-pool.yaml",
        "spot-fallback-adaptive.yaml",
        "ud-cpu-platforms.yaml",
        "ud-ecs-then-serverless.yaml",
        "zones-20-20-60.yaml",
    }
    for example in examples:
        docs = list(yaml.safe_load_all(example.read_text(encoding="utf-8")))
        before = [kubectl.get(d["kind"], d["metadata"]["name"]) for d in docs]
        for doc, obj in zip(docs, before, strict=True):
            assert ("kubectl", "Apply", "") in appliers(obj), f"{example.name}: {doc['kind']}"
        again = kubectl.ok("apply", "--server-side", "-f", str(example))
        assert again.count("serverside-applied") == len(docs), again
        for doc, obj in zip(docs, before, strict=True):
            # An unchanged configuration writes nothing.
            after = kubectl.get(doc["kind"], doc["metadata"]["name"])
            assert after["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"], example.name
        labelled = [
            {
                **d,
                "metadata": {
                    **d["metadata"],
                    "labels": {**d["metadata"].get("labels", {}), "changed": "yes"},
                },
            }
            for d in docs
        ]
        kubectl.ok("apply", "--server-side", "-f", kubectl.write(f"labelled-{example.name}", labelled))
        for doc in docs:
            assert kubectl.get(doc["kind"], doc["metadata"]["name"])["metadata"]["labels"]["changed"] == "yes"
        # Applied again without it: the label kubectl owned alone is removed, nothing else changes.
        kubectl.ok("apply", "--server-side", "-f", str(example))
        for doc, obj in zip(docs, before, strict=True):
            after = kubectl.get(doc["kind"], doc["metadata"]["name"])
            assert "changed" not in (after["metadata"].get("labels") or {}), example.name
            assert after["spec"] == obj["spec"], example.name


def test_a_changed_field_then_a_scale_conflict_then_force(kubectl: Kubectl) -> None:
    deployment, spread = docs_of("elastic-pool.yaml")
    deployment["spec"]["replicas"] = 100
    changed = kubectl.write("elastic-pool-100.yaml", [deployment, spread])
    assert "deployment.apps/web serverside-applied" in kubectl.ok("apply", "--server-side", "-f", changed)
    assert kubectl.get("Deployment", "web")["spec"]["replicas"] == 100
    kubectl.ok("scale", "deployment/web", "--replicas=7")
    deployment["spec"]["replicas"] = 90
    conflicting = kubectl.write("elastic-pool-90.yaml", [deployment])
    refused = kubectl.run("apply", "--server-side", "-f", conflicting)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        "error: Apply failed with 1 conflict: "
        'conflict with "kubectl" with subresource "scale" using apps/v1: '
        ".spec.replicas\n"
    )
    assert "--force-conflicts" in refused.stderr
    assert kubectl.get("Deployment", "web")["spec"]["replicas"] == 7
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", conflicting)
    forced = kubectl.get("Deployment", "web")
    assert forced["spec"]["replicas"] == 90
    assert appliers(forced)[("kubectl", "Apply", "")]["f:spec"]["f:replicas"] == {}
    assert ("kubectl", "Update", "scale") not in appliers(forced)  # it owned nothing else


def test_another_field_manager_conflicts_on_a_list_map_item_field(kubectl: Kubectl) -> None:
    (spread,) = docs_of("zones-20-20-60.yaml")
    spread["spec"]["subsets"][0]["maxReplicas"] = "30%"
    spread["spec"]["subsets"][2]["maxReplicas"] = "50%"
    path = kubectl.write("zones-30.yaml", [spread])
    refused = kubectl.run("apply", "--server-side", "--field-manager=other", "-f", path)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        'error: Apply failed with 2 conflicts: conflicts with "kubectl":\n'
        '- .spec.subsets[name="zone-a"].maxReplicas\n- .spec.subsets[name="zone-c"].maxReplicas\n'
    )
    kubectl.ok("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", path)
    forced = kubectl.get("WorkloadSpread", "api-zones")
    assert [s.get("maxReplicas") for s in forced["spec"]["subsets"]] == ["30%", "20%", "50%"]
    owners = appliers(forced)
    subsets = owners[("other", "Apply", "")]["f:spec"]["f:subsets"]
    assert subsets['k:{"name":"zone-a"}']["f:maxReplicas"] == {}
    assert (
        "f:maxReplicas" not in owners[("kubectl", "Apply", "")]["f:spec"]["f:subsets"]['k:{"name":"zone-a"}']
    )


def test_admission_and_dry_run_apply_to_server_side_applies(kubectl: Kubectl) -> None:
    invalid = EXAMPLES / "invalid" / "percent-sum-over-100.yaml"
    refused = kubectl.run("apply", "--server-side", "-f", str(invalid))
    assert (
        refused.returncode == 1
        and 'admission webhook "vws.spreadgate.dev" denied the request' in refused.stderr
    )
    name = yaml.safe_load(invalid.read_text(encoding="utf-8"))["metadata"]["name"]
    assert kubectl.run("get", "sgws", name).returncode == 1
    (spread,) = docs_of("spot-fallback-adaptive.yaml")
    spread["spec"]["scheduleStrategy"]["adaptive"] = {"rescheduleCriticalSeconds": 120}
    path = kubectl.write("spot-120.yaml", [spread])
    out = kubectl.ok("apply", "--server-side", "--dry-run=server", "-f", path)
    assert "serverside-applied (server dry run)" in out
    stored = kubectl.get("WorkloadSpread", "worker-spot")["spec"]["scheduleStrategy"]
    assert stored["adaptive"]["rescheduleCriticalSeconds"] == 60


def test_switching_from_client_side_apply_is_no_conflict(kubectl: Kubectl) -> None:
    deployment = docs_of("elastic-pool.yaml")[0]
    deployment["metadata"]["name"] = "web-csa"
    kubectl.ok("apply", "-f", kubectl.write("csa.yaml", [deployment]))
    deployment["spec"]["replicas"] = 3
    out = kubectl.ok("apply", "--server-side", "-f", kubectl.write("csa-3.yaml", [deployment]))
    assert "deployment.apps/web-csa serverside-applied" in out
    switched = kubectl.get("Deployment", "web-csa")
    assert switched["spec"]["replicas"] == 3
    assert appliers(switched)[("kubectl", "Apply", "")]["f:spec"]["f:replicas"] == {}
    last = json.loads(switched["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3  # kept in step, so a later client-side apply still works
