"""The Flask app: AdmissionReview over HTTP, probes and metrics.

Routes: `POST /mutate/pods`, `POST /validate/pods` (DELETE + eviction),
`POST /validate/workloadspreads`, `POST /validate/uniteddeployments`, `GET /healthz` (liveness only),
`GET /readyz` (caches synced and policy engine answering, webhook/readiness.py; 503 with the reason
otherwise), `GET /metrics`. The two validating routes for WorkloadSpreads and UnitedDeployments
also check the author's rights with a SubjectAccessReview (py_engine/workloadspread/admission/authorization.py;
403 naming the missing right). HTTP-level rules (controller-runtime's): the body is
capped (3 MiB, the API server's own request limit -> 413), must be `application/json` (else 415), must be an
AdmissionReview (else 400 with a message). A well-formed review always gets a
200 AdmissionReview answer echoing its uid, even when the service crashes
(then a denial with code 500 and no traceback), like controller-runtime's
panic recovery.

Every answered review is one log record (`_log_decision`), with the fields operation, uid, namespace,
pod, spread, subset, decision and duration_ms: a denial at warning (error when its code is 5xx, a
policy engine or a crash), an admission the webhook could not record (commit-failed) or whose subset
patch was refused at warning, every other admission at debug. Nothing below the app logs a
decision, so each is logged once (docs/operations.md, "Logs").

Pod CREATEs and DELETEs wait for the group committer's status write. Under the webhook's own
front end they answer later (`webhook.wsgi_call.DEFER_KEY`): the view reads and checks the
review, hands it to the service's asynchronous entry point and returns its worker to the pool;
the committer's thread builds, logs and sends the answer. Under any other server (Flask's test
client) the same steps run on the request's thread. Both produce the same answer, log record and
metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from flask import Flask, Response, request

from py_engine.logsetup import fields
from py_engine.policy import PolicyError
from py_engine.semantics import objects
from py_engine.semantics.jsontext import compact
from py_engine.workloadspread.admission.service import AdmissionService, Answer, Decision, Outcome
from webhook.limits import API_SERVER_REQUEST_LIMIT
from webhook.metrics import WebhookMetrics
from webhook.review import ReviewError, error_response, parse_review, review_response
from webhook.wsgi_call import DEFER_KEY, Reply

log = logging.getLogger(__name__)

MAX_BODY_BYTES = API_SERVER_REQUEST_LIMIT
Handler = Callable[[Mapping[str, Any]], Decision]
LaterHandler = Callable[[Mapping[str, Any], Answer], None]


def _encode(payload: Any) -> bytes:
    return compact(payload).encode("utf-8")


def _json(payload: Any, status: int = 200) -> Response:
    return Response(_encode(payload), status=status, mimetype="application/json")


def _reraise(exc: Exception) -> Decision:
    raise exc


def _problem(status: int, message: str) -> Response:
    return _json({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status, "message": message},
                 status)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _subject(path: str, req: Mapping[str, Any]) -> dict[str, Any]:
    """The structured fields naming what a review is about (any field may be absent or malformed)."""
    obj = req.get("object") if isinstance(req.get("object"), Mapping) else req.get("oldObject")
    meta = objects.meta(obj) if isinstance(obj, Mapping) else objects.EMPTY
    name = _text(req.get("name")) or _text(meta.get("name"))
    if name is None and _text(meta.get("generateName")):
        name = f"{meta['generateName']}*"  # the API server names it after admission
    operation = _text(req.get("operation"))
    sub = _text(req.get("subResource"))
    subject: dict[str, Any] = {"operation": f"{operation} {sub}" if operation and sub else operation,
                               "uid": _text(req.get("uid")),
                               "namespace": _text(req.get("namespace")) or _text(meta.get("namespace"))}
    key = {"/validate/workloadspreads": "spread", "/validate/uniteddeployments": "uniteddeployment"}.get(path, "pod")
    subject[key] = name
    return subject


def _log_decision(path: str, req: Mapping[str, Any], decision: Decision, duration: float) -> None:
    """One record per answered review (see the module docstring for the levels)."""
    problem = not decision.allowed or decision.outcome in ("commit-failed", "patch-refused")
    if not problem and not log.isEnabledFor(logging.DEBUG):
        return  # the hot path at --log-level info: nothing to build
    extra = _subject(path, req)
    extra.setdefault("spread", decision.audit.get("workloadspread"))
    extra.update(subset=decision.audit.get("subset"), decision=decision.outcome,
                 duration_ms=round(duration * 1000, 3), webhook=path)
    if not decision.allowed:
        level = logging.ERROR if decision.code >= 500 else logging.WARNING
        extra.update(code=decision.code, reason=decision.reason or None, cause=decision.message)
        log.log(level, "admission denied", extra=fields(**extra))
    elif decision.outcome in ("commit-failed", "patch-refused"):
        cause = "; ".join(decision.warnings) or decision.message
        log.warning("admitted with a problem", extra=fields(**extra, cause=cause))
    else:
        log.debug("admission %s", decision.outcome, extra=fields(**extra))


def create_app(service: AdmissionService, *, metrics: WebhookMetrics | None = None,
               ready: Callable[[], bool] | None = None, max_body: int = MAX_BODY_BYTES,
               extra_routes: Mapping[str, Handler] | None = None,
               readiness: Callable[[], str | None] | None = None) -> Flask:
    """The webhook app over `service`. `readiness` decides /readyz: None when ready, else the
    reason (webhook/readiness.py); without it, `ready` (default: the service's caches)."""
    app = Flask("spreadgate-webhook")
    app.config["MAX_CONTENT_LENGTH"] = max_body
    metrics = metrics or WebhookMetrics()
    app.extensions["spreadgate_metrics"] = metrics
    is_ready = ready or service.view.ready

    def caches_only() -> str | None:
        return None if is_ready() else "watch caches not synced"

    not_ready = readiness or caches_only
    handlers: dict[str, Handler] = {
        "/mutate/pods": service.mutate_pod,
        "/validate/pods": service.validate_pod,
        "/validate/workloadspreads": service.validate_workloadspread,
        "/validate/uniteddeployments": lambda req: service.validate_uniteddeployment(req),
        **(extra_routes or {}),
    }
    # The paths that wait for a status write answer later where the server offers it (DEFER_KEY):
    # the worker thread goes back to the pool while the pod waits for its batch to be written.
    later: dict[str, LaterHandler] = {path: handler for path, handler in (
        ("/mutate/pods", service.mutate_pod_async), ("/validate/pods", service.validate_pod_async))
        if path not in (extra_routes or {})}

    def finished(path: str, started: float, code: int) -> None:
        metrics.latency.observe(time.perf_counter() - started, webhook=path)
        metrics.requests.inc(webhook=path, code=str(code))

    def admit(path: str) -> Response:
        started = time.perf_counter()
        review = _read_review(path)
        if isinstance(review, Response):
            finished(path, started, review.status_code)
            return review
        api_version, req = review
        defer = request.environ.get(DEFER_KEY) if path in later else None
        if defer is None:
            handler = handlers[path]
            try:
                return _json(_decide(path, api_version, req, started, lambda: handler(req)))
            finally:
                finished(path, started, 200)
        reply: Reply = defer()

        def answer(outcome: Outcome) -> None:
            try:
                body = _encode(_decide(path, api_version, req, started, outcome))
            except Exception as exc:  # never leave the API server without an answer
                log.exception("answering an admission failed", extra=fields(**_subject(path, req), cause=str(exc)))
                body = _encode(error_response(api_version, str(req["uid"]), 500, "internal error"))
            finished(path, started, 200)
            reply(200, [("Content-Type", "application/json")], body)

        try:
            later[path](req, answer)
        except Exception as exc:  # raised before answering: the same panic recovery as a handler's
            answer(partial(_reraise, exc))
        return Response(status=204)  # never sent: the deferral answers

    def _read_review(path: str) -> Response | tuple[str, dict[str, Any]]:
        """The request's AdmissionReview (api_version, request), or the problem to answer."""
        content_type = (request.mimetype or "").lower()
        if content_type != "application/json":
            return _problem(415, f"unsupported Content-Type {request.content_type or '(none)'!r}; "
                                 "expected application/json")
        length = request.content_length
        if length is not None and length > max_body:
            return _problem(413, f"request body of {length} bytes exceeds the {max_body}-byte limit")
        body = request.stream.read(max_body + 1)
        if len(body) > max_body:
            return _problem(413, f"request body exceeds the {max_body}-byte limit")
        try:
            return parse_review(body)
        except ReviewError as exc:
            metrics.decisions.inc(webhook=path, outcome="bad-request")
            return _problem(exc.code, exc.message)

    def _decide(path: str, api_version: str, req: Mapping[str, Any], started: float,
                outcome: Outcome) -> dict[str, Any]:
        """The AdmissionReview answer to `req`: the decision `outcome` returns, logged and counted once."""
        uid = str(req["uid"])
        try:
            decision = outcome()
        except Exception as exc:  # panic recovery: a denial that still echoes the uid
            extra = fields(**_subject(path, req), decision="error", code=500, webhook=path,
                           duration_ms=round((time.perf_counter() - started) * 1000, 3), cause=str(exc))
            if isinstance(exc, PolicyError):  # the engine's own words are the cause; no traceback
                log.error("admission denied: policy engine error", extra=extra)
            else:
                log.exception("admission denied: handler crashed", extra=extra)
            metrics.decisions.inc(webhook=path, outcome="error")
            return error_response(api_version, uid, 500, f"internal error: {type(exc).__name__}: {exc}")
        metrics.decisions.inc(webhook=path, outcome=decision.outcome)
        _log_decision(path, req, decision, time.perf_counter() - started)
        return review_response(api_version, uid, decision)

    for path in handlers:
        app.add_url_rule(path, endpoint=path, view_func=lambda path=path: admit(path), methods=["POST"])

    @app.get("/healthz")
    def healthz() -> Response:
        return Response("ok\n", mimetype="text/plain")

    @app.get("/readyz")
    def readyz() -> Response:
        reason = not_ready()
        if reason is None:
            return Response("ok\n", mimetype="text/plain")
        return Response(f"not ready: {reason}\n", status=503, mimetype="text/plain")

    @app.get("/metrics")
    def metrics_view() -> Response:
        return Response(metrics.render(), mimetype="text/plain", content_type="text/plain; version=0.0.4")

    @app.errorhandler(404)
    def not_found(_: Exception) -> Response:
        return _problem(404, f"no route for {request.path}")

    @app.errorhandler(405)
    def not_allowed(_: Exception) -> Response:
        return _problem(405, f"method {request.method} not allowed on {request.path}")

    @app.errorhandler(413)
    def too_large(_: Exception) -> Response:
        return _problem(413, f"request body exceeds the {max_body}-byte limit")

    @app.errorhandler(500)
    def crashed(_: Exception) -> Response:
        return _problem(500, "internal error")

    return app
