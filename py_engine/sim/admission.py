"""Dynamic admission: calling mutating and validating webhooks over HTTPS.

The API server asks `Admission` to mutate and then validate each write. The
matching rules, request and response handling follow
`admissionregistration.k8s.io/v1` and `admission.k8s.io/v1`:

- rules: operations, apiGroups, apiVersions, resources (with `*`,
  `pods/eviction`, `pods/*`, `*/status`, `*/*`), scope; `matchPolicy:
  Equivalent` (the default) ignores the version, since the emulator serves one
  version of each group resource; `Exact` requires it;
- `namespaceSelector` against the namespace's labels (a Namespace object is
  matched by its own labels; other cluster-scoped objects always match),
  `objectSelector` against the object's or the old object's labels;
- `failurePolicy` Fail (default: a call failure is a 500) or Ignore;
  `timeoutSeconds` (default 10); `sideEffects` with `dryRun` (a dry-run request
  matching a webhook whose side effects are `Some`/`Unknown` is a 400);
- mutating configurations in name order, each webhook in list order, JSONPatch
  responses applied and the result re-checked to be a well-formed object of
  the same kind/name; then validating webhooks (called sequentially - the real
  server calls them in parallel, which only matters for latency);
- denials become the webhook's status (code defaults to 400) with the message
  `admission webhook "x" denied the request: ...`, as Kubernetes words it;
  `warnings` are collected for the response's `Warning` headers.

`reinvocationPolicy: IfNeeded` is accepted but webhooks are never re-invoked.

Service references (`clientConfig.service`) are mapped to URLs through the
`service_resolver`, a dict `{(namespace, name, port): "https://127.0.0.1:PORT"}`
or a callable with the same arguments; TLS is then verified against the
service DNS name `name.namespace.svc`, as the real server does, so a webhook
certificate for that name works on loopback. Connections are pooled per CA
bundle (`urllib3.PoolManager`), so many admissions reuse TLS sessions.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import jsonpatch
import urllib3

from py_engine.semantics.labels import (
    Selector,
    SelectorError,
    everything,
    labels_of,
    selector_from_label_selector,
)
from py_engine.sim import errors
from py_engine.sim.interface import JSON, ApiError

ServiceResolver = Mapping[tuple[str, str, int], str] | Callable[[str, str, int], str | None]

MUTATING = "mutatingwebhookconfigurations"
VALIDATING = "validatingwebhookconfigurations"


@dataclass
class AdmissionAttributes:
    """What is being admitted. `kind`/`api_group`/`api_version` describe `object`
    (e.g. policy/v1 Eviction for `pods/eviction`, autoscaling/v1 Scale)."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    group: str
    version: str
    resource: str
    subresource: str | None
    namespaced: bool
    namespace: str
    name: str
    object: JSON | None
    old_object: JSON | None
    kind_group: str
    kind_version: str
    kind: str
    dry_run: bool
    options: JSON | None
    user_info: JSON


@dataclass(frozen=True)
class CompiledWebhook:
    config_name: str
    name: str
    rules: tuple[JSON, ...]
    namespace_selector: Selector
    object_selector: Selector
    failure_policy: str
    timeout: float
    side_effects: str
    match_policy: str
    client_config: JSON


def _rule_matches(rule: JSON, a: AdmissionAttributes, exact: bool) -> bool:
    ops = rule.get("operations") or []
    if "*" not in ops and a.operation not in ops:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and a.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if exact and "*" not in versions and a.version not in versions:
        return False
    scope = rule.get("scope", "*")
    if scope == "Cluster" and a.namespaced:
        return False
    if scope == "Namespaced" and not a.namespaced:
        return False
    for r in rule.get("resources") or []:
        res, slash, sub = str(r).partition("/")
        if slash:
            if (res == "*" or res == a.resource) and (sub == "*" or sub == a.subresource):
                return True
        elif a.subresource is None and (res == "*" or res == a.resource):
            return True
    return False


