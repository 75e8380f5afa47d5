"""`kubectl auth can-i`, `kubectl auth whoami` and `kubectl --as` (the real binary) against the emulator."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.kube_objects import role_binding
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer
from py_engine.sim.identity import UserInfo

KUBECTL = shutil.which("kubectl")
RBAC = "rbac.authorization.k8s.io/v1"
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (Debian package kubernetes-client)"),
]
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def _runner(kubeconfig: str, home: Path) -> Kubectl:
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(home)}  # kubectl caches under $HOME/.kube

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        return subprocess.run(
            [KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    return run


def _grant(api: ApiServer) -> None:
    api.create("v1/namespaces", None, {"metadata": {"name": "team-a"}})
    api.create(
        f"{RBAC}/rolebindings", "team-a", role_binding("devs-edit", "edit", "devs", subject_kind="Group")
    )
    api.create(
        f"{RBAC}/roles",
        "team-a",
        {
            "metadata": {"name": "one-secret"},
            "rules": [
                {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["tls"], "verbs": ["get"]}
            ],
        },
    )
    alice = role_binding("alice-one-secret", "one-secret", "alice", role_kind="Role")
    api.create(f"{RBAC}/rolebindings", "team-a", alice)


def test_can_i_as_the_admin_and_as_impersonated_users(
    kubeconfig: str, apiserver: ApiServer, tmp_path: Path
) -> None:
    kubectl = _runner(kubeconfig, tmp_path)
    _grant(apiserver)
    admin = kubectl("auth", "can-i", "delete", "nodes")
    assert (admin.returncode, admin.stdout.strip()) == (0, "yes"), admin.stderr
    assert kubectl("auth", "can-i", "*", "*").stdout.strip() == "yes"

    def can(*args: str) -> str:
        done = kubectl("auth", "can-i", *args)
        assert done.returncode in (0, 1), done.stderr
        answer = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
        assert (done.returncode == 0) == (answer == "yes"), (done.stdout, done.stderr)
        return answer

    assert can("create", "deployments", "-n", "team-a", "--as", "alice", "--as-group", "devs") == "yes"
    assert can("create", "deployments", "-n", "default", "--as", "alice", "--as-group", "devs") == "no"
    assert can("create", "deployments", "-n", "team-a", "--as", "alice") == "no"  # not in devs
    assert (
        can(
            "update",
            "deployments.apps",
            "--subresource",
            "scale",
            "-n",
            "team-a",
            "--as",
            "bob",
            "--as-group",
            "devs",
        )
        == "yes"
    )
    assert can("create", "rolebindings", "-n", "team-a", "--as", "bob", "--as-group", "devs") == "no"
    assert can("get", "secrets/tls", "-n", "team-a", "--as", "alice") == "yes"
    assert can("get", "secrets/other", "-n", "team-a", "--as", "alice") == "no"
    assert can("get", "/healthz", "--as", "alice") == "yes"
    assert can("get", "/metrics", "--as", "alice") == "no"
    assert can("list", "pods", "-n", "team-a", "--as", "system:serviceaccount:team-a:builder") == "no"
    assert (
        can(
            "list",
            "pods",
            "-n",
            "team-a",
            "--as",
            "system:serviceaccount:team-a:builder",
            "--as-group",
            "devs",
        )
        == "yes"
    )

    listing = kubectl("auth", "can-i", "--list", "-n", "team-a", "--as", "alice")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert any(
        line.split()[:2] == ["secrets", "[]"] and "[tls]" in line and "[get]" in line for line in lines
    )
    assert any(line.split()[:1] == ["selfsubjectaccessreviews.authorization.k8s.io"] for line in lines)
    assert not any(line.startswith("deployments.apps") for line in lines)

    whoami = kubectl(
        "auth", "whoami", "--as", "alice", "--as-group", "devs", "-o", "jsonpath={.status.userInfo}"
    )
    assert whoami.returncode == 0, whoami.stderr
    assert (
        '"username":"alice"' in whoami.stdout and '"groups":["devs","system:authenticated"]' in whoami.stdout
    )


def test_kubectl_as_is_authorized_and_denials_read_like_a_real_cluster(
    kubeconfig: str, apiserver: ApiServer, https_server: RunningServer, tmp_path: Path
) -> None:
    kubectl = _runner(kubeconfig, tmp_path)
    _grant(apiserver)
    made = kubectl("create", "configmap", "cfg", "-n", "team-a", "--as", "alice", "--as-group", "devs")
    assert made.returncode == 0, made.stderr
    assert apiserver.get("v1/configmaps", "team-a", "cfg")["metadata"]["name"] == "cfg"
    denied = kubectl("get", "pods", "-n", "default", "--as", "alice", "--as-group", "devs")
    assert denied.returncode != 0
    assert (
        'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API '
        'group "" in the namespace "default"'
    ) in denied.stderr
    # A namespace user's own kubeconfig (a token for alice) cannot impersonate.
    alice_config = https_server.write_kubeconfig(
        str(tmp_path / "alice"),
        "team-a",
        token=https_server.issue_token(UserInfo("alice", ("devs",))),
        user_name="alice",
    )
    as_alice = _runner(alice_config, tmp_path)
    assert as_alice("get", "configmaps").returncode == 0
    refused = as_alice("get", "configmaps", "--as", "bob")
    assert refused.returncode != 0
    assert (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the '
        "cluster scope"
    ) in refused.stderr


def test_the_documented_rbac_commands_do_what_their_comments_say(kubeconfig: str, tmp_path: Path) -> None:
    """docs/embedded-cluster.md's `kubectl` block under "RBAC is enforced in the playground too".

    Line by line."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "embedded-cluster.md").read_text(encoding="utf-8")
    block = (
        doc.split("RBAC is enforced in the playground too", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    )
    kubectl = _runner(kubeconfig, tmp_path)
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) >= 5
    for line in lines:
        command, _, comment = line.partition("#")
        args = shlex.split(command)
        assert args[0] == "kubectl", line
        done = kubectl(*args[1:])
        expected = comment.strip()
        if expected in ("yes", "no"):
            assert done.stdout.strip() == expected, (line, done.stdout, done.stderr)
        elif expected.startswith("Error from server (Forbidden)"):
            assert done.returncode != 0 and expected.rstrip(". ") in done.stderr, (line, done.stderr)
        else:
            assert done.returncode == 0, (line, done.stderr)
