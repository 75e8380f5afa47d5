"""The Flask app: the webhook's endpoints over HTTP, probes and metrics.

`create_app` builds the endpoint list (webhook/endpoints.py: `POST /mutate/pods`,
`POST /validate/pods` (DELETE + eviction), `POST /validate/workloadspreads`,
`POST /validate/uniteddeployments`, each one `Endpoint`) and registers each one as an
`EndpointView`, plus `GET /healthz` (liveness only), `GET /readyz` (caches synced and policy
engine answering, webhook/readiness.py; 503 with the reason otherwise) and `GET /metrics`. The
two validating endpoints also check the author's rights with a SubjectAccessReview
(py_engine/validation/service.py; 403 naming the missing right). HTTP-level rules
(controller-runtime's), the same for every endpoint: the body is capped (3 MiB, the API
server's own request limit -> 413), must be `application/json` (else 415), must be an
AdmissionReview (the endpoint's reader, else 400 with a message). A well-formed review always
gets a 200 AdmissionReview answer echoing its uid, even when the decision crashes (then a
denial with code 500 and no traceback), like controller-runtime's panic recovery.

Every answered review is one log record (`_log_decision`), with the fields operation, uid, namespace,
pod, spread, subset, decision and duration_ms: a denial at warning (error when its code is 5xx, a
policy engine or a crash), an admission the webhook could not record (commit-failed) or whose subset
patch was refused at warning, every other admission at debug. Nothing below the app logs a
decision, so each is logged once (docs/operations.md, "Logs").

Pod CREATEs and DELETEs wait for the group committer's status write. Under the webhook's own
front end they answer later (`webhook.wsgi_call.DEFER_KEY`): the view reads and checks the
review, hands it to the endpoint's asynchronous decision and returns its worker to the pool;
the committer's thread builds, logs and sends the answer (`_LaterAnswer`). Under any other
server (Flask's test client) the same steps run on the request's thread. Both produce the same
answer, log record and metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from flask import Flask, Response, request

from py_engine.logsetup import fields
from py_engine.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from py_engine.metrics import exposition
from py_engine.policy import PolicyError
from py_engine.semantics import objects
from py_engine.semantics.jsontext import compact
from py_engine.workloadspread.admission.service import Decision, Outcome
from webhook.endpoints import Decide, Endpoint, PodAdmission, Validation, webhook_endpoints
from webhook.limits import API_SERVER_REQUEST_LIMIT
from webhook.metrics import WebhookMetrics
from webhook.review import ReviewError, error_response
from webhook.wsgi_call import DEFER_KEY, Reply

log = logging.getLogger(__name__)
"""`webhook.app`: the logger operators filter the decision records by (docs/operations.md, "Logs")."""

MAX_BODY_BYTES = API_SERVER_REQUEST_LIMIT


def _encode(payload: Any) -> bytes:
    return compact(payload).encode("utf-8")


def _json(payload: Any, status: int = 200) -> Response:
    return Response(_encode(payload), status=status, mimetype="application/json")


def _reraise(exc: Exception) -> Decision:
    raise exc


def _problem(status: int, message: str) -> Response:
    return _json(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status, "message": message},
        status,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _subject(endpoint: Endpoint, req: Mapping[str, Any]) -> dict[str, Any]:
    """The structured fields naming what a review is about (any field may be absent or malformed)."""
    obj = req.get("object") if isinstance(req.get("object"), Mapping) else req.get("oldObject")
    meta = objects.meta(obj) if isinstance(obj, Mapping) else objects.EMPTY
    name = _text(req.get("name")) or _text(meta.get("name"))
    if name is None and _text(meta.get("generateName")):
        name = f"{meta['generateName']}*"  # the API server names it after admission
    operation = _text(req.get("operation"))
    sub = _text(req.get("subResource"))
    subject: dict[str, Any] = {
        "operation": f"{operation} {sub}" if operation and sub else operation,
        "uid": _text(req.get("uid")),
        "namespace": _text(req.get("namespace")) or _text(meta.get("namespace")),
    }
    subject[endpoint.subject] = name
    return subject


def _log_decision(endpoint: Endpoint, req: Mapping[str, Any], decision: Decision, duration: float) -> None:
    """One record per answered review (see the module docstring for the levels)."""
    problem = not decision.allowed or decision.outcome in ("commit-failed", "patch-refused")
    if not problem and not log.isEnabledFor(logging.DEBUG):
        return  # the hot path at --log-level info: nothing to build
    extra = _subject(endpoint, req)
    extra.setdefault("spread", decision.audit.get("workloadspread"))
    extra.update(
        subset=decision.audit.get("subset"),
        decision=decision.outcome,
        duration_ms=round(duration * 1000, 3),
        webhook=endpoint.path,
    )
    if not decision.allowed:
        level = logging.ERROR if decision.code >= 500 else logging.WARNING
        extra.update(code=decision.code, reason=decision.reason or None, cause=decision.message)
        log.log(level, "admission denied", extra=fields(**extra))
    elif decision.outcome in ("commit-failed", "patch-refused"):
        cause = "; ".join(decision.warnings) or decision.message
        log.warning("admitted with a problem", extra=fields(**extra, cause=cause))
    else:
        log.debug("admission %s", decision.outcome, extra=fields(**extra))


class EndpointView:
    """One endpoint served by Flask: the HTTP checks, the review, the decision (now, or later
    through `_LaterAnswer`), one log record and the metrics."""

    def __init__(self, endpoint: Endpoint, metrics: WebhookMetrics, max_body: int) -> None:
        self.endpoint = endpoint
        self.metrics = metrics
        self.max_body = max_body

    def __call__(self) -> Response:
        started = time.perf_counter()
        review = self._read_review()
        if isinstance(review, Response):
            self.finished(started, review.status_code)
            return review
        api_version, req = review
        later = self.endpoint.decide_later
        defer = request.environ.get(DEFER_KEY) if later is not None else None
        if later is None or defer is None:
            try:
                return _json(self.answer(api_version, req, started, partial(self.endpoint.decide, req)))
            finally:
                self.finished(started, 200)
        answer = _LaterAnswer(self, api_version, req, started, defer())
        try:
            later(req, answer)
        except Exception as exc:  # raised before answering: the same panic recovery as a decision's
            answer(partial(_reraise, exc))
        return Response(status=204)  # never sent: the deferral answers

    def finished(self, started: float, code: int) -> None:
        path = self.endpoint.path
        self.metrics.latency.observe(time.perf_counter() - started, webhook=path)
        self.metrics.requests.inc(webhook=path, code=str(code))

    def _read_review(self) -> Response | tuple[str, dict[str, Any]]:
        """The request's AdmissionReview (api_version, request), or the problem to answer."""
        max_body = self.max_body
        content_type = (request.mimetype or "").lower()
        if content_type != "application/json":
            return _problem(
                415,
                f"unsupported Content-Type {request.content_type or '(none)'!r}; expected application/json",
            )
        length = request.content_length
        if length is not None and length > max_body:
            return _problem(413, f"request body of {length} bytes exceeds the {max_body}-byte limit")
        body = request.stream.read(max_body + 1)
        if len(body) > max_body:
            return _problem(413, f"request body exceeds the {max_body}-byte limit")
        try:
            return self.endpoint.read(body)
        except ReviewError as exc:
            self.metrics.decisions.inc(webhook=self.endpoint.path, outcome="bad-request")
            return _problem(exc.code, exc.message)

    def answer(
        self, api_version: str, req: Mapping[str, Any], started: float, outcome: Outcome
    ) -> dict[str, Any]:
        """The AdmissionReview answer to `req`: the decision `outcome` returns, logged and counted once."""
        endpoint = self.endpoint
        uid = str(req["uid"])
        try:
            decision = outcome()
        except Exception as exc:  # panic recovery: a denial that still echoes the uid
            extra = fields(
                **_subject(endpoint, req),
                decision="error",
                code=500,
                webhook=endpoint.path,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                cause=str(exc),
            )
            if isinstance(exc, PolicyError):  # the engine's own words are the cause; no traceback
                log.error("admission denied: policy engine error", extra=extra)
            else:
                log.exception("admission denied: handler crashed", extra=extra)
            self.metrics.decisions.inc(webhook=endpoint.path, outcome="error")
            return error_response(api_version, uid, 500, f"internal error: {type(exc).__name__}: {exc}")
        self.metrics.decisions.inc(webhook=endpoint.path, outcome=decision.outcome)
        _log_decision(endpoint, req, decision, time.perf_counter() - started)
        return endpoint.respond(api_version, uid, decision)


