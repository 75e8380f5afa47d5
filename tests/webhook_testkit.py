"""Shared fixtures and helpers for the apiclient/, committer, service, webhook and e2e tests.

Import fixtures by name into a test module (`from webhook_testkit import kube_env`).

- `kube_env`  an embedded `ApiServer` served over HTTPS on 127.0.0.1, a kubeconfig for
              it and a `KubeClient`; the WorkloadSpread CRD (status subresource) is installed.
- `AnswersAtOnce`  for stub admission services: the asynchronous entry points the app uses
              under the real server answer with the synchronous ones' decision, at once.
- `StubValidation`  for stub apps: the validation port answering every review with one verdict.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import urllib3
from polling import wait_until

from benchmarks.kube_objects import workload_spread
from py_engine.apiclient import KubeClient
from py_engine.model.resource import SPREADS
from py_engine.resources import WORKLOADSPREAD_CRD, read_yaml
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.faults import FaultInjector
from py_engine.sim.http_server import RunningServer, serve_https
from py_engine.sim.tls import CertificateAuthority
from py_engine.validation.verdict import Verdict
from py_engine.workloadspread.admission.service import Answer, Decision

__all__ = ["SPREADS"]  # re-exported for the tests

SPREADS_PATH = "spreadgate.dev/v1alpha1/workloadspreads"

# The product's CRD, as shipped (the same source the stack and the benchmarks install).
CRD: dict[str, Any] = read_yaml(WORKLOADSPREAD_CRD)


class ReadyView:
    """The cluster view of a stub admission service: always ready (readiness is not under test)."""

    def ready(self) -> bool:
        return True


class AnswersAtOnce:
    """Base of a stub admission service: `mutate_pod_async` and `validate_pod_async` answer with
    `mutate_pod` and `validate_pod`, before returning (subclasses define those two). Its `view` is
    a `ReadyView` unless a subclass sets its own."""

    view: Any = ReadyView()

    def mutate_pod(self, request: Any) -> Decision:
        raise NotImplementedError

    def validate_pod(self, request: Any) -> Decision:
        raise NotImplementedError

    def mutate_pod_async(self, request: Any, answer: Answer) -> None:
        answer(partial(self.mutate_pod, request))

    def validate_pod_async(self, request: Any, answer: Answer) -> None:
        answer(partial(self.validate_pod, request))


class StubValidation:
    """The validation port of a stub app (webhook/endpoints.py, `Validation`): every WorkloadSpread
    and UnitedDeployment review gets `verdict` (allowed unless told), at once."""

    def __init__(self, verdict: Verdict | None = None) -> None:
        self.verdict = verdict or Verdict(True, "allowed")

    def review_workloadspread(self, request: Any) -> Verdict:
        return self.verdict

    def review_uniteddeployment(self, request: Any) -> Verdict:
        return self.verdict


spread = workload_spread  # the name the tests use


@dataclass
class KubeEnv:
    api: ApiServer
    server: RunningServer
    kubeconfig: str
    client: KubeClient
    ca: CertificateAuthority

    @property
    def faults(self) -> FaultInjector:
        return self.api.faults  # type: ignore[no-any-return]

    def new_client(self, **kwargs: Any) -> KubeClient:
        return KubeClient.load(self.kubeconfig, **kwargs)

    def write_subset_statuses(self, spread: str, statuses: list[dict[str, Any]]) -> None:
        """Store `statuses` as the `subsetStatuses` of spread `spread` in `default`, as the webhook's
        committer writes them (behind any controller's back)."""
        current = self.client.get(SPREADS, "default", spread)
        current["status"] = {"subsetStatuses": statuses}
        self.client.replace_status(SPREADS, "default", spread, current)


_CA: list[CertificateAuthority] = []


def shared_ca() -> CertificateAuthority:
    if not _CA:
        _CA.append(CertificateAuthority("spreadgate-webhook-test-ca"))
    return _CA[0]


@pytest.fixture
def kube_env(tmp_path: Path) -> Iterator[KubeEnv]:
    api = ApiServer(history_size=500, bookmark_interval=0.2)
    ca = shared_ca()
    server = serve_https(api, ca=ca)
    kubeconfig = server.write_kubeconfig(str(tmp_path / "kubeconfig"))
    api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
    client = KubeClient.load(kubeconfig, timeout=10)
    try:
        yield KubeEnv(api, server, kubeconfig, client, ca)
    finally:
        client.close()
        server.stop()
        api.close()
    assert server.errors == [], "unexpected server-side exceptions:\n" + "\n".join(server.errors)


# ---------------------------------------------------------------- end to end


@pytest.fixture
def env(kube_env: KubeEnv) -> KubeEnv:
    """`kube_env` under the short name the tests use (`env = webhook_testkit.env` in a module
    that also imports `kube_env`)."""
    return kube_env


ZONE = "topology.kubernetes.io/zone"


def webhook_https(maxsize: int = 1, *, block: bool = False, timeout: float = 30.0) -> urllib3.PoolManager:
    """HTTPS to the test webhooks (certificates of `shared_ca`): `maxsize` kept connections per
    host (`block`: a request waits for one instead of opening another), no retries, each
    request bounded by `timeout` seconds."""
    return urllib3.PoolManager(
        maxsize=maxsize,
        block=block,
        cert_reqs="CERT_REQUIRED",
        ca_cert_data=shared_ca().cert_pem,
        retries=False,
        timeout=urllib3.Timeout(total=timeout),
    )


def write_cert(directory: Path, ca: CertificateAuthority | None = None) -> tuple[str, str]:
    """A serving certificate for 127.0.0.1 from the shared CA, as tls.crt/tls.key files."""
    pair = (ca or shared_ca()).issue(
        dns_names=["localhost", "spreadgate-webhook.spreadgate-system.svc"], ip_addresses=["127.0.0.1"]
    )
    cert, key = directory / "tls.crt", directory / "tls.key"
    cert.write_text(pair.cert_pem)
    key.write_text(pair.key_pem)
    return str(cert), str(key)


def webhook_configs(url: str, *, timeout: int = 10, failure_policy: str = "Fail") -> list[dict[str, Any]]:
    """The mutating (pod CREATE) and validating (pod DELETE + eviction, spreads) configurations."""
    import base64

    bundle = base64.b64encode(shared_ca().cert_pem.encode()).decode()

    def hook(name: str, path: str, rules: list[dict[str, Any]], side_effects: str) -> dict[str, Any]:
        return {
            "name": name,
            "clientConfig": {"url": url + path, "caBundle": bundle},
            "rules": rules,
            "sideEffects": side_effects,
            "admissionReviewVersions": ["v1"],
            "failurePolicy": failure_policy,
            "timeoutSeconds": timeout,
        }

    def rule(operations: list[str], group: str, version: str, resource: str) -> dict[str, Any]:
        return {
            "operations": operations,
            "apiGroups": [group],
            "apiVersions": [version],
            "resources": [resource],
        }

    def configuration(kind: str, webhooks: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": "spreadgate"},
            "webhooks": webhooks,
        }

    pod_create = rule(["CREATE"], "", "v1", "pods")
    pod_delete, eviction = rule(["DELETE"], "", "v1", "pods"), rule(["CREATE"], "", "v1", "pods/eviction")
    spreads = rule(["CREATE", "UPDATE"], "spreadgate.dev", "v1alpha1", "workloadspreads")
    mutating = configuration(
        "MutatingWebhookConfiguration",
        [hook("mpod.spreadgate.dev", "/mutate/pods", [pod_create], "NoneOnDryRun")],
    )
    validating = configuration(
        "ValidatingWebhookConfiguration",
        [
            hook("vpod.spreadgate.dev", "/validate/pods", [pod_delete, eviction], "NoneOnDryRun"),
            hook("vws.spreadgate.dev", "/validate/workloadspreads", [spreads], "None"),
        ],
    )
    return [mutating, validating]


class WebhookProcess:
    """`spreadgate webhook` in a real subprocess on 127.0.0.1 (a free port), for tests that need
    several independent webhook processes or kill one. `extra` are more command-line flags."""

    def __init__(
        self, kubeconfig: str, cert: str, key: str, log_path: Path, *extra: str, start_timeout: float = 60
    ) -> None:
        self.log_path = log_path
        # Append mode: the child shares this file's offset, and `text()` seeks to 0 to read; without
        # O_APPEND a write landing between that seek and the read would overwrite the file's head.
        self.log = open(log_path, "a+b")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "py_engine.cli",
                "webhook",
                "--kubeconfig",
                kubeconfig,
                "--cert",
                cert,
                "--key",
                key,
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--threads",
                "64",
                "--disable-node-simulation",
                "--commit-timeout",
                "8",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        try:
            self.url: str = wait_until(self._url, start_timeout, f"webhook {log_path.stem} listening")
        except BaseException:
            self.stop()  # never leave an orphan process or an open log behind a failed start
            raise

    def _url(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"webhook exited: {self.text()}")
        m = re.search(r"serving on (https://\S+)", self.text())
        return m.group(1) if m else None

    def text(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """kill -9: no shutdown, in-flight requests die with the process."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


def without_subset_bound(crd: dict[str, Any]) -> dict[str, Any]:
    """`crd` as it was before the subset bound (no `maxItems` on any `subsets` list): objects stored
    under it reach the webhook and the controllers with more subsets than the bound allows."""
    bounded = copy.deepcopy(crd)

    def strip(schema: Any) -> None:
        if isinstance(schema, dict):
            for key, value in schema.items():
                if key == "subsets" and isinstance(value, dict):
                    value.pop("maxItems", None)
                strip(value)
        elif isinstance(schema, list):
            for item in schema:
                strip(item)

    strip(bounded.get("spec"))
    return bounded


@pytest.fixture
def webhook_processes() -> Iterator[list[WebhookProcess]]:
    """A list the test appends its `WebhookProcess`es to; each is stopped at teardown."""
    made: list[WebhookProcess] = []
    try:
        yield made
    finally:
        for p in made:
            p.stop()
