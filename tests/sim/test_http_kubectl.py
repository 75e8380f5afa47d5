"""kubectl (the real binary) against the emulator, using the written kubeconfig."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from kubectl_kit import KUBECTL, SPREAD_COLUMNS

from py_engine.sim.apiserver import ApiServer

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: from-kubectl
  labels: {app: cli}
spec:
  containers:
  - name: c
    image: nginx:1
"""


@pytest.mark.kubectl
def test_kubectl_get_create_delete(kubeconfig: str, apiserver: ApiServer, tmp_path: Path) -> None:
    assert KUBECTL is not None
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}  # kubectl caches under $HOME/.kube

    def kubectl(*args: str) -> str:
        done = subprocess.run(
            [KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    listing = kubectl("get", "namespaces")
    assert listing.split()[:3] == ["NAME", "STATUS", "AGE"]
    assert {"default", "kube-system", "kube-node-lease", "kube-public"} <= set(listing.split())
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD_YAML)
    assert "pod/from-kubectl created" in kubectl("create", "-f", str(manifest))
    assert apiserver.get("v1/pods", "default", "from-kubectl")["metadata"]["labels"] == {"app": "cli"}
    pods = json.loads(kubectl("get", "pods", "-o", "json"))
    assert [p["metadata"]["name"] for p in pods["items"]] == ["from-kubectl"]
    assert pods["items"][0]["status"]["phase"] == "Pending"
    assert 'pod "from-kubectl" deleted' in kubectl("delete", "pod", "from-kubectl")
    assert apiserver.list("v1/pods", "default")["items"] == []
    failed = subprocess.run(
        [KUBECTL, "get", "pod", "missing"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert failed.returncode != 0 and 'pods "missing" not found' in failed.stderr


@pytest.mark.timeout(120)
@pytest.mark.kubectl
def test_kubectl_prints_crd_columns_and_explains_the_crd(
    kubeconfig: str, apiserver: ApiServer, tmp_path: Path
) -> None:
    from py_engine.assembled_stack import load_crd

    assert KUBECTL is not None
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}

    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    apiserver.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, load_crd())
    manifest = Path(__file__).resolve().parents[2] / "manifests" / "examples" / "zones-20-20-60.yaml"
    applied = kubectl("apply", "-f", str(manifest))
    assert applied.returncode == 0 and "workloadspread.spreadgate.dev/api-zones created" in applied.stdout, (
        applied.stderr
    )
    listing = kubectl("get", "sgws").stdout.splitlines()
    assert listing[0].split() == SPREAD_COLUMNS
    assert listing[1].split()[:3] == ["api-zones", "Deployment", "api"]
    explained = kubectl("explain", "sgws.spec.subsets")
    assert explained.returncode == 0, explained.stderr
    assert "KIND:       WorkloadSpread" in explained.stdout and "maxReplicas" in explained.stdout
    assert "Ordered subsets" in explained.stdout
    # Re-applying an unchanged manifest is a no-op patch (JSON merge patch for a custom resource).
    again = kubectl("apply", "-f", str(manifest))
    assert again.returncode == 0 and "unchanged" in again.stdout, again.stderr
    # Built-in kinds carry no schema in the emulator: explain says so rather than inventing one.
    assert kubectl("explain", "pods").returncode != 0
