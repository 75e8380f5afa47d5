"""Assembling a running webhook: client, watch caches, committer, policy engine,
admission and validation services, Flask app and the TLS server. Used by `spreadgate webhook`, the
end-to-end tests and the benchmark, so all three run the same wiring."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from py_engine.apiclient import KubeClient
from py_engine.model.resource import SPREADS
from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.policy import PolicyEngine, create_engine, load_policy_sources
from py_engine.policy.isolated import DEFAULT_DEADLINE_SECONDS, IsolatedEngine
from py_engine.semantics.clock import Clock, RealClock
from py_engine.validation.authorization import DEFAULT_TTL, AuthorGate
from py_engine.validation.service import ValidationConfig, ValidationService
from py_engine.workloadspread.admission.runtime.access_review import KubeAccessReviewer
from py_engine.workloadspread.admission.runtime.committer import Committer, KubeStatusStore
from py_engine.workloadspread.admission.runtime.service_view import LiveAdmissionView
from py_engine.workloadspread.admission.service import (
    AdmissionService,
    FailureMode,
    ServiceConfig,
    TimedEngine,
)
from webhook.app import create_app
from webhook.certs import SelfManagedCA, SelfSignedOptions
from webhook.limits import ServerLimits
from webhook.metrics import WebhookMetrics
from webhook.readiness import Readiness
from webhook.server import TLSServer

log = logging.getLogger(__name__)


@dataclass
class WebhookOptions:
    cert_file: str
    key_file: str
    kubeconfig: str | None = None
    host: str = "0.0.0.0"
    port: int = 9443
    threads: int = 32
    opa_url: str | None = None
    on_commit_failure: FailureMode = "deny"
    commit_timeout: float = 2.5
    deny_deletes_on_failure: bool = False
    versioned_kinds: frozenset[str] = frozenset({"deployment", "replicaset"})
    custom_workloads: tuple[Mapping[str, Any], ...] = ()
    allowed_patch_fields: tuple[str, ...] = ()
    """Pod fields a subset patch may set beyond the default allowlist (`--allow-patch-field`)."""
    node_simulation: bool = True
    batching: bool = True
    watch_timeout_seconds: int = 300
    reload_interval: float = 2.0
    api_timeout: float = 10.0
    extra_routes: dict[str, Any] = field(default_factory=dict)
    """Additional POST paths -> handler(request) -> Decision (the benchmark's no-op endpoint)."""
    limits: ServerLimits = field(default_factory=ServerLimits)
    """Deadlines and budgets of the HTTPS front end (webhook.limits)."""
    validation_deadline: float = DEFAULT_DEADLINE_SECONDS
    """Seconds one WorkloadSpread or UnitedDeployment review's policy evaluation may take, in a
    worker process (py_engine/policy/isolated.py; `--validation-deadline`)."""
    self_signed: SelfSignedOptions | None = None
    """Keep a CA in a Secret, write cert_file/key_file from it and patch caBundle (webhook.certs)."""
    authorize_authors: bool = True
    """Check with a SubjectAccessReview that a WorkloadSpread's or UnitedDeployment's author may
    change the workloads it acts on (`--authorize-authors`; py_engine/validation/authorization.py)."""
    authorization_ttl: float = DEFAULT_TTL
    """Seconds an authorization answer is reused (`--authorization-cache-ttl`)."""
    client_ca: str | None = None
    """Require a client certificate signed by this CA (PEM file) from every caller (`--client-ca`)."""
    reuse_port: bool = False
    """Listen with SO_REUSEPORT, so that several webhook processes share host:port and the kernel
    spreads their connections (the replica benchmark's one address, docs/scale.md; no flag). Off
    by default: with it, any process of the same user may bind the port too and take a share."""


class Webhook:
    """A running webhook process (in this process's threads). `start()` returns once
    the server listens; readiness (`/readyz`) follows the caches' first sync and the
    policy engine's health (webhook/readiness.py)."""

    def __init__(
        self,
        options: WebhookOptions,
        *,
        clock: Clock | None = None,
        client: KubeClient | None = None,
        engine: PolicyEngine | None = None,
    ) -> None:
        self.options = options
        self.clock = clock or RealClock()
        self.client = client or KubeClient.load(
            options.kubeconfig, timeout=options.api_timeout, pool_size=max(options.threads * 2, 16)
        )
        self.metrics = WebhookMetrics()
        base_engine = engine or create_engine(options.opa_url)
        self.engine = TimedEngine(
            base_engine, lambda rule, seconds: self.metrics.policy_eval.observe(seconds, rule=rule)
        )
        # Spread and UnitedDeployment reviews: regorus holds the GIL for a whole evaluation and
        # cannot be stopped, so the embedded engine evaluates them in worker processes under a
        # deadline (py_engine/policy/isolated.py). OPA is another process already (its client
        # has a timeout); an engine given by the caller is used as it is.
        self.isolated: IsolatedEngine | None = None
        self.review_engine = self.engine
        if engine is None and not options.opa_url:
            self.isolated = IsolatedEngine(
                load_policy_sources(), deadline_seconds=options.validation_deadline
            )
            self.review_engine = TimedEngine(
                self.isolated, lambda rule, seconds: self.metrics.policy_eval.observe(seconds, rule=rule)
            )
        self.view = LiveAdmissionView(
            self.client,
            self.clock,
            node_simulation=options.node_simulation,
            watch_timeout_seconds=options.watch_timeout_seconds,
        )
        self.committer = Committer(
            KubeStatusStore(self.client, SPREADS, self.view.spreads),
            self.clock,
            batching=options.batching,
            answering=self._answering,
        )
        self.metrics.committer = self.committer.stats.snapshot
        self.decision_cache = EligibilityCache()
        config = ServiceConfig(
            on_commit_failure=options.on_commit_failure,
            commit_timeout=options.commit_timeout,
            deny_deletes_on_failure=options.deny_deletes_on_failure,
            versioned_kinds=options.versioned_kinds,
            custom_workloads=options.custom_workloads,
            allowed_patch_fields=options.allowed_patch_fields,
        )
        self.author_gate = (
            AuthorGate(KubeAccessReviewer(self.client), self.clock.monotonic, ttl=options.authorization_ttl)
            if options.authorize_authors
            else None
        )
        self.service = AdmissionService(
            self.view,
            self.committer,
            self.clock,
            engine=self.engine,
            config=config,
            decision_cache=self.decision_cache,
            node_classes=NodeClassCache(),
        )
        self.validation = ValidationService(
            self.view,
            self.review_engine,
            author_gate=self.author_gate,
            config=ValidationConfig(
                custom_workloads=options.custom_workloads, allowed_patch_fields=options.allowed_patch_fields
            ),
        )
        self.metrics.add_gauge(
            "spreadgate_webhook_caches_synced",
            "1 when every watch cache is synced.",
            lambda: 1.0 if self.view.ready() else 0.0,
        )
        self.readiness = Readiness(self.view.ready, base_engine)
        self.app = create_app(
            self.service,
            self.validation,
            metrics=self.metrics,
            extra_routes=options.extra_routes,
            max_body=options.limits.max_body_bytes,
            readiness=self.readiness.problem,
        )
        self.ca: SelfManagedCA | None = None
        if options.self_signed is not None:  # the files must exist before the TLS server loads them
            self.ca = SelfManagedCA(
                self.client, options.self_signed, cert_file=options.cert_file, key_file=options.key_file
            )
            self.ca.sync()
        self.server = TLSServer(
            self.app,
            cert_file=options.cert_file,
            key_file=options.key_file,
            host=options.host,
            port=options.port,
            threads=options.threads,
            reload_interval=options.reload_interval,
            limits=options.limits,
            client_ca=options.client_ca,
            reuse_port=options.reuse_port,
        )
        self._add_front_end_gauges()
        self._started = False

    def _answering(self) -> AbstractContextManager[object]:
        """Around each commit batch: its answers reach the front end's event loop in one wakeup."""
        front = self.server.front
        return front.posts_held() if front is not None else contextlib.nullcontext()

    def _add_front_end_gauges(self) -> None:
        """The front end's load and refusals (webhook.frontend), read at scrape time."""

        def read(field: str) -> Callable[[], float]:
            def value() -> float:
                front = self.server.front
                if front is None:
                    return 0.0
                if field == "connections":
                    return float(len(front.connections))
                if field == "refused":
                    return float(sum(front.stats.refused_requests.values()) + front.stats.refused_connections)
                return float(getattr(front.stats, field))

            return value

        for name, help_text, stat in (
            (
                "spreadgate_webhook_open_connections",
                "Open client connections, handshaking ones included.",
                "connections",
            ),
            (
                "spreadgate_webhook_inflight_bytes",
                "Request body bytes held from head to answer.",
                "inflight_bytes",
            ),
            (
                "spreadgate_webhook_refused_total",
                "Connections and requests refused by a front-end limit "
                "(413, 431, 503, over max connections) since start.",
                "refused",
            ),
            (
                "spreadgate_webhook_client_timeouts_total",
                "Clients cut off by a header, body or write deadline since start.",
                "timeouts",
            ),
            (
                "spreadgate_webhook_refused_connections_total",
                "Connections refused at --max-connections "
                "because every open one was answering a request, since start.",
                "refused_connections",
            ),
            (
                "spreadgate_webhook_displaced_connections_total",
                "Connections closed to admit a newer one "
                "(oldest without a completed request, or idle; connection, handshake or peer cap) "
                "since start.",
                "evicted_connections",
            ),
        ):
            self.metrics.add_gauge(name, help_text, read(stat))

    def start(self) -> Webhook:
        self.view.start()
        self.server.start()
        if self.ca is not None:
            self.ca.start()
        self._started = True
        return self

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        if self.ca is not None:
            self.ca.stop()
        if self._started:
            self.server.stop()
            self._started = False
        self.view.stop()
        self.engine.close()
        if self.isolated is not None:
            self.isolated.close()
        self.client.close()

    def __enter__(self) -> Webhook:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
