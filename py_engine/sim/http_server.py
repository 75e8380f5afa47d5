"""The HTTPS front end of the emulated API server.

`serve_https(api)` starts a threaded HTTP/1.1 server (keep-alive, one thread
per connection, TLS handshake in that thread, never in the accept loop) that
maps Kubernetes REST paths onto `ApiServer`'s internal verbs. Every failure is
answered with a Kubernetes `Status` body (400/404/405/409/410/413/415/422/
429/500/504), never a traceback or a hung connection; unexpected exceptions
become a 500 Status and are kept in `RunningServer.errors` for tests.

Every request is authenticated, impersonated and authorized before it is routed,
in kube-apiserver's order: the bearer token names the user (py_engine/sim/authn.py:
the written kubeconfig's token is `kubernetes-admin` in `system:masters`; tokens can be
issued for ServiceAccounts and other users; no token is `system:anonymous`, an unknown
one a 401); `Impersonate-*` headers switch to another identity when the caller may
`impersonate` it (py_engine/sim/impersonation.py); the request's attributes
(py_engine/sim/request_info.py) are checked against RBAC (py_engine/sim/rbac.py), and a
refusal is kube-apiserver's 403 Status. The identity reaches admission as `userInfo`.

Server-side apply (`application/apply-patch+yaml`, with `fieldManager` and `force`) goes to
`ApiServer.do_apply`; `fieldManager` (or the User-Agent) names the writer of every create, update
and patch in `metadata.managedFields` (docs/server-side-apply.md).
Not implemented: protobuf (JSON/YAML only), list pagination (`limit`/`continue`
are ignored: every list is complete, which clients accept) and consistent-read
semantics of `resourceVersion` on list (lists are always the latest state).
`fieldValidation` is accepted and ignored. Answers carrying one object come
as its metadata alone when the Accept header prefers `as=PartialObjectMetadata`
(py_engine/sim/negotiation.py), and as a Table for `as=Table` (py_engine/sim/tables.py).

CPU accounting: each non-watch request adds the `time.thread_time()` its
handler thread spent (parsing, admission calls, store, serialisation, TLS
writes) to `RunningServer.cpu_seconds`, so benchmarks can report the
emulator's own CPU per request independently of the client's.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import select
import ssl
import threading
import time
import traceback
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from py_engine.logsetup import fields
from py_engine.sim import discovery, errors, impersonation, managed_fields, negotiation, openapi, tables
from py_engine.sim.apiserver import ApiServer, ApiWatch, RequestContext
from py_engine.sim.authn import ADMIN, TokenAuthenticator
from py_engine.sim.identity import UserInfo
from py_engine.sim.interface import JSON, ApiError, DeleteOptions
from py_engine.sim.request_info import request_attributes, split_path
from py_engine.sim.resources import ResourceDef
from py_engine.sim.threaded import ThreadedServer
from py_engine.sim.tls import CertificateAuthority
from py_engine.sim.tls_http import TLSThreadingHTTPServer
from py_engine.sim.watch_encoding import EncodedEvents

ADMIN_USER: JSON = ADMIN.to_json()
log = logging.getLogger(__name__)

_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
_DRAIN_LIMIT = 64 * 1024 * 1024
_REASONS = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    410: "Gone",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _dumps_line(obj: Any) -> bytes:
    return _dumps(obj) + b"\n"


_CONTAINER_SUBRESOURCES = frozenset(
    {"exec", "attach", "portforward", "log", "proxy", "ephemeralcontainers", "resize"}
)


def _unsupported_subresource(rd: ResourceDef, sub: str) -> ApiError:
    """A subresource the emulator does not serve, said as such instead of a misleading error."""
    if rd.kind == "Pod" and sub in _CONTAINER_SUBRESOURCES:
        return errors.method_not_allowed(
            f"pods/{sub} is not supported by the embedded cluster: it runs no containers "
            "(no exec, attach, port-forward, logs or proxy)"
        )
    served = ", ".join(sorted(rd.subresources)) or "none"
    return errors.method_not_allowed(
        f"{rd.group_resource}/{sub} is not supported by the embedded cluster (subresources served: {served})"
    )


MAX_YAML_VALUES = 1_000_000
"""A YAML body may not expand to more values than this (its aliases are shared in memory, not
in the JSON it stands for: a few kilobytes can describe billions of values)."""


def _yaml_document(raw: bytes) -> Any:
    """A YAML body as the JSON it stands for, bounded like any body: at most `MAX_YAML_VALUES`
    values once aliases are expanded (else ValueError), YAML-only scalars as their text."""
    doc = yaml.safe_load(raw)
    seen, stack = 0, [doc]
    while stack:
        item = stack.pop()
        seen += 1
        if seen > MAX_YAML_VALUES:
            raise ValueError(
                f"yaml: document expands to more than {MAX_YAML_VALUES} values (excessive aliasing)"
            )
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return json.loads(json.dumps(doc, default=str))


def _not_found_path() -> ApiError:
    return ApiError(
        errors.status(
            404,
            "NotFound",
            "the server could not find the requested resource",
            {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]},
        )
    )


@dataclass
class _Reply:
    code: int
    body: bytes
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive connections are closed after this
    server: _HttpServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging (it would dominate CPU in benchmarks)."""

    def handle_one_request(self) -> None:
        """Account CPU from the request line on (header parsing and TLS reads included)."""
        self._t0 = time.thread_time()
        super().handle_one_request()

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # ---------------------------------------------------------------- plumbing

    def _handle(self, method: str) -> None:
        t0 = getattr(self, "_t0", None) or time.thread_time()
        self._streamed = False
        self._body_read = False
        ctx = RequestContext(user={}, external=True)
        try:
            ctx.user = self._authorize(method).to_json()
            reply = self._route(method, ctx)
        except ApiError as exc:
            reply = self._status_reply(exc.status)
        except Exception as exc:
            self.server.errors.append(f"{method} {self.path}: {traceback.format_exc()}")
            reply = self._status_reply(errors.internal(f"{type(exc).__name__}: {exc}").status)
        if not self._body_read and not self._streamed:
            self._discard_body()
        if reply is not None:
            for w in ctx.warnings:
                reply.headers.append(
                    ("Warning", '299 - "' + w.replace("\\", "\\\\").replace('"', '\\"') + '"')
                )
            self._send(reply)
        if not self._streamed:
            self.server.account(time.thread_time() - t0)

    def _authorize(self, method: str) -> UserInfo:
        """Who is asking (token, then impersonation) and whether they may: 401/403 otherwise,
        each refusal logged once and kept in `RunningServer.refusals`."""
        authorizer = self.server.api.authorizer
        user: UserInfo | None = None
        try:
            user = self.server.authenticator.authenticate(self.headers.get("Authorization"))
            headers = list(self.headers.items())
            if impersonation.requested(headers):
                user = impersonation.impersonate(user, headers, authorizer.authorize)
            parts = urlsplit(self.path)
            q = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            authorizer.check(user, request_attributes(method, parts.path, q))
        except ApiError as exc:
            if exc.code in (401, 403):
                who = user.username if user is not None else ""
                message = str(exc.status.get("message", ""))
                self.server.refusals.append(
                    f"{exc.code} {method} {urlsplit(self.path).path} {who}: {message}"
                )
                log.info(
                    "request refused",
                    extra=fields(
                        code=exc.code,
                        method=method,
                        path=urlsplit(self.path).path,
                        user=who or None,
                        message=message,
                    ),
                )
            raise
        return user

    def _status_reply(self, st: JSON) -> _Reply:
        code = int(st.get("code", 500))
        reply = _Reply(code, _dumps(st))
        retry = (st.get("details") or {}).get("retryAfterSeconds")
        if retry and code in (429, 504, 503):
            reply.headers.append(("Retry-After", str(retry)))
        return reply

    def _send(self, reply: _Reply) -> None:
        head = [
            f"HTTP/1.1 {reply.code} {_REASONS.get(reply.code, 'Status')}",
            f"Content-Type: {reply.content_type}",
            f"Content-Length: {len(reply.body)}",
            "Cache-Control: no-cache, private",
        ]
        head += [f"{k}: {v}" for k, v in reply.headers]
        if self.close_connection:
            head.append("Connection: close")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + reply.body
        try:
            self.wfile.write(data)
        except OSError:
            self.close_connection = True

    def _discard_body(self) -> None:
        """Consume an unread request body (an error was raised before reading it) so
        the keep-alive connection stays in sync; give up and close if it is huge."""
        try:
            self._read_body()
        except ApiError:
            pass
        except (OSError, ValueError):
            self.close_connection = True

    def _read_body(self) -> bytes:
        self._body_read = True
        limit = self.server.api.max_object_bytes
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                line = self.rfile.readline(65537)
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                except ValueError:
                    self.close_connection = True
                    raise errors.bad_request("malformed chunked request body") from None
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunk = self.rfile.read(size)
                self.rfile.readline(3)
                total += len(chunk)
                if total > _DRAIN_LIMIT:
                    self.close_connection = True
                    raise errors.too_large(limit)
                chunks.append(chunk)
            body = b"".join(chunks)
        else:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self.close_connection = True
                raise errors.bad_request("invalid Content-Length") from None
            if length < 0:
                self.close_connection = True
                raise errors.bad_request("invalid Content-Length")
            if length > limit:
                if length <= _DRAIN_LIMIT:  # drain so the client can read our answer
                    remaining = length
                    while remaining > 0:
                        got = self.rfile.read(min(remaining, 1 << 20))
                        if not got:
                            break
                        remaining -= len(got)
                else:
                    self.close_connection = True
                raise errors.too_large(limit)
            body = self.rfile.read(length) if length else b""
        if len(body) > limit:
            raise errors.too_large(limit)
        return body

    def _json_body(self, patch: bool = False) -> Any:
        raw = self._read_body()
        ctype = (self.headers.get("Content-Type") or "application/json").split(";", 1)[0].strip().lower()
        if not patch and ctype not in ("application/json", "application/yaml", "*/*", ""):
            raise errors.unsupported_media_type(ctype, ["application/json", "application/yaml"])
        if not raw.strip():
            raise errors.bad_request("the request body is empty")
        try:
            if ctype == "application/yaml" or ctype.endswith("+yaml"):
                return _yaml_document(raw)
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise errors.bad_request(f"the body of the request could not be decoded: {exc}") from None
        except RecursionError:
            raise errors.bad_request(
                "the body of the request could not be decoded: nested too deeply"
            ) from None

    # ------------------------------------------------------------------ routing

    def _route(self, method: str, ctx: RequestContext) -> _Reply | None:
        parts = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        segs = split_path(parts.path)
        api = self.server.api
        if not segs or segs[0] in ("version", "healthz", "livez", "readyz", "openapi", "api", "apis"):
            info = self._route_info(method, segs)
            if info is not None:
                return info
        if len(segs) < 2 or segs[0] not in ("api", "apis"):
            raise _not_found_path()
        if segs[0] == "api":
            if segs[1] != "v1":
                raise _not_found_path()
            group, version, rest = "", "v1", segs[2:]
        else:
            if len(segs) < 3:
                raise _not_found_path()
            group, version, rest = segs[1], segs[2], segs[3:]
        if not rest:
            if method != "GET":
                raise errors.method_not_allowed()
            doc = discovery.resource_list(api.registry.all(), group, version)
            if doc is None:
                raise _not_found_path()
            return _Reply(200, _dumps(doc))
        watch_prefix = rest[0] == "watch"
        if watch_prefix:
            rest = rest[1:]
        ns: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            cand = api.registry.lookup(group, version, rest[2])
            if cand is not None and cand.namespaced:
                ns, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise _not_found_path()
        rd = api.registry.lookup(group, version, rest[0])
        if rd is None:
            raise _not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if (rd.namespaced and name is not None and ns is None) or (not rd.namespaced and ns is not None):
            raise _not_found_path()
        if sub is not None and sub not in rd.subresources:
            # /api/v1/namespaces/NS/<not a namespaced resource> is a path kube-apiserver does not
            # know (404); anything else names a subresource this emulator does not serve.
            raise _not_found_path() if rd.kind == "Namespace" else _unsupported_subresource(rd, sub)
        return self._resource(method, ctx, rd, ns, name, sub, q, watch_prefix)

    def _route_info(self, method: str, segs: list[str]) -> _Reply | None:
        api = self.server.api
        if not segs:
            paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]
            paths += sorted({f"/apis/{d.group}/{d.version}" for d in api.registry.all() if d.group})
            return _Reply(200, _dumps({"paths": paths}))
        head = segs[0]
        if head == "version" and len(segs) == 1:
            return _Reply(200, _dumps(discovery.SERVER_VERSION))
        if head in ("healthz", "livez", "readyz"):
            return _Reply(200, b"ok", "text/plain; charset=utf-8")
        if head == "openapi":
            if segs == ["openapi", "v3"]:
                return _Reply(200, _dumps(openapi.openapi_v3_root(api.registry.all())))
            if len(segs) >= 4 and segs[1] == "v3":
                rest = segs[2:]
                if rest[0] == "api" and len(rest) == 2:
                    doc = openapi.openapi_v3_group_version(api.registry.all(), "", rest[1])
                elif rest[0] == "apis" and len(rest) == 3:
                    doc = openapi.openapi_v3_group_version(api.registry.all(), rest[1], rest[2])
                else:
                    doc = None
                if doc is not None:
                    return _Reply(200, _dumps(doc))
            raise _not_found_path()
        if method != "GET":
            return None
        if segs == ["api"]:
            host, port = str(self.server.server_address[0]), str(self.server.server_address[1])
            return _Reply(200, _dumps(discovery.api_versions(host + ":" + port)))
        if segs == ["apis"]:
            return _Reply(200, _dumps(discovery.api_group_list(api.registry.all())))
        if head == "apis" and len(segs) == 2:
            doc = discovery.api_group(api.registry.all(), segs[1])
            if doc is None:
                raise _not_found_path()
            return _Reply(200, _dumps(doc))
        return None

    @staticmethod
    def _dry_run(q: Mapping[str, str]) -> bool:
        value = q.get("dryRun")
        if value is None or value == "":
            return False
        if value != "All":
            raise errors.bad_request(f'Invalid dryRun value: {value!r}; the only supported value is "All"')
        return True

    @staticmethod
    def _force(q: Mapping[str, str], ptype: str) -> bool:
        """`force` is an apply option: kube-apiserver refuses it on other patches (422)."""
        value = q.get("force")
        if value is None:
            return False
        if ptype != "apply":
            raise managed_fields.force_needs_apply()
        return value.lower() in ("true", "1")

    def _wants_table(self) -> bool:
        return tables.wants_table(self.headers.get("Accept"))

    def _object_reply(self, code: int, obj: JSON) -> _Reply:
        """One object's answer, as its metadata alone when the Accept header prefers that
        (py_engine/sim/negotiation.py); a Status stays a Status."""
        version = negotiation.partial_metadata_version(self.headers.get("Accept"))
        if version is None or obj.get("kind") == "Status":
            return _Reply(code, _dumps(obj))
        return _Reply(
            code, _dumps(negotiation.partial_metadata(obj, version)), negotiation.content_type(version)
        )

    def _table(self, rd: ResourceDef, objects: list[JSON], rv: str, q: Mapping[str, str]) -> _Reply:
        table = tables.to_table(
            rd,
            objects,
            self.server.api.clock.now(),
            rv,
            q.get("includeObject"),
            headers=q.get("noHeaders", "").lower() not in ("true", "1"),
        )
        return _Reply(200, _dumps(table), tables.TABLE_CONTENT_TYPE)

    def _resource(
        self,
        method: str,
        ctx: RequestContext,
        rd: ResourceDef,
        ns: str | None,
        name: str | None,
        sub: str | None,
        q: Mapping[str, str],
        watch_prefix: bool,
    ) -> _Reply | None:
        api = self.server.api
        watching = watch_prefix or q.get("watch", "").lower() in ("true", "1")
        if method == "GET":
            verb = "watch" if watching else ("get" if name is not None else "list")
        else:
            verb = {
                "POST": "create",
                "PUT": "update",
                "PATCH": "patch",
                "DELETE": "delete" if name is not None else "deletecollection",
            }[method]
        if (verb == "create" and name is not None and sub is None) or (
            verb in ("update", "patch") and name is None
        ):
            raise errors.method_not_allowed()
        if verb not in rd.verbs and sub is None:
            raise errors.method_not_allowed()
        if api.faults.active:
            api.faults.apply(rd.plural, sub, verb, name or "")
        if verb == "watch":
            if name is not None:
                q = dict(q)
                extra = f"metadata.name={name}"
                q["fieldSelector"] = f"{q['fieldSelector']},{extra}" if q.get("fieldSelector") else extra
            self._watch(rd, ns, q)
            return None
        if verb == "list":
            out = api.do_list(rd, ns, q.get("labelSelector"), q.get("fieldSelector"))
            if self._wants_table():
                return self._table(rd, out["items"], str(out["metadata"]["resourceVersion"]), q)
            return _Reply(200, _dumps(out))
        assert name is not None or verb in ("create", "deletecollection")
        dry = self._dry_run(q)
        if verb in ("create", "update", "patch"):
            ctx.field_manager = q.get("fieldManager") or None
            ctx.user_agent = self.headers.get("User-Agent") or ""
            managed_fields.validate_field_manager(
                ctx.field_manager,
                {"create": "CreateOptions", "update": "UpdateOptions"}.get(verb, "PatchOptions"),
            )
        if verb == "get":
            assert name is not None
            obj = api.do_get(rd, ns, name, sub)
            if self._wants_table() and sub is None:
                return self._table(rd, [obj], str(obj["metadata"].get("resourceVersion")), q)
            return self._object_reply(200, obj)
        if verb == "create":
            body = self._json_body()
            created, code = api.do_create(rd, ns, body, subresource=sub, name=name, dry_run=dry, ctx=ctx)
            return self._object_reply(code, created)
        if verb == "update":
            assert name is not None
            body = self._json_body()
            return self._object_reply(
                200, api.do_update(rd, ns, name, body, subresource=sub, dry_run=dry, ctx=ctx)
            )
        if verb == "patch":
            assert name is not None
            ctype = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            ptype = _PATCH_TYPES.get(ctype)
            if ptype is None:
                self._read_body()
                raise errors.unsupported_media_type(ctype or "<none>", list(_PATCH_TYPES))
            force = self._force(q, ptype)
            body = self._json_body(patch=True)
            if ptype == "apply":
                applied, code = api.do_apply(
                    rd, ns, name, body, subresource=sub, dry_run=dry, ctx=ctx, force=force
                )
                return self._object_reply(code, applied)
            return self._object_reply(
                200, api.do_patch(rd, ns, name, body, ptype, subresource=sub, dry_run=dry, ctx=ctx)
            )
        # delete / deletecollection
        opts: Any = {}
        if self.headers.get("Content-Length") not in (None, "0") or self.headers.get("Transfer-Encoding"):
            raw = self._read_body()
            if raw.strip():
                try:
                    opts = json.loads(raw)
                except ValueError as exc:
                    raise errors.bad_request(f"the body of the request could not be decoded: {exc}") from None
        if not isinstance(opts, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        grace_raw = q.get("gracePeriodSeconds", opts.get("gracePeriodSeconds"))
        try:
            grace = None if grace_raw in (None, "") else int(grace_raw)
        except (TypeError, ValueError):
            raise errors.bad_request(f"invalid gracePeriodSeconds {grace_raw!r}") from None
        propagation = q.get("propagationPolicy") or opts.get("propagationPolicy")
        orphan = q.get("orphanDependents", opts.get("orphanDependents"))
        if propagation is None and orphan is not None:
            propagation = "Orphan" if str(orphan).lower() == "true" else "Background"
        dry = dry or bool(opts.get("dryRun"))
        if verb == "deletecollection":
            out = api.do_delete_collection(
                rd, ns, q.get("labelSelector"), q.get("fieldSelector"), grace, propagation, dry, ctx
            )
            return _Reply(200, _dumps(out))
        assert name is not None
        if sub is not None:
            raise errors.method_not_allowed()
        options: DeleteOptions = {
            "grace_period_seconds": grace,
            "propagation_policy": propagation,
            "preconditions": opts.get("preconditions"),
            "dry_run": dry,
        }
        deleted, code = api.do_delete(rd, ns, name, ctx, options)
        return self._object_reply(code, deleted)

    # -------------------------------------------------------------------- watch

    def _client_gone(self) -> bool:
        conn = self.connection
        if self.server.stopping.is_set():
            return True
        try:
            readable, _, _ = select.select([conn], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _watch(self, rd: ResourceDef, ns: str | None, q: Mapping[str, str]) -> None:
        api = self.server.api
        timeout_raw = q.get("timeoutSeconds")
        try:
            timeout = float(timeout_raw) if timeout_raw else None
        except ValueError:
            raise errors.bad_request(f"invalid timeoutSeconds {timeout_raw!r}") from None
        bookmarks = q.get("allowWatchBookmarks", "").lower() in ("true", "1")
        if self._wants_table():  # a bad includeObject is a 400, before the stream starts
            tables.to_table(rd, [], api.clock.now(), "", q.get("includeObject"))
        gone: JSON | None = None
        w: ApiWatch | None = None
        try:
            w = api.do_watch(
                rd,
                ns,
                q.get("resourceVersion"),
                q.get("labelSelector"),
                q.get("fieldSelector"),
                bookmarks,
                timeout,
                copy_objects=False,
            )
        except ApiError as exc:
            if exc.code != 410:
                raise
            gone = exc.status
        self._streamed = True
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            "Cache-Control: no-cache, private\r\n\r\n"
        )
        try:
            self.wfile.write(head.encode("latin-1"))
            if gone is not None:
                self._chunk(_dumps_line({"type": "ERROR", "object": gone}))
            elif w is not None:
                self.server.track_watch(w, True)
                w.idle_check = lambda: not self._client_gone()
                as_table, headers = self._wants_table(), True
                for ev in w:
                    if as_table and ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                        # Only the first event's Table carries the column definitions, as in kube-apiserver.
                        obj = ev["object"]
                        table = tables.to_table(
                            rd,
                            [obj],
                            api.clock.now(),
                            str(obj["metadata"].get("resourceVersion")),
                            q.get("includeObject"),
                            headers=headers,
                        )
                        ev, headers = {"type": ev["type"], "object": table}, False
                        self._chunk(_dumps_line(ev))
                    else:
                        self._chunk(self.server.encoded_events.line(rd, ev, _dumps_line))
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, ssl.SSLError):
            self.close_connection = True
        finally:
            if w is not None:
                w.close()
                self.server.track_watch(w, False)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