@dataclass(frozen=True, slots=True)
class _LaterAnswer:
    """The continuation a deferred review is answered through (`Answer`): builds, logs and
    sends the answer on whichever thread decides, exactly once."""

    view: EndpointView
    api_version: str
    req: Mapping[str, Any]
    started: float
    reply: Reply

    def __call__(self, outcome: Outcome) -> None:
        try:
            body = _encode(self.view.answer(self.api_version, self.req, self.started, outcome))
        except Exception as exc:  # never leave the API server without an answer
            log.exception(
                "answering an admission failed",
                extra=fields(**_subject(self.view.endpoint, self.req), cause=str(exc)),
            )
            body = _encode(error_response(self.api_version, str(self.req["uid"]), 500, "internal error"))
        self.view.finished(self.started, 200)
        self.reply(200, [("Content-Type", "application/json")], body)


class _Probes:
    """/healthz, /readyz and /metrics, and the HTTP error pages every route shares."""

    def __init__(self, not_ready: Callable[[], str | None], metrics: WebhookMetrics, max_body: int) -> None:
        self.not_ready = not_ready
        self.metrics = metrics
        self.max_body = max_body

    def register(self, app: Flask) -> None:
        app.add_url_rule("/healthz", endpoint="healthz", view_func=self.healthz, methods=["GET"])
        app.add_url_rule("/readyz", endpoint="readyz", view_func=self.readyz, methods=["GET"])
        app.add_url_rule("/metrics", endpoint="metrics_view", view_func=self.metrics_view, methods=["GET"])
        app.register_error_handler(404, _not_found)
        app.register_error_handler(405, _not_allowed)
        app.register_error_handler(413, self.too_large)
        app.register_error_handler(500, _crashed)

    def healthz(self) -> Response:
        return Response("ok\n", mimetype="text/plain")

    def readyz(self) -> Response:
        reason = self.not_ready()
        if reason is None:
            return Response("ok\n", mimetype="text/plain")
        return Response(f"not ready: {reason}\n", status=503, mimetype="text/plain")

    def metrics_view(self) -> Response:
        return Response(exposition(self.metrics.registry), content_type=METRICS_CONTENT_TYPE)

    def too_large(self, _: Exception) -> Response:
        return _problem(413, f"request body exceeds the {self.max_body}-byte limit")