def compile_config(cfg: JSON) -> list[CompiledWebhook]:
    out: list[CompiledWebhook] = []
    cname = str((cfg.get("metadata") or {}).get("name", ""))
    for wh in cfg.get("webhooks") or []:
        try:
            ns_sel = (
                selector_from_label_selector(wh["namespaceSelector"])
                if wh.get("namespaceSelector") is not None
                else everything()
            )
            obj_sel = (
                selector_from_label_selector(wh["objectSelector"])
                if wh.get("objectSelector") is not None
                else everything()
            )
        except SelectorError:  # rejected at validation time; be safe
            continue
        out.append(
            CompiledWebhook(
                cname,
                str(wh.get("name", "")),
                tuple(wh.get("rules") or ()),
                ns_sel,
                obj_sel,
                str(wh.get("failurePolicy", "Fail")),
                float(wh.get("timeoutSeconds", 10)),
                str(wh.get("sideEffects", "Unknown")),
                str(wh.get("matchPolicy", "Equivalent")),
                dict(wh.get("clientConfig") or {}),
            )
        )
    return out


class _WebhookFailure(Exception):
    """A call that did not produce a usable response (subject to failurePolicy)."""


@dataclass
class Admission:
    """Calls the registered webhooks for each admitted request.

    `configs(resource)` returns the stored webhook configurations
    (`MUTATING`/`VALIDATING`); `namespace_labels(ns)` the labels of a namespace
    (None if absent). Audit records of every call are kept in `audit` (bounded).
    """

    configs: Callable[[str], list[JSON]]
    namespace_labels: Callable[[str], Mapping[str, str] | None]
    service_resolver: ServiceResolver | None = None
    audit_size: int = 1000
    audit: deque[JSON] = field(init=False)

    def __post_init__(self) -> None:
        self.audit = deque(maxlen=self.audit_size)
        self._lock = threading.Lock()
        self._compiled: dict[tuple[str, str, str], list[CompiledWebhook]] = {}
        self._pools: dict[str, urllib3.PoolManager] = {}
        self._closed = False
        self.calls_total = 0
        """Webhook calls attempted since construction (benchmarks, tests)."""

    # ----------------------------------------------------------- config cache

    def _webhooks(self, kind: str) -> list[CompiledWebhook]:
        cfgs = self.configs(kind)
        if not cfgs:
            return []
        out: list[CompiledWebhook] = []
        keep: set[tuple[str, str, str]] = set()
        for cfg in sorted(cfgs, key=lambda c: str((c.get("metadata") or {}).get("name", ""))):
            meta = cfg.get("metadata") or {}
            key = (kind, str(meta.get("name", "")), str(meta.get("resourceVersion", "")))
            keep.add(key)
            compiled = self._compiled.get(key)
            if compiled is None:
                compiled = compile_config(cfg)
                with self._lock:
                    self._compiled[key] = compiled
            out.extend(compiled)
        with self._lock:
            for k in [k for k in self._compiled if k[0] == kind and k not in keep]:
                del self._compiled[k]
        return out

    def _matches(self, wh: CompiledWebhook, a: AdmissionAttributes) -> bool:
        exact = wh.match_policy == "Exact"
        if not any(_rule_matches(r, a, exact) for r in wh.rules):
            return False
        if not wh.namespace_selector.empty():
            if a.resource == "namespaces" and a.subresource is None and not a.group:
                ns_labels: Mapping[str, str] | None = labels_of(a.object or a.old_object or {})
            elif a.namespaced:
                ns_labels = self.namespace_labels(a.namespace) or {}
            else:
                ns_labels = None
            if ns_labels is not None and not wh.namespace_selector.matches(ns_labels):
                return False
        return not (
            not wh.object_selector.empty()
            and not (
                wh.object_selector.matches(labels_of(a.object or {}))
                or wh.object_selector.matches(labels_of(a.old_object or {}))
            )
        )

    # ---------------------------------------------------------------- public

    def has_webhooks(self) -> bool:
        return bool(self.configs(MUTATING) or self.configs(VALIDATING))

    def mutate(self, a: AdmissionAttributes, warnings: list[str]) -> JSON | None:
        """Run matching mutating webhooks; returns the (possibly) mutated object."""
        hooks = [w for w in self._webhooks(MUTATING) if self._matches(w, a)]
        if not hooks:
            return a.object
        obj = a.object
        for wh in hooks:
            a.object = obj
            response = self._call(wh, a, warnings)
            if response is None:
                continue
            patch_b64 = response.get("patch")
            if patch_b64 and obj is not None:
                if response.get("patchType", "JSONPatch") != "JSONPatch":
                    self._fail(wh, "unsupported patchType " + str(response.get("patchType")))
                    continue
                try:
                    ops = json.loads(base64.b64decode(patch_b64))
                    mutated = jsonpatch.apply_patch(obj, ops, in_place=False)
                except Exception as exc:
                    if wh.failure_policy == "Ignore":
                        continue
                    raise errors.internal(
                        f'admission webhook "{wh.name}" returned an invalid patch: {exc}'
                    ) from exc
                problem = _malformed(obj, mutated)
                if problem:
                    raise errors.internal(
                        f'admission webhook "{wh.name}" produced an invalid object: {problem}'
                    )
                obj = mutated
        a.object = obj
        return obj

    def validate(self, a: AdmissionAttributes, warnings: list[str]) -> None:
        for wh in self._webhooks(VALIDATING):
            if self._matches(wh, a):
                self._call(wh, a, warnings)

    def close(self) -> None:
        """Close pooled webhook connections (call when the server stops)."""
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
            self._closed = True
        for pm in pools:
            pm.clear()

    # ------------------------------------------------------------------ call

    def _fail(self, wh: CompiledWebhook, why: str) -> None:
        if wh.failure_policy != "Ignore":
            raise errors.internal(f'failed calling webhook "{wh.name}": {why}')

    def _call(self, wh: CompiledWebhook, a: AdmissionAttributes, warnings: list[str]) -> JSON | None:
        """Call one webhook. Returns its response when allowed (None when ignored)."""
        if a.dry_run and wh.side_effects not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{wh.name}" does not support dry run')
        self.calls_total += 1
        uid = str(uuid.uuid4())
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": self._request(uid, a),
        }
        started = time.monotonic()
        record: JSON = {
            "webhook": wh.name,
            "configuration": wh.config_name,
            "operation": a.operation,
            "resource": a.resource,
            "subresource": a.subresource,
            "namespace": a.namespace,
            "name": a.name,
            "dryRun": a.dry_run,
        }
        try:
            response = self._post(wh, review, uid)
        except _WebhookFailure as exc:
            record.update(error=str(exc), latency_ms=(time.monotonic() - started) * 1000)
            self.audit.append(record)
            if wh.failure_policy == "Ignore":
                return None
            raise errors.internal(f'failed calling webhook "{wh.name}": {exc}') from None
        allowed = bool(response.get("allowed", False))
        hook_warnings = [str(w) for w in response.get("warnings") or []]
        warnings.extend(hook_warnings)
        record.update(
            allowed=allowed,
            patched=bool(response.get("patch")),
            warnings=hook_warnings,
            latency_ms=(time.monotonic() - started) * 1000,
        )
        self.audit.append(record)
        if not allowed:
            raise _denial(wh.name, response.get("status"))
        return response

    def _request(self, uid: str, a: AdmissionAttributes) -> JSON:
        req: JSON = {
            "uid": uid,
            "kind": {"group": a.kind_group, "version": a.kind_version, "kind": a.kind},
            "resource": {"group": a.group, "version": a.version, "resource": a.resource},
            "requestKind": {"group": a.kind_group, "version": a.kind_version, "kind": a.kind},
            "requestResource": {"group": a.group, "version": a.version, "resource": a.resource},
            "name": a.name,
            "operation": a.operation,
            "userInfo": a.user_info,
            "object": a.object,
            "oldObject": a.old_object,
            "dryRun": a.dry_run,
            "options": a.options,
        }
        if a.subresource:
            req["subResource"] = a.subresource
            req["requestSubResource"] = a.subresource
        if a.namespaced:
            req["namespace"] = a.namespace
        return req

    def _pool_for(self, wh: CompiledWebhook) -> tuple[urllib3.HTTPConnectionPool, str]:
        cc = wh.client_config
        ca_b64 = cc.get("caBundle")
        ca_pem = base64.b64decode(ca_b64).decode() if ca_b64 else None
        if cc.get("url"):
            url = str(cc["url"])
            verify_name = None
        else:
            svc = cc.get("service") or {}
            ns, name, port = (
                str(svc.get("namespace", "")),
                str(svc.get("name", "")),
                int(svc.get("port", 443)),
            )
            base = self._resolve(ns, name, port)
            if base is None:
                raise _WebhookFailure(
                    f'service "{ns}/{name}:{port}" has no endpoint (not in the service resolver)'
                )
            url = base.rstrip("/") + (svc.get("path") or "")
            verify_name = f"{name}.{ns}.svc"
        parts = urlsplit(url)
        if parts.scheme != "https":
            raise _WebhookFailure(f"webhook URL must use https: {url}")
        pool_key = ca_pem or ""
        with self._lock:
            if self._closed:
                raise _WebhookFailure("admission is shut down")
            pm = self._pools.get(pool_key)
            if pm is None:
                kwargs: dict[str, Any] = {"cert_reqs": "CERT_REQUIRED", "maxsize": 16, "block": False}
                if ca_pem:
                    kwargs["ca_cert_data"] = ca_pem
                pm = urllib3.PoolManager(num_pools=32, **kwargs)
                self._pools[pool_key] = pm
        pool_kwargs = (
            {"assert_hostname": verify_name, "server_hostname": verify_name} if verify_name else None
        )
        pool = pm.connection_from_host(
            parts.hostname or "", parts.port or 443, "https", pool_kwargs=pool_kwargs
        )
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        return pool, path

    def _resolve(self, ns: str, name: str, port: int) -> str | None:
        r = self.service_resolver
        if r is None:
            return None
        if callable(r):
            return r(ns, name, port)
        return r.get((ns, name, port))

    def _post(self, wh: CompiledWebhook, review: JSON, uid: str) -> JSON:
        try:
            pool, path = self._pool_for(wh)
        except (ValueError, TypeError) as exc:
            raise _WebhookFailure(f"invalid client config: {exc}") from None
        body = json.dumps(review, separators=(",", ":")).encode()
        try:
            resp = pool.urlopen(
                "POST",
                path,
                body=body,
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                timeout=urllib3.Timeout(total=wh.timeout),
                retries=False,
                assert_same_host=False,
                preload_content=True,
            )
        except urllib3.exceptions.HTTPError as exc:
            raise _WebhookFailure(f'failed to call webhook: Post "{pool.host}{path}": {exc}') from None
        if resp.status != 200:
            raise _WebhookFailure(f"expected webhook response of 200, got {resp.status}")
        try:
            data = json.loads(resp.data)
        except ValueError as exc:
            raise _WebhookFailure(f"received invalid webhook response: {exc}") from None
        response = data.get("response") if isinstance(data, dict) else None
        if not isinstance(response, dict):
            raise _WebhookFailure("webhook response was absent")
        if response.get("uid") != uid:
            raise _WebhookFailure(f'expected response.uid="{uid}", got "{response.get("uid")}"')
        return response


