"""`spreadgate cluster --bare` as a subprocess, driven by kubectl; argument errors in-process.

The playground mode (CRD, webhook, controller) is driven by
`tests/e2e/test_playground_kubectl.py`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import error_on_file
from cluster_process import cluster_process
from kubectl_kit import KUBECTL
from polling import wait_until

from py_engine.cli import main

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def running_cluster(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    kubeconfig = tmp_path / "kubeconfig.yaml"
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "pools:\n"
        "  - {name: zone-a, count: 1, labels: {topology.kubernetes.io/zone: zone-a}}\n"
        "  - {name: zone-b, count: 1, labels: {topology.kubernetes.io/zone: zone-b}}\n"
    )
    args = ["--bare", "--kubeconfig-out", str(kubeconfig), "--nodes", str(nodes)]

    def up(seen: list[str]) -> bool:
        return any(line.startswith("kubeconfig: ") for line in seen)

    with cluster_process(args, up, timeout=30, stop_timeout=20) as (proc, seen):
        announced = next(line for line in seen if line.startswith("kubeconfig: "))
        assert Path(announced.split(": ", 1)[1].strip()) == kubeconfig
        assert any(line.startswith("spreadgate cluster: serving https://127.0.0.1:") for line in seen)
        yield kubeconfig, proc


def kubectl(kubeconfig: Path, *args: str) -> str:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "--request-timeout=20s", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def pods(kubeconfig: Path) -> list[dict[str, Any]]:
    return list(json.loads(kubectl(kubeconfig, "get", "pods", "-l", "app=x", "-o", "json"))["items"])


@pytest.mark.e2e
@pytest.mark.kubectl
def test_kubectl_drives_the_standalone_cluster(
    running_cluster: tuple[Path, subprocess.Popen[str]], tmp_path: Path
) -> None:
    kubeconfig, _ = running_cluster
    nodes = kubectl(kubeconfig, "get", "nodes", "-o", "name").split()
    assert nodes == ["node/zone-a-0", "node/zone-b-0"]
    # --bare: no CRD, so no WorkloadSpread resource and no webhook configuration.
    assert KUBECTL is not None
    missing = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "sgws"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode != 0 and "sgws" in missing.stderr
    assert kubectl(kubeconfig, "get", "mutatingwebhookconfigurations", "-o", "name").strip() == ""
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n"
        "    spec: {containers: [{name: c, image: nginx}]}\n"
    )
    assert "deployment.apps/x created" in kubectl(kubeconfig, "create", "-f", str(manifest))

    def running(n: int) -> Callable[[], bool]:
        return lambda: (
            sum(
                1
                for p in pods(kubeconfig)
                if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
            )
            == n
            and len(pods(kubeconfig)) == n
        )

    wait_until(running(2), 20, "2 running pods")
    assert "scaled" in kubectl(kubeconfig, "scale", "deployment", "x", "--replicas=3")
    wait_until(running(3), 20, "3 running pods")
    assert {p["spec"]["nodeName"] for p in pods(kubeconfig)} == {"zone-a-0", "zone-b-0"}
    assert "deleted" in kubectl(kubeconfig, "delete", "-f", str(manifest))
    wait_until(lambda: pods(kubeconfig) == [], 20, "pods to be garbage collected")
    assert json.loads(kubectl(kubeconfig, "get", "replicasets", "-o", "json"))["items"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "/nonexistent/pool.yaml"], "/nonexistent/pool.yaml: no such file"),
        (["--webhook-port", "70000"], "--webhook-port 70000 is out of range"),
        (["--faults", "pods:create:nonsense=1"], "--faults"),
        (["--port", "70000"], "out of range"),
        (["--ready-delay", "-1"], "--ready-delay must not be negative"),
        (["--kubeconfig-out", "/nonexistent/dir/kubeconfig"], "its folder does not exist"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spreadgate cluster: error: ") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"pools: [{name: a, count: lots}]\n", "count"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "binary data"),
        (b"pools: [\n", "not valid YAML or JSON at line 2"),
        (b"pools: []\n---\npools: []\n", "expected one node pool document, found 2"),
    ],
)
def test_bad_node_pool_content_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    err = error_on_file(tmp_path, capsys, "pool.yaml", content, "cluster", "--nodes")
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("mode", [[], ["--bare"]], ids=["playground", "bare"])
def test_port_in_use_exit_2(mode: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        assert main(["cluster", *mode, "--port", str(port)]) == 2
    assert "cannot serve on 127.0.0.1" in capsys.readouterr().err


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.e2e
@pytest.mark.kubectl
def test_playground_on_a_pinned_port_stops_on_sigterm(tmp_path: Path) -> None:
    port, webhook_port = free_port(), free_port()
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "py_engine.cli",
            "cluster",
            "--port",
            str(port),
            "--webhook-port",
            str(webhook_port),
            "--log-level",
            "info",
            "--log-format",
            "json",
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 60
        for (
            line
        ) in proc.stdout:  # the process prints its banner at once, then blocks: bounded by the deadline
            seen.append(line)
            if line.startswith("kubeconfig: ") or time.monotonic() > deadline:
                break
        assert f"spreadgate cluster: serving https://127.0.0.1:{port} with 3 node(s)\n" in seen, seen
        assert any(f"webhook at https://127.0.0.1:{webhook_port}" in line for line in seen), seen
        assert "workloadspreads.spreadgate.dev" in kubectl(kubeconfig, "get", "crd", "-o", "name")
        hooks = kubectl(
            kubeconfig, "get", "mutatingwebhookconfigurations,validatingwebhookconfigurations", "-o", "name"
        ).split()
        assert hooks == [
            "mutatingwebhookconfiguration.admissionregistration.k8s.io/spreadgate",
            "validatingwebhookconfiguration.admissionregistration.k8s.io/spreadgate",
        ]
        bad = tmp_path / "bad.yaml"
        bad.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "spreadgate.dev/v1alpha1",
                    "kind": "WorkloadSpread",
                    "metadata": {"name": "bad"},
                    "spec": {
                        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                        "subsets": [{"name": "a", "maxReplicas": "60%"}, {"name": "b", "maxReplicas": "60%"}],
                    },
                }
            )
        )
        refused = subprocess.run(
            [str(KUBECTL), "--kubeconfig", str(kubeconfig), "apply", "-f", str(bad)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert refused.returncode != 0 and "percentages add up to 120" in refused.stderr
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0 and "spreadgate cluster: stopping" in rest
        # --log-format json: the denial is one JSON object carrying its cause as a field.
        logged = [json.loads(line) for line in rest.splitlines() if line.startswith("{")]
        denials = [entry for entry in logged if entry["msg"] == "admission denied"]
        assert denials and "percentages add up to 120" in denials[0]["cause"], rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
