"""Shared fixtures for the embedded API server (stable names, use freely).

- `sim_ca`          session CertificateAuthority (issue webhook certs with it).
- `apiserver`       a fresh in-process `ApiServer` (closed at teardown); watch history of
                    500 events and 0.2 s bookmarks, so 410/bookmark tests stay fast.
- `https_server`    `RunningServer` serving `apiserver` on 127.0.0.1 (stopped at teardown).
- `kubeconfig`      path of a kubeconfig written by `https_server` (CA data embedded).
- `k8s_client`      official `kubernetes.client.ApiClient` loaded from `kubeconfig`.
- `core_v1`, `apps_v1`, `custom_objects`   API objects on `k8s_client`.
- `webhook_stub`    a running `WebhookStub` (allow-all; `set_decide` to change) whose
                    certificate also covers `stub.spreadgate-system.svc`.
- `deadline_poll`   `deadline_poll(cond, timeout=5, what="...")`: poll with a deadline.

Every fixture closes what it opens (sockets, threads), since warnings are errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from polling import wait_until

from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer, serve_https
from py_engine.sim.tls import CertificateAuthority
from py_engine.sim.webhook_stub import WebhookStub


@pytest.fixture(scope="session")
def sim_ca() -> CertificateAuthority:
    return CertificateAuthority("spreadgate-test-ca")


@pytest.fixture
def apiserver() -> Iterator[ApiServer]:
    api = ApiServer(history_size=500, bookmark_interval=0.2)
    yield api
    api.close()


@pytest.fixture
def https_server(apiserver: ApiServer, sim_ca: CertificateAuthority) -> Iterator[RunningServer]:
    server = serve_https(apiserver, ca=sim_ca)
    yield server
    server.stop()
    assert server.errors == [], "unexpected server-side exceptions:\n" + "\n".join(server.errors)


@pytest.fixture
def kubeconfig(https_server: RunningServer, tmp_path: Path) -> str:
    return https_server.write_kubeconfig(str(tmp_path / "kubeconfig"))


@pytest.fixture
def k8s_client(kubeconfig: str) -> Iterator[kubernetes.client.ApiClient]:
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    cfg.retries = False
    client = kubernetes.client.ApiClient(cfg)
    yield client
    client.rest_client.pool_manager.clear()
    client.close()


@pytest.fixture
def core_v1(k8s_client: kubernetes.client.ApiClient) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(k8s_client)


@pytest.fixture
def apps_v1(k8s_client: kubernetes.client.ApiClient) -> kubernetes.client.AppsV1Api:
    return kubernetes.client.AppsV1Api(k8s_client)


@pytest.fixture
def custom_objects(k8s_client: kubernetes.client.ApiClient) -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(k8s_client)


@pytest.fixture
def webhook_stub(sim_ca: CertificateAuthority) -> Iterator[WebhookStub]:
    stub = WebhookStub(ca=sim_ca, service_names=("stub.spreadgate-system.svc",))
    yield stub
    stub.stop()


@pytest.fixture
def deadline_poll() -> Callable[..., Any]:
    """`webhook_testkit.wait_until`, for tests that take their helpers as fixtures."""
    return wait_until