class _HttpServer(TLSThreadingHTTPServer):
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        addr: tuple[str, int],
        api: ApiServer,
        ssl_ctx: ssl.SSLContext,
        authenticator: TokenAuthenticator,
    ) -> None:
        self.api = api
        self.authenticator = authenticator
        self.errors: deque[str] = deque(maxlen=100)
        self.refusals: deque[str] = deque(maxlen=1000)
        self.cpu_seconds = 0.0
        self.requests = 0
        self._stat_lock = threading.Lock()
        self._watches: set[ApiWatch] = set()
        self.encoded_events = EncodedEvents()
        super().__init__(addr, _Handler, ssl_ctx, thread_name="apiserver-conn")

    def account(self, cpu: float) -> None:
        with self._stat_lock:
            self.cpu_seconds += cpu
            self.requests += 1

    def track_watch(self, w: ApiWatch, add: bool) -> None:
        with self._track_lock:
            if add:
                self._watches.add(w)
            else:
                self._watches.discard(w)

    def connection_failed(self, exc: Exception) -> None:
        self.errors.append("".join(traceback.format_exception(exc)))

    def close_streams(self) -> None:
        with self._track_lock:
            watches = list(self._watches)
        for w in watches:
            w.close()


@dataclass
class RunningServer(ThreadedServer):
    """A started HTTPS front end. `url` (https://127.0.0.1:PORT), `ca_pem` (the CA
    clients must trust), `write_kubeconfig(path)` (the cluster administrator's),
    `issue_token(user)` / `service_account_kubeconfig(path, ns, name)` for other
    identities, `stop()`; usable as a context manager."""

    api: ApiServer
    url: str
    host: str
    port: int
    ca_pem: str
    ca: CertificateAuthority
    token: str
    """The administrator's bearer token (`kubernetes-admin` in `system:masters`)."""
    authenticator: TokenAuthenticator
    _server: _HttpServer
    _thread: threading.Thread

    @property
    def cpu_seconds(self) -> float:
        """Handler-thread CPU spent on completed non-watch requests."""
        return self._server.cpu_seconds

    @property
    def requests(self) -> int:
        return self._server.requests

    @property
    def refusals(self) -> list[str]:
        """The latest 401/403 answers (bounded): `code METHOD path user: message`."""
        return list(self._server.refusals)

    @property
    def errors(self) -> list[str]:
        """Tracebacks of unexpected exceptions (each was answered with a 500 Status)."""
        return list(self._server.errors)

    def reset_stats(self) -> None:
        with self._server._stat_lock:
            self._server.cpu_seconds = 0.0
            self._server.requests = 0

    def kubeconfig(
        self,
        namespace: str = "default",
        context: str = "spreadgate",
        *,
        token: str | None = None,
        user_name: str = "admin",
    ) -> JSON:
        """A kubeconfig for this server: the administrator's, or the holder of `token`'s."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": context,
            "preferences": {},
            "clusters": [
                {
                    "name": context,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem.encode()).decode(),
                    },
                }
            ],
            "users": [{"name": f"{context}-{user_name}", "user": {"token": token or self.token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": f"{context}-{user_name}", "namespace": namespace},
                }
            ],
        }

    def write_kubeconfig(
        self,
        path: str,
        namespace: str = "default",
        context: str = "spreadgate",
        *,
        token: str | None = None,
        user_name: str = "admin",
    ) -> str:
        """Write a kubeconfig with the CA data embedded; returns the path."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yaml.safe_dump(
                self.kubeconfig(namespace, context, token=token, user_name=user_name), f, sort_keys=False
            )
        return path

    def issue_token(self, user: UserInfo) -> str:
        """A bearer token that authenticates as `user` (plus `system:authenticated`)."""
        return self.authenticator.issue(user)

    def service_account_kubeconfig(self, path: str, namespace: str, name: str) -> str:
        """Write a kubeconfig that authenticates as the ServiceAccount `namespace/name`, as a
        pod running under it would (the ServiceAccount object itself is not required)."""
        token = self.authenticator.issue_service_account_token(namespace, name)
        return self.write_kubeconfig(path, namespace, token=token, user_name=name)


def serve_https(
    api: ApiServer, host: str = "127.0.0.1", port: int = 0, *, ca: CertificateAuthority | None = None
) -> RunningServer:
    """Serve `api` over HTTPS on `host:port` (port 0 picks a free one)."""
    ca = ca or CertificateAuthority()
    cert = ca.issue(dns_names=["localhost", "kubernetes", "kubernetes.default.svc"], ip_addresses=[host])
    authenticator = TokenAuthenticator()
    admin_token = authenticator.issue(ADMIN)
    server = _HttpServer((host, port), api, cert.server_context(), authenticator)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="apiserver-accept", daemon=True
    )
    thread.start()
    bound_port = int(server.server_address[1])
    return RunningServer(
        api,
        f"https://{host}:{bound_port}",
        host,
        bound_port,
        ca.cert_pem,
        ca,
        admin_token,
        authenticator,
        server,
        thread,
    )