def _denial(name: str, result: Any) -> ApiError:
    st: JSON = dict(result) if isinstance(result, dict) else {}
    code = int(st.get("code") or 0)
    if code < 400:
        code = 400
    denied_by = f'admission webhook "{name}" denied the request'
    if st.get("message"):
        msg = f"{denied_by}: {st['message']}"
    elif st.get("reason"):
        msg = f"{denied_by}: {st['reason']}"
    else:
        msg = f"{denied_by} without explanation"
    out = errors.status(code, str(st.get("reason") or ""), msg, st.get("details"))
    return ApiError(out)


def _malformed(before: JSON, after: Any) -> str | None:
    if not isinstance(after, dict):
        return "the patched object is not a JSON object"
    if not isinstance(after.get("metadata"), dict):
        return "metadata must be an object"
    for key in ("apiVersion", "kind"):
        if before.get(key) != after.get(key):
            return f"{key} may not be changed by a mutating webhook"
    bm, am = before.get("metadata") or {}, after["metadata"]
    for key in ("name", "namespace"):
        if bm.get(key) != am.get(key):
            return f"metadata.{key} may not be changed by a mutating webhook"
    return None


def copy_for_review(obj: JSON | None) -> JSON | None:
    """Objects sent to webhooks are independent copies (webhooks see a snapshot)."""
    return copy.deepcopy(obj) if obj is not None else None
