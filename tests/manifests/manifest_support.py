"""Rendering the kustomizations with kubectl and evaluating the rendered RBAC.

`render(path)` runs `kubectl kustomize` (Debian's kubectl, installed by
`.ci/run`); a missing kubectl fails the test with the install hint, since CI
has it. `Grants` expands (Cluster)Roles through their bindings into one
tuple per (service account, scope, group, resource, verb, name) and answers
"is this request allowed", the way the RBAC authorizer does for the subset of
rules the manifests use (no wildcards, no aggregation, no non-resource URLs).
`RecordingClient` is the product's `KubeClient` that also remembers every
request it sends, so a test can check each one against the rendered RBAC.
"""

from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml
from kubectl_kit import require_kubectl

from py_engine.apiclient import KubeClient

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"
KUSTOMIZATIONS = ("base", "overlays/cert-manager", "overlays/self-signed-ca", "overlays/opa-sidecar")
OVERLAYS = KUSTOMIZATIONS[1:]
NAMESPACE = "spreadgate-system"
WEBHOOK_SA = f"{NAMESPACE}/spreadgate-webhook"
CONTROLLER_SA = f"{NAMESPACE}/spreadgate-controller"
Obj = dict[str, Any]


def kubectl() -> str:
    """kubectl's path: the manifests are rendered with `kubectl kustomize` (tests/kubectl_kit.py)."""
    return require_kubectl()


@functools.cache
def _render(path: str) -> tuple[str, ...]:
    result = subprocess.run(
        [kubectl(), "kustomize", str(MANIFESTS / path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {path} failed:\n{result.stderr}")
    return tuple(yaml.safe_dump(d) for d in yaml.safe_load_all(result.stdout) if d)


def render(path: str) -> list[Obj]:
    """The rendered objects (fresh copies: tests may edit them)."""
    return [yaml.safe_load(text) for text in _render(path)]


def find(docs: Iterable[Obj], kind: str, name: str | None = None) -> Obj:
    matches = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def container(deployment: Obj, name: str) -> Obj:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name)


# ------------------------------------------------------------------- RBAC


@dataclass(frozen=True)
class Grant:
    account: str  # namespace/name
    scope: str  # "cluster" or a namespace
    group: str
    resource: str
    verb: str
    name: str  # "*" when not restricted by resourceNames


def rendered_grants(docs: list[Obj]) -> set[Grant]:
    roles = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
    }
    out: set[Grant] = set()
    for binding in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        ref = binding["roleRef"]
        binding_ns = binding["metadata"].get("namespace", "")
        role = roles.get((ref["kind"], binding_ns if ref["kind"] == "Role" else "", ref["name"]))
        assert role is not None, f"{binding['kind']} {binding['metadata']['name']} refers to a missing {ref}"
        scope = "cluster" if binding["kind"] == "ClusterRoleBinding" else binding_ns
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount", subject
            account = f"{subject['namespace']}/{subject['name']}"
            for rule in role.get("rules") or []:
                assert "nonResourceURLs" not in rule, rule
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            for name in rule.get("resourceNames") or ["*"]:
                                out.add(Grant(account, scope, group, resource, verb, name))
    return out


def documented_grants(overlay: str) -> set[Grant]:
    doc = yaml.safe_load((MANIFESTS / "rbac-grants.yaml").read_text(encoding="utf-8"))
    out: set[Grant] = set()
    for account, entries in doc["grants"].items():
        for e in entries:
            if "overlays" in e and overlay.rsplit("/", 1)[-1] not in e["overlays"]:
                continue
            for verb in e["verbs"]:
                for name in e.get("resourceNames") or ["*"]:
                    out.add(Grant(account, e["scope"], e["apiGroup"], e["resource"], verb, name))
    return out


@dataclass(frozen=True)
class ApiRequest:
    verb: str
    group: str
    resource: str  # with "/subresource"
    namespace: str | None
    name: str | None


def classify(method: str, path: str, query: list[tuple[str, str]] | None) -> ApiRequest | None:
    """The RBAC attributes of a REST request; None for discovery (non-resource) paths."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None  # /api/v1, /apis/<group>/<version>: discovery
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else None
    if len(rest) >= 3:
        resource += "/" + rest[2]
    watching = any(k == "watch" and v in ("true", "True", "1") for k, v in query or [])
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method)
    if method == "GET":
        verb = "get" if name else ("watch" if watching else "list")
    if method == "DELETE" and name is None:
        verb = "deletecollection"
    assert verb is not None, method
    return ApiRequest(verb, group, resource, namespace, name)


def allowed(grants: set[Grant], account: str, req: ApiRequest) -> bool:
    for g in grants:
        if g.account != account or g.group != req.group or g.resource != req.resource or g.verb != req.verb:
            continue
        if g.scope != "cluster" and g.scope != req.namespace:
            continue
        if g.name == "*" or g.name == req.name:
            return True
    return False


class RecordingClient(KubeClient):
    """The product's client, remembering every request (method, path, query) it sends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests: list[tuple[str, str, list[tuple[str, str]] | None]] = []
        self._lock = threading.Lock()

    def _open(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        query = args[0] if args else kwargs.get("query")
        with self._lock:
            self.requests.append((method, path.split("?")[0], list(query or [])))
        return super()._open(method, path, *args, **kwargs)

    def classified(self) -> list[ApiRequest]:
        with self._lock:
            recorded = list(self.requests)
        return [r for r in (classify(*entry) for entry in recorded) if r is not None]