def _not_found(_: Exception) -> Response:
    return _problem(404, f"no route for {request.path}")


def _not_allowed(_: Exception) -> Response:
    return _problem(405, f"method {request.method} not allowed on {request.path}")


def _crashed(_: Exception) -> Response:
    return _problem(500, "internal error")


class _CachesOnly:
    """Readiness without webhook/readiness.py: the admission reader's caches alone."""

    def __init__(self, ready: Callable[[], bool]) -> None:
        self.ready = ready

    def __call__(self) -> str | None:
        return None if self.ready() else "watch caches not synced"


def create_app(
    admission: PodAdmission,
    validation: Validation,
    *,
    metrics: WebhookMetrics | None = None,
    ready: Callable[[], bool] | None = None,
    max_body: int = MAX_BODY_BYTES,
    extra_routes: Mapping[str, Decide] | None = None,
    readiness: Callable[[], str | None] | None = None,
) -> Flask:
    """The webhook app over `admission` (pods) and `validation` (WorkloadSpreads and
    UnitedDeployments): it builds the endpoint list (webhook/endpoints.py; `extra_routes` adds
    paths) and registers each one, then the probes. `readiness` decides /readyz: None when
    ready, else the reason (webhook/readiness.py); without it, `ready` (default: the admission
    service's caches)."""
    app = Flask("spreadgate-webhook")
    app.config["MAX_CONTENT_LENGTH"] = max_body
    metrics = metrics or WebhookMetrics()
    app.extensions["spreadgate_metrics"] = metrics
    for endpoint in webhook_endpoints(admission, validation, extra_routes):
        app.add_url_rule(
            endpoint.path,
            endpoint=endpoint.path,
            view_func=EndpointView(endpoint, metrics, max_body),
            methods=["POST"],
        )
    not_ready = readiness or _CachesOnly(ready or admission.view.ready)
    _Probes(not_ready, metrics, max_body).register(app)
    return app
