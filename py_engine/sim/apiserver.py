"""The in-process Kubernetes API server: `ApiServer`, whose verbs are `ClusterAPI`'s.

In-process controllers call it directly; the HTTPS front end
(`py_engine.sim.http_server.serve_https`) translates HTTP requests into the
same internal verbs, so both paths share one implementation of the semantics
Spreadgate depends on:

- metadata: uid, generateName, creationTimestamp (from the injected `Clock`),
  `generation` bumped on spec changes, one global monotonically increasing
  resourceVersion; stale resourceVersion on update -> 409 Conflict; a no-op
  update writes nothing (no event, same resourceVersion);
- status subresource isolation: main writes keep the stored status, status
  writes keep everything but status;
- merge, JSON and strategic-merge patches (strategic merge is 415 for CRDs), and
  server-side apply (`do_apply`, py_engine/sim/apply.py) with field managers recorded in
  `metadata.managedFields` for every create, update, patch and scale
  (docs/server-side-apply.md);
- list/watch with label and field selectors, watch resume and 410 Gone,
  synthetic ADDED events for a watch without resourceVersion, bookmarks;
- graceful deletion (pods on a node get a grace period and are removed when
  deleted again with gracePeriodSeconds=0; unscheduled or terminal pods go at
  once), finalizers, propagationPolicy Foreground/Orphan finalizers (the
  garbage-collector controller, not this server, deletes dependents and
  removes `foregroundDeletion`/`orphan`), dry-run;
- subresources: pods/status, pods/eviction, pods/binding, `scale` for
  deployments/replicasets/statefulsets and CRDs declaring it;
- admission webhooks for CREATE/UPDATE/DELETE and pods/eviction,
  pods/binding CREATE; warnings are returned per request;
- RBAC objects (`rbac.authorization.k8s.io/v1`, with kube-apiserver's default
  ClusterRoles and bindings created at start, py_engine/sim/rbac_bootstrap.py) and the
  access reviews answered from them (py_engine/sim/access_reviews.py). Requests over
  HTTPS are authenticated and authorized by the front end (py_engine/sim/http_server.py);
  in-process calls are trusted, whoever `as_user` says they come from.

Namespace deletion is simplified: the namespace turns Terminating, the server
itself deletes its contents (no namespace controller) and removes the
namespace once it is empty. CRD deletion removes the custom objects at once.
PodDisruptionBudgets are not modelled: an eviction always deletes the pod.
"""

from __future__ import annotations

import builtins
import contextlib
import queue
import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar, Unpack

import jsonpatch
import jsonpointer

from py_engine.semantics import objects
from py_engine.semantics.clock import Clock, RealClock
from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.labels import SelectorError, format_label_selector, parse_selector
from py_engine.semantics.strategic_merge import StrategicMergeError, json_merge_patch, strategic_merge
from py_engine.semantics.timeutil import format_time
from py_engine.sim import access_reviews, apply_schema, errors, kinds, managed_fields, rbac_bootstrap
from py_engine.sim import apply as ssa
from py_engine.sim.admission import MUTATING, VALIDATING, Admission, AdmissionAttributes, ServiceResolver
from py_engine.sim.authorizer import Authorizer
from py_engine.sim.defaulting import (
    declares_defaults,
    default_custom_object,
    default_custom_status,
    needs_defaults,
)
from py_engine.sim.faults import FaultInjector
from py_engine.sim.identity import user_from_json
from py_engine.sim.interface import (
    JSON,
    ApiError,
    CreateOptions,
    DeleteCollectionOptions,
    DeleteOptions,
    PatchOptions,
    PatchType,
    Selectors,
    WatchEvent,
    WatchOptions,
    WriteOptions,
)
from py_engine.sim.pruning import prune_custom_object, prune_custom_status
from py_engine.sim.rbac_aggregation import ClusterRoleAggregator
from py_engine.sim.resources import (
    Registry,
    ResourceDef,
    UnknownResource,
    builtin_defs,
    defs_from_crd,
    get_path,
    set_path,
)
from py_engine.sim.selectors import FieldSelectorError, field_predicate, parse_field_selector
from py_engine.sim.store import Store, StoreConflict, StoreExists, StoreMissing, TooOld, Watcher
from py_engine.sim.structural import validate_custom_object

MAX_OBJECT_BYTES = 3 * 1024 * 1024
"""Kubernetes rejects request bodies above 3 MiB (etcd's object limit is ~1.5 MiB)."""

DEFAULT_USER: JSON = {
    "username": "system:admin",
    "uid": "0",
    "groups": ["system:masters", "system:authenticated"],
}

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-node-lease", "kube-public")
_UNDELETABLE_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_RETRIES = 16
_T = TypeVar("_T")
_IMMUTABLE_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "namespace",
    "name",
    "generation",
)


@dataclass
class RequestContext:
    """Per-request data: who asks, where from, and the warnings collected."""

    user: JSON = field(default_factory=lambda: dict(DEFAULT_USER))
    external: bool = False
    warnings: list[str] = field(default_factory=list)
    field_manager: str | None = None
    """The request's `fieldManager` (required for an apply patch)."""
    user_agent: str = ""
    """Names the writer when `field_manager` is not given, as kube-apiserver does."""

    def manager(self) -> str:
        return managed_fields.manager_name(
            self.field_manager, self.user_agent, str(self.user.get("username", ""))
        )


class _Retry(Exception):
    """The object changed between read and write; re-read and try again."""


def _rv(obj: Mapping[str, Any]) -> str:
    return str(objects.meta(obj).get("resourceVersion", ""))


def _spec_part(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if _spec_part(a) != _spec_part(b) or a.get("status") != b.get("status"):
        return False
    ma = {k: v for k, v in objects.meta(a).items() if k != "resourceVersion"}
    mb = {k: v for k, v in objects.meta(b).items() if k != "resourceVersion"}
    return ma == mb


class ApiWatch:
    """A live watch (implements `interface.Watch`). Iterate for events; `close()` stops.

    Bookmarks (when allowed) are sent every `bookmark_interval` seconds of
    quiet, carrying a resourceVersion from which a resumed watch misses nothing.
    """

    def __init__(
        self,
        server: ApiServer,
        rd: ResourceDef,
        watcher: Watcher,
        initial: list[tuple[str, JSON, int]],
        *,
        bookmarks: bool,
        timeout: float | None,
        bookmark_interval: float,
        copy_objects: bool,
    ) -> None:
        self._server = server
        self._rd = rd
        self._watcher = watcher
        self._initial = initial
        self._bookmarks = bookmarks
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._interval = bookmark_interval
        self._copy = copy_objects
        self.closed = False
        self.idle_check: Callable[[], bool] | None = None
        """Called when no event arrived for a while; returning False ends the watch
        (the HTTP front end uses it to notice clients that went away)."""

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._server.store.unwatch(self._watcher)

    def _event(self, typ: str, obj: JSON) -> WatchEvent:
        out = self._server.present(self._rd, obj)
        return {"type": typ, "object": json_copy(out) if self._copy else out}

    def __iter__(self) -> Iterator[WatchEvent]:
        try:
            for typ, obj, _ in self._initial:
                if self.closed:
                    return
                yield self._event(typ, obj)
            self._initial = []
            q = self._watcher.queue
            next_bookmark = time.monotonic() + self._interval
            while not self.closed:
                now = time.monotonic()
                if self._deadline is not None and now >= self._deadline:
                    return
                wait = min(next_bookmark - now, 1.0) if self._bookmarks else 1.0
                if self._deadline is not None:
                    wait = min(wait, self._deadline - now)
                try:
                    item = q.get(timeout=max(wait, 0.001))
                except queue.Empty:
                    if self.idle_check is not None and not self.idle_check():
                        return
                    if self._bookmarks and time.monotonic() >= next_bookmark:
                        rv = self._server.store.resource_version
                        if q.empty():
                            yield {
                                "type": "BOOKMARK",
                                "object": {
                                    "kind": self._rd.kind,
                                    "apiVersion": self._rd.api_version,
                                    "metadata": {"resourceVersion": str(rv)},
                                },
                            }
                        next_bookmark = time.monotonic() + self._interval
                    continue
                if Watcher.is_close(item):
                    return
                typ, obj, _ = item
                yield self._event(typ, obj)
        finally:
            self.close()


class ClusterAPI:
    """The verbs of the API server for in-process callers, with the same semantics as over HTTP.

    Every verb raises `ApiError` for what Kubernetes answers with a Status (404 NotFound, 409
    Conflict/AlreadyExists, 422 Invalid, 410 Gone, 403, 429, 500, 504). `namespace` is None for
    cluster-scoped resources and for all-namespace list/watch; the keyword options are the
    `interface` module's TypedDicts.

    `ApiServer` (as `DEFAULT_USER`) and `UserScopedApi` (as any user) share this one front:
    each verb resolves the resource, consults the fault injector and hands a private copy of
    the request to the server's `do_*` implementation (the one the HTTPS front end calls
    too), so the two views cannot drift apart.
    """

    _server: ApiServer
    _user: JSON

    def _begin(
        self, resource: str, verb: str, subresource: str | None, name: str, field_manager: str | None = None
    ) -> tuple[ResourceDef, RequestContext]:
        ctx = self._server._ctx(RequestContext(user=dict(self._user)))
        if field_manager is not None:
            ctx.field_manager = field_manager
        rd = self._server.resolve(resource)
        self._server._fault(rd, subresource, verb, name, ctx)
        return rd, ctx

    def create(
        self, resource: str, namespace: str | None, obj: JSON, **options: Unpack[CreateOptions]
    ) -> JSON:
        subresource, name, dry_run = (
            options.get("subresource"),
            options.get("name"),
            options.get("dry_run", False),
        )
        rd, ctx = self._begin(resource, "create", subresource, name or "")
        out, _ = self._server.do_create(
            rd, namespace, json_copy(obj), subresource=subresource, name=name, dry_run=dry_run, ctx=ctx
        )
        return json_copy(out)

    def get(self, resource: str, namespace: str | None, name: str, *, subresource: str | None = None) -> JSON:
        rd, _ = self._begin(resource, "get", subresource, name)
        return json_copy(self._server.do_get(rd, namespace, name, subresource))

    def list(self, resource: str, namespace: str | None = None, **selectors: Unpack[Selectors]) -> JSON:
        rd, _ = self._begin(resource, "list", None, "")
        out = self._server.do_list(
            rd, namespace, selectors.get("label_selector"), selectors.get("field_selector")
        )
        out["items"] = json_copy(out["items"])
        return out

    def update(
        self, resource: str, namespace: str | None, name: str, obj: JSON, **options: Unpack[WriteOptions]
    ) -> JSON:
        subresource, dry_run = options.get("subresource"), options.get("dry_run", False)
        rd, ctx = self._begin(resource, "update", subresource, name)
        out = self._server.do_update(
            rd, namespace, name, json_copy(obj), subresource=subresource, dry_run=dry_run, ctx=ctx
        )
        return json_copy(out)

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType | str,
        **options: Unpack[PatchOptions],
    ) -> JSON:
        """`patch_type` `apply` is server-side apply (`field_manager` required, `force` takes over
        conflicting fields), as `application/apply-patch+yaml` is over HTTPS."""
        subresource, dry_run = options.get("subresource"), options.get("dry_run", False)
        rd, ctx = self._begin(resource, "patch", subresource, name, options.get("field_manager"))
        force = options.get("force", False)
        out = self._server.do_patch(
            rd,
            namespace,
            name,
            patch,
            patch_type,
            subresource=subresource,
            dry_run=dry_run,
            ctx=ctx,
            force=force,
        )
        return json_copy(out)

    def delete(
        self, resource: str, namespace: str | None, name: str, **options: Unpack[DeleteOptions]
    ) -> JSON:
        rd, ctx = self._begin(resource, "delete", None, name)
        out, _ = self._server.do_delete(rd, namespace, name, ctx, options)
        return json_copy(out)

    def delete_collection(
        self, resource: str, namespace: str | None = None, **options: Unpack[DeleteCollectionOptions]
    ) -> JSON:
        """Delete every selected object (NotFound races are ignored)."""
        rd, ctx = self._begin(resource, "deletecollection", None, "")
        out = self._server.do_delete_collection(
            rd,
            namespace,
            options.get("label_selector"),
            options.get("field_selector"),
            options.get("grace_period_seconds"),
            options.get("propagation_policy"),
            options.get("dry_run", False),
            ctx,
        )
        return json_copy(out)

    def watch(self, resource: str, namespace: str | None = None, **options: Unpack[WatchOptions]) -> ApiWatch:
        rd, _ = self._begin(resource, "watch", None, "")
        return self._server.do_watch(
            rd,
            namespace,
            options.get("resource_version"),
            options.get("label_selector"),
            options.get("field_selector"),
            options.get("allow_bookmarks", False),
            options.get("timeout_seconds"),
            copy_objects=True,
        )


class ApiServer(ClusterAPI):
    """The emulated API server (see the module docstring for semantics).

    `service_resolver` maps webhook `clientConfig.service` references to
    loopback URLs (see `py_engine.sim.admission`). `faults` is consulted for
    every HTTP request and, if `faults.in_process`, for in-process calls.
    `history_size` bounds the watch event history (older resume -> 410).
    `authorization_mode` is `RBAC` (default) or `AlwaysAllow` (py_engine/sim/authorizer.py).
    """

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        history_size: int = 10_000,
        service_resolver: ServiceResolver | None = None,
        faults: FaultInjector | None = None,
        bookmark_interval: float = 30.0,
        audit_size: int = 1000,
        max_object_bytes: int = MAX_OBJECT_BYTES,
        name_seed: int | None = None,
        authorization_mode: str = "RBAC",
    ) -> None:
        self._server = self
        self._user = DEFAULT_USER
        self.clock: Clock = clock or RealClock()
        # Suffixes of generated names: unpredictable as kube-apiserver's by default; drawn from a
        # seeded generator when a run must be reproducible (`spreadgate simulate`).
        self._name_chars: random.Random = (
            random.Random(name_seed) if name_seed is not None else secrets.SystemRandom()
        )
        self.store = Store(history_size)
        self.registry = Registry(builtin_defs())
        self.faults = faults or FaultInjector()
        self.bookmark_interval = bookmark_interval
        self.max_object_bytes = max_object_bytes
        self.admission = Admission(
            self._webhook_configs, self._namespace_labels, service_resolver, audit_size
        )
        self._tls = threading.local()
        self.store.on_removed.append(self._on_removed)
        self.authorizer = Authorizer(self.store, authorization_mode)
        self.aggregator = ClusterRoleAggregator(self.store)
        for ns in SYSTEM_NAMESPACES:
            self.create("v1/namespaces", None, {"metadata": {"name": ns}})
        for role in rbac_bootstrap.cluster_roles():
            self.create("rbac.authorization.k8s.io/v1/clusterroles", None, role)
        for binding in rbac_bootstrap.cluster_role_bindings():
            self.create("rbac.authorization.k8s.io/v1/clusterrolebindings", None, binding)

    # ------------------------------------------------------------ utilities

    def _generated_name(self, prefix: str) -> str:
        """`prefix` and five characters, as kube-apiserver completes a `generateName`."""
        return prefix + "".join(self._name_chars.choice(_NAME_CHARS) for _ in range(5))

    def close(self) -> None:
        """End all watches and close pooled webhook connections."""
        self.store.close_all_watchers()
        self.admission.close()

    def set_service_resolver(self, resolver: ServiceResolver | None) -> None:
        self.admission.service_resolver = resolver

    def last_warnings(self) -> builtins.list[str]:
        """Admission warnings of the calling thread's most recent request."""
        return list(getattr(self._tls, "warnings", []))

    @property
    def admission_audit(self) -> builtins.list[JSON]:
        """Recent webhook calls (bounded): webhook, operation, resource, allowed, warnings, latency."""
        return list(self.admission.audit)

    def resource_version(self) -> str:
        return str(self.store.resource_version)

    def resolve(self, resource: str) -> ResourceDef:
        try:
            return self.registry.resolve(resource)
        except UnknownResource:
            raise ApiError(
                errors.status(
                    404, "NotFound", "the server could not find the requested resource", {"kind": resource}
                )
            ) from None

    def present(self, rd: ResourceDef, obj: JSON) -> JSON:
        """The stored object as seen through `rd`'s version (identity conversion); a custom
        object is defaulted on read, as kube-apiserver defaults what it reads from storage
        (a default added to the schema later shows up without a write)."""
        if rd.crd and declares_defaults(rd.schema) and needs_defaults(obj, rd.schema):
            obj = json_copy(obj)
            default_custom_object(obj, rd.schema)
        if obj.get("apiVersion") == rd.api_version:
            return obj
        out = dict(obj)
        out["apiVersion"] = rd.api_version
        return out

    def _storage_api_version(self, rd: ResourceDef) -> str:
        if rd.crd and rd.storage_version:
            return f"{rd.group}/{rd.storage_version}"
        return rd.api_version

    def _now(self) -> str:
        return format_time(self.clock.now())

    def _ctx(self, ctx: RequestContext) -> RequestContext:
        """`ctx`, whose warnings `last_warnings` now reports for the calling thread."""
        self._tls.warnings = ctx.warnings
        return ctx

    def _fault(self, rd: ResourceDef, sub: str | None, verb: str, name: str, ctx: RequestContext) -> None:
        if not ctx.external and self.faults.in_process and self.faults.active:
            self.faults.apply(rd.plural, sub, verb, name)

    def _webhook_configs(self, kind: str) -> builtins.list[JSON]:
        return self.store.list(f"{kind}.admissionregistration.k8s.io")[0]

    def _namespace_labels(self, ns: str) -> Mapping[str, str] | None:
        obj = self.store.get("namespaces", "", ns)
        if obj is None:
            return None
        labels = objects.meta(obj).get("labels")
        return labels if isinstance(labels, dict) else {}

    def _ns_key(self, rd: ResourceDef, namespace: str | None, obj: JSON | None = None) -> str:
        if not rd.namespaced:
            return ""
        body_ns = objects.meta(obj).get("namespace") if obj is not None else None
        if namespace and body_ns and body_ns != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        ns = namespace or body_ns
        if not ns:
            raise errors.bad_request(f"a namespace is required for {rd.group_resource}")
        return str(ns)

    def _get_stored(self, rd: ResourceDef, ns: str, name: str) -> JSON:
        obj = self.store.get(rd.group_resource, ns, name)
        if obj is None:
            raise errors.not_found(rd.group, rd.plural, name)
        return obj

    def _check_kind(self, rd: ResourceDef, obj: Any) -> JSON:
        if not isinstance(obj, dict):
            raise errors.bad_request(f"the body of the request must be a JSON object ({rd.kind})")
        av = obj.get("apiVersion")
        if av and av != rd.api_version and not (rd.crd and str(av).startswith(rd.group + "/")):
            raise errors.bad_request(
                f"the API version in the data ({av}) does not match the expected API "
                f"version ({rd.api_version})"
            )
        kind = obj.get("kind")
        if kind and kind != rd.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rd.kind})"
            )
        if "metadata" in obj and not isinstance(obj["metadata"], dict):
            raise errors.bad_request("metadata must be a JSON object")
        obj["apiVersion"] = self._storage_api_version(rd)
        obj["kind"] = rd.kind
        obj.setdefault("metadata", {})
        return obj

    def _attrs(
        self,
        rd: ResourceDef,
        op: str,
        ns: str,
        name: str,
        obj: JSON | None,
        old: JSON | None,
        dry_run: bool,
        ctx: RequestContext,
        *,
        sub: str | None = None,
        kind: tuple[str, str, str] | None = None,
        options: JSON | None = None,
    ) -> AdmissionAttributes:
        kg, kv, kk = kind or (rd.group, rd.version, rd.kind)
        opt_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}.get(op)
        if options is None and opt_kind:
            options = {"apiVersion": "meta.k8s.io/v1", "kind": opt_kind}
            if dry_run:
                options["dryRun"] = ["All"]
        return AdmissionAttributes(
            op,
            rd.group,
            rd.version,
            rd.plural,
            sub,
            rd.namespaced,
            ns,
            name,
            obj,
            old,
            kg,
            kv,
            kk,
            dry_run,
            options,
            ctx.user,
        )

    def _admit(self, a: AdmissionAttributes, ctx: RequestContext, *, mutate: bool = True) -> JSON | None:
        if mutate:
            obj = self.admission.mutate(a, ctx.warnings)
            a.object = obj
        self.admission.validate(a, ctx.warnings)
        return a.object

    def _invalid(self, rd: ResourceDef, name: str, causes: builtins.list[kinds.Cause]) -> ApiError:
        return errors.invalid(rd.group, rd.kind, name, causes)

    def _validate_write(
        self,
        rd: ResourceDef,
        a: AdmissionAttributes,
        where: tuple[str, str],
        obj: JSON,
        causes: builtins.list[kinds.Cause],
        ctx: RequestContext,
    ) -> None:
        """The last gates of a create or update, in kube-apiserver's order: the built-in
        validation (`causes`), RBAC's escalation check, then the validating webhooks.
        `where` is the object's (namespace, name)."""
        ns, name = where
        if causes:
            raise self._invalid(rd, name, causes)
        if rd.group == "rbac.authorization.k8s.io":
            self.authorizer.confirm_no_escalation(user_from_json(ctx.user), rd.kind, obj, ns)
        a.object = obj
        self.admission.validate(a, ctx.warnings)

    def _admit_pod_action(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        body: JSON,
        dry_run: bool,
        ctx: RequestContext,
        kind: tuple[str, str, str],
    ) -> None:
        """Admission of a CREATE on a pod's action subresource (`eviction`, `binding`), whose
        body is of `kind`, not a Pod."""
        sub = kind[2].lower()
        a = self._attrs(rd, "CREATE", ns, name, body, None, dry_run, ctx, sub=sub, kind=kind)
        self._admit(a, ctx)

    @staticmethod
    def _check_precondition(rd: ResourceDef, name: str, field_name: str, want: Any, have: Any) -> None:
        """A delete precondition (`UID`, `ResourceVersion`) the object no longer meets is 409."""
        if want and want != have:
            raise errors.conflict(
                rd.group,
                rd.plural,
                name,
                f"Precondition failed: {field_name} in precondition: {want}, "
                f"{field_name} in object meta: {have}",
            )

    @staticmethod
    def _name_mismatch(found: Any, name: str) -> ApiError:
        """kube-apiserver's 400 for a body that names another object than the URL."""
        return errors.bad_request(
            f"the name of the object ({found}) does not match the name on the URL ({name})"
        )

    @staticmethod
    def _check_subresource(rd: ResourceDef, subresource: str | None, name: str) -> None:
        """Writes reach the object itself or its status (when the resource has one): else 404."""
        if subresource not in (None, "status") or (subresource == "status" and not rd.has_status):
            raise errors.not_found(rd.group, f"{rd.plural}/{subresource}", name)

    @staticmethod
    def _retrying(rd: ResourceDef, name: str, attempt: Callable[[], _T]) -> _T:
        """`attempt()` again while it loses a race to another writer (`_Retry`), at most
        `_RETRIES` times, then the 409 kube-apiserver gives a client that keeps losing."""
        for _ in range(_RETRIES):
            try:
                return attempt()
            except _Retry:
                continue
        raise errors.conflict(rd.group, rd.plural, name)

    @staticmethod
    def _stored(rd: ResourceDef, name: str, write: Callable[[], JSON], precondition: str = "") -> JSON:
        """`write()` to the store: a lost race is the caller's 409 when it sent a resourceVersion,
        else `_Retry`; a vanished object is 404."""
        try:
            return write()
        except StoreConflict:
            if precondition:
                raise errors.conflict(rd.group, rd.plural, name) from None
            raise _Retry() from None
        except StoreMissing:
            raise errors.not_found(rd.group, rd.plural, name) from None

    # ======================================================= field managers

    @staticmethod
    def _apply_schema(rd: ResourceDef) -> apply_schema.Schema:
        return apply_schema.object_schema(rd.kind, rd.schema, rd.crd)

    @staticmethod
    def _scope(rd: ResourceDef, subresource: str | None) -> str:
        """Which part of an object a write through `subresource` owns (py_engine/sim/apply.py `tracked`)."""
        if subresource == "status":
            return "status"
        return "main" if rd.has_status else "all"

    def _updated_managers(
        self, rd: ResourceDef, cur: JSON, new: JSON, subresource: str | None, ctx: RequestContext
    ) -> builtins.list[ssa.Manager]:
        """The managers after an ordinary write of `new` over `cur`. A main-resource write may set
        `managedFields` itself (`[]` or `[{}]` clears them); otherwise the stored ones carry on."""
        raw = objects.meta(new).get("managedFields")
        base: builtins.list[ssa.Manager] | None = None
        if subresource is None and managed_fields.is_reset(raw):
            base = []
        elif subresource is None and raw is not None and raw != objects.meta(cur).get("managedFields"):
            base = managed_fields.read_entries(raw)  # the writer's own entries, when readable
        if base is None:
            base = managed_fields.read(cur)
        return ssa.update(
            cur,
            new,
            self._apply_schema(rd),
            base,
            ctx.manager(),
            rd.api_version,
            subresource=subresource or "",
            scope=self._scope(rd, subresource),
            now=self._now(),
        )

    # ================================================================ create

    def do_create(
        self,
        rd: ResourceDef,
        namespace: str | None,
        obj: Any,
        *,
        subresource: str | None,
        name: str | None,
        dry_run: bool,
        ctx: RequestContext,
        managed: builtins.list[ssa.Manager] | None = None,
    ) -> tuple[JSON, int]:
        """Create; `obj` is owned (mutated). Returns (stored object or Status, HTTP code).
        `managed`: the managers of an object created by an apply (else the creator's `Update`)."""
        if rd.group in access_reviews.REVIEW_GROUPS:
            if rd.namespaced and not namespace:
                raise errors.bad_request(f"a namespace is required for {rd.group_resource}")
            return access_reviews.review(rd, namespace, obj, user_from_json(ctx.user), self.authorizer), 201
        if rd.kind == "Pod" and subresource == "eviction":
            return self._evict(rd, namespace, name or "", obj, dry_run, ctx)
        if (rd.kind == "Pod" and subresource == "binding") or rd.kind == "Binding":
            pod_rd = self.resolve("v1/pods")
            return self._bind(pod_rd, namespace, name, obj, dry_run, ctx)
        if subresource is not None:
            raise errors.method_not_allowed(f"create is not supported on {rd.group_resource}/{subresource}")
        if "create" not in rd.verbs:
            raise errors.method_not_allowed()
        obj = self._check_kind(rd, obj)
        meta = obj["metadata"]
        ns = self._ns_key(rd, namespace, obj)
        if rd.namespaced:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise errors.bad_request("resourceVersion should not be set on objects to be created")
        for key in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
            "managedFields",
        ):
            meta.pop(key, None)
        if not meta.get("name") and not meta.get("generateName"):
            raise self._invalid(
                rd,
                "",
                [("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")],
            )
        if rd.namespaced:
            nso = self.store.get("namespaces", "", ns)
            if nso is None:
                raise errors.not_found("", "namespaces", ns)
            if objects.meta(nso).get("deletionTimestamp"):
                raise errors.forbidden(
                    rd.group,
                    rd.plural,
                    str(meta.get("name") or meta.get("generateName")),
                    f"unable to create new content in namespace {ns} because it is being terminated",
                )
        kinds.apply_defaults(rd, obj)
        if managed is None:  # the creator owns what it sent and the defaults (kube-apiserver decodes first)
            managed = ssa.update(
                {},
                obj,
                self._apply_schema(rd),
                [],
                ctx.manager(),
                rd.api_version,
                scope=self._scope(rd, None),
                now=self._now(),
            )
        managed_fields.write(obj, managed)
        a = self._attrs(rd, "CREATE", ns, str(meta.get("name", "")), obj, None, dry_run, ctx)
        mutated = self.admission.mutate(a, ctx.warnings)
        if mutated is not obj and mutated is not None:
            obj = mutated
            kinds.apply_defaults(rd, obj)
            managed_fields.write(obj, managed)  # what webhooks add is nobody's, as in kube-apiserver
            meta = obj["metadata"]
        if not meta.get("name"):
            meta["name"] = self._generated_name(str(meta["generateName"]))
        name_ = str(meta["name"])
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self._now()
        if rd.has_generation:
            meta["generation"] = 1
        kinds.prepare_create(rd, obj)
        causes = kinds.validate_name(rd, name_) + kinds.validate(rd, obj, None)
        self._validate_write(rd, a, (ns, name_), obj, causes, ctx)
        if dry_run:
            return self.present(rd, obj), 201
        generated = bool(meta.get("generateName")) and name_ != a.name
        for attempt in range(8):  # like Kubernetes >= 1.30, retry a generated name that collides
            try:
                stored = self.store.create(rd.group_resource, ns, name_, obj)
                break
            except StoreExists:
                if not generated or attempt == 7:
                    raise errors.already_exists(rd.group, rd.plural, name_) from None
                name_ = self._generated_name(str(meta["generateName"]))
                kinds.rename(rd, obj, name_)
        if rd.kind == "CustomResourceDefinition":
            stored = self._establish_crd(stored)
        return self.present(rd, stored), 201

    def _establish_crd(self, crd: JSON) -> JSON:
        self.registry.add(defs_from_crd(crd))
        spec = crd.get("spec") or {}
        storage = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), None)
        now = self._now()
        new = dict(crd)
        new["status"] = {
            "conditions": [
                {
                    "type": "NamesAccepted",
                    "status": "True",
                    "reason": "NoConflicts",
                    "message": "no conflicts found",
                    "lastTransitionTime": now,
                },
                {
                    "type": "Established",
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                    "lastTransitionTime": now,
                },
            ],
            "acceptedNames": json_copy(spec.get("names") or {}),
            "storedVersions": [storage] if storage else [],
        }
        try:
            return self.store.update(
                "customresourcedefinitions.apiextensions.k8s.io", "", objects.meta(crd)["name"], new, _rv(crd)
            )
        except (StoreConflict, StoreMissing):
            return crd

    # =================================================================== get

    def do_get(self, rd: ResourceDef, namespace: str | None, name: str, subresource: str | None) -> JSON:
        ns = self._ns_key(rd, namespace)
        obj = self._get_stored(rd, ns, name)
        if subresource is None or (subresource == "status" and rd.has_status):
            return self.present(rd, obj)
        if subresource == "scale" and rd.scale is not None:
            return self._scale_of(rd, obj)
        raise errors.not_found(rd.group, f"{rd.plural}/{subresource}", name)

    # ================================================================== list

    def _predicate(
        self, rd: ResourceDef, ns: str | None, label_selector: str | None, field_selector: str | None
    ) -> Any:
        try:
            lsel = parse_selector(label_selector)
        except SelectorError as exc:
            raise errors.bad_request(f"unable to parse requirement: {exc}") from None
        try:
            fpred = field_predicate(parse_field_selector(field_selector, rd.field_selectors))
        except FieldSelectorError as exc:
            raise errors.bad_request(str(exc)) from None
        lempty = lsel.empty()

        def pred(obj: JSON) -> bool:
            meta = objects.meta(obj)
            if ns is not None and meta.get("namespace") != ns:
                return False
            if not lempty and not lsel.matches(meta.get("labels")):
                return False
            return fpred is None or fpred(obj)

        return pred

    def do_list(
        self, rd: ResourceDef, namespace: str | None, label_selector: str | None, field_selector: str | None
    ) -> JSON:
        ns = namespace if rd.namespaced and namespace else None
        pred = self._predicate(rd, ns, label_selector, field_selector)
        items, rv = self.store.list(rd.group_resource, ns)
        selected = [self.present(rd, o) for o in items if pred(o)]
        selected.sort(key=lambda o: (objects.meta(o).get("namespace", ""), objects.meta(o).get("name", "")))
        return {
            "apiVersion": rd.api_version,
            "kind": rd.list_kind,
            "metadata": {"resourceVersion": str(rv)},
            "items": selected,
        }

    # ================================================================ update

    def do_update(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str,
        obj: Any,
        *,
        subresource: str | None,
        dry_run: bool,
        ctx: RequestContext,
    ) -> JSON:
        """Update; `obj` is owned. Retries internally only for unconditional updates."""
        if subresource == "scale" and rd.scale is not None:
            return self._update_scale(rd, namespace, name, obj, dry_run, ctx)
        self._check_subresource(rd, subresource, name)
        if "update" not in rd.verbs:
            raise errors.method_not_allowed()
        obj = self._check_kind(rd, obj)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise self._name_mismatch(meta["name"], name)
        ns = self._ns_key(rd, namespace, obj)
        precondition = str(meta.get("resourceVersion") or "")
        if precondition:  # conditional: one attempt, a lost race is the caller's 409
            cur = self._get_stored(rd, ns, name)
            return self._update_once(rd, ns, name, obj, cur, subresource, dry_run, ctx, precondition)

        def attempt() -> JSON:
            cur = self._get_stored(rd, ns, name)
            return self._update_once(rd, ns, name, json_copy(obj), cur, subresource, dry_run, ctx, "")

        return self._retrying(rd, name, attempt)

    def _merge_update(self, rd: ResourceDef, cur: JSON, desired: JSON, subresource: str | None) -> JSON:
        if subresource == "status":
            new = dict(cur)
            new["metadata"] = dict(objects.meta(cur))
            if desired.get("status") is None:
                new.pop("status", None)
            else:
                new["status"] = desired["status"]
            if rd.crd:  # a status write is pruned and defaulted like any other
                prune_custom_status(new, rd.schema)
                default_custom_status(new, rd.schema)
            return new
        new = desired
        meta = new["metadata"]
        cmeta = objects.meta(cur)
        for key in _IMMUTABLE_META:
            if key in cmeta:
                meta[key] = cmeta[key]
            else:
                meta.pop(key, None)
        meta["resourceVersion"] = cmeta.get("resourceVersion")
        if rd.namespaced:
            meta["namespace"] = cmeta.get("namespace")
        if rd.has_status:
            if "status" in cur:
                new["status"] = cur["status"]
            else:
                new.pop("status", None)
        kinds.apply_defaults(rd, new)
        return new

    def _update_once(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        desired: JSON,
        cur: JSON,
        subresource: str | None,
        dry_run: bool,
        ctx: RequestContext,
        precondition: str,
        managed: builtins.list[ssa.Manager] | None = None,
    ) -> JSON:
        if precondition and precondition != _rv(cur):
            raise errors.conflict(rd.group, rd.plural, name)
        new = self._merge_update(rd, cur, desired, subresource)
        if managed is None:
            managed = self._updated_managers(rd, cur, new, subresource, ctx)
        managed_fields.write(new, managed)
        cmeta = objects.meta(cur)
        if cmeta.get("deletionTimestamp"):
            added = [
                f for f in new["metadata"].get("finalizers") or [] if f not in (cmeta.get("finalizers") or [])
            ]
            if added:
                raise self._invalid(
                    rd,
                    name,
                    [
                        (
                            "metadata.finalizers",
                            "FieldValueForbidden",
                            f"Forbidden: no new finalizers can be added if the object is "
                            f"being deleted, found new finalizers {added!r}",
                        )
                    ],
                )
        if _same_object(new, cur):
            return self.present(rd, cur)
        a = self._attrs(rd, "UPDATE", ns, name, new, cur, dry_run, ctx, sub=subresource)
        if self.admission.has_webhooks():
            mutated = self.admission.mutate(a, ctx.warnings)
            if mutated is not None and mutated is not new:
                new = self._merge_update(rd, cur, mutated, subresource)
                managed_fields.write(new, managed)
        if rd.has_generation and _spec_part(new) != _spec_part(cur):
            new["metadata"]["generation"] = int(cmeta.get("generation") or 0) + 1
        causes = kinds.validate(rd, new, cur)
        self._validate_write(rd, a, (ns, name), new, causes, ctx)
        if dry_run:
            return self.present(rd, new)
        nmeta = new["metadata"]
        if (
            nmeta.get("deletionTimestamp")
            and not nmeta.get("finalizers")
            and not (rd.kind == "Pod" and not rd.crd and nmeta.get("deletionGracePeriodSeconds"))
        ):
            removed = self._stored(
                rd, name, lambda: self.store.remove(rd.group_resource, ns, name, _rv(cur)), precondition
            )
            return self.present(rd, removed)
        stored = self._stored(
            rd, name, lambda: self.store.update(rd.group_resource, ns, name, new, _rv(cur)), precondition
        )
        if rd.kind == "CustomResourceDefinition":
            self.registry.add(defs_from_crd(stored))
        return self.present(rd, stored)

    # ================================================================= patch

    def _apply_patch(self, rd: ResourceDef, doc: JSON, patch: Any, patch_type: str) -> JSON:
        if patch_type == "json":
            if not isinstance(patch, list):
                raise errors.bad_request("a JSON patch must be a JSON array of operations")
            try:
                ops = jsonpatch.JsonPatch(patch)
            except (jsonpatch.InvalidJsonPatch, TypeError, AttributeError) as exc:
                raise errors.bad_request(f"invalid JSON patch: {exc}") from None
            try:
                result = ops.apply(doc, in_place=True)
            except (
                jsonpatch.JsonPatchException,
                jsonpointer.JsonPointerException,
                TypeError,
                KeyError,
                IndexError,
                ValueError,
            ) as exc:
                raise errors.unprocessable(
                    f"the server rejected our request due to an error in our request: {exc}"
                ) from None
        elif patch_type == "merge":
            if not isinstance(patch, dict):
                raise errors.bad_request("a merge patch must be a JSON object")
            result = json_merge_patch(doc, patch)
        elif patch_type == "strategic":
            if rd.merge_schema is None:
                raise errors.unsupported_media_type(
                    "application/strategic-merge-patch+json",
                    [
                        "application/json-patch+json",
                        "application/merge-patch+json",
                        "application/apply-patch+yaml",
                    ],
                )
            if not isinstance(patch, dict):
                raise errors.bad_request("a strategic merge patch must be a JSON object")
            try:
                result = strategic_merge(doc, patch, rd.merge_schema)
            except StrategicMergeError as exc:
                raise errors.bad_request(str(exc)) from None
        else:
            raise errors.unsupported_media_type(
                str(patch_type),
                [
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                ],
            )
        if not isinstance(result, dict) or not isinstance(result.get("metadata", {}), dict):
            raise errors.unprocessable("the patched object is not a valid object")
        return result

    def do_patch(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str,
        *,
        subresource: str | None,
        dry_run: bool,
        ctx: RequestContext,
        force: bool = False,
    ) -> JSON:
        if patch_type == "apply":
            return self.do_apply(
                rd, namespace, name, patch, subresource=subresource, dry_run=dry_run, ctx=ctx, force=force
            )[0]
        if "patch" not in rd.verbs:
            raise errors.method_not_allowed()
        ns = self._ns_key(rd, namespace)
        if subresource == "scale" and rd.scale is not None:
            cur = self._get_stored(rd, ns, name)
            scale = self._apply_patch(rd, self._scale_of(rd, cur), patch, patch_type)
            if _rv(scale) == _rv(cur):
                scale["metadata"].pop("resourceVersion", None)
            return self._update_scale(rd, namespace, name, scale, dry_run, ctx)
        self._check_subresource(rd, subresource, name)

        def attempt() -> JSON:
            cur = self._get_stored(rd, ns, name)
            doc = json_copy(self.present(rd, cur))
            patched = self._check_kind(rd, self._apply_patch(rd, doc, patch, patch_type))
            pmeta = patched["metadata"]
            if pmeta.get("name") != name:  # a patch that drops the name mismatches too
                raise self._name_mismatch(pmeta.get("name"), name)
            precondition = str(pmeta.get("resourceVersion") or "")
            if precondition == _rv(cur):
                precondition = ""
            return self._update_once(rd, ns, name, patched, cur, subresource, dry_run, ctx, precondition)

        return self._retrying(rd, name, attempt)

    # ================================================================ apply

    def _check_applied(self, rd: ResourceDef, name: str, config: Any) -> JSON:
        """The applied configuration's own checks, with kube-apiserver's messages (400)."""
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: an apply patch must be a single object")
        version = config.get("apiVersion")
        if version != rd.api_version:
            raise errors.bad_request(
                f"Incorrect version specified in apply patch. Specified patch version: "
                f"{version or ''}, expected: {rd.api_version}"
            )
        if config.get("kind") != rd.kind:
            raise errors.bad_request(
                f"the kind in the data ({config.get('kind') or ''}) does not match the "
                f"expected kind ({rd.kind})"
            )
        meta = config.get("metadata")
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be a JSON object")
        if meta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if meta.get("name", name) != name:
            raise self._name_mismatch(meta.get("name"), name)
        return config

    def do_apply(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str,
        config: Any,
        *,
        subresource: str | None,
        dry_run: bool,
        ctx: RequestContext,
        force: bool = False,
    ) -> tuple[JSON, int]:
        """Server-side apply (py_engine/sim/apply.py): merge `config` into the object as
        `ctx.field_manager`, creating it when missing (201). Conflicts are kube-apiserver's 409;
        the result is admitted, validated and stored like any update (or create)."""
        manager = ctx.field_manager
        if not manager:
            raise managed_fields.apply_needs_manager()
        if "patch" not in rd.verbs:
            raise errors.method_not_allowed()
        if subresource == "scale" and rd.scale is not None:
            raise errors.method_not_allowed(
                f"server-side apply to {rd.group_resource}/scale is not supported by "
                "the embedded cluster: apply the object itself, or scale it"
            )
        self._check_subresource(rd, subresource, name)
        ns = self._ns_key(rd, namespace, config if isinstance(config, dict) else None)
        config = self._check_applied(rd, name, config)
        if rd.crd:  # fields the schema prunes from the object are nobody's either
            config = json_copy(config)
            prune_custom_object(config, rd.schema)
        schema, scope = self._apply_schema(rd), self._scope(rd, subresource)
        precondition = str(config["metadata"].get("resourceVersion") or "")

        def attempt() -> tuple[JSON, int]:
            cur = self.store.get(rd.group_resource, ns, name)
            live = None if cur is None else self.present(rd, cur)
            if live is None and subresource is not None:
                raise errors.not_found(rd.group, rd.plural, name)
            try:
                result = ssa.apply(
                    live,
                    config,
                    schema,
                    managed_fields.read(live or {}),
                    manager,
                    rd.api_version,
                    subresource=subresource or "",
                    scope=scope,
                    force=force,
                    now=self._now(),
                )
            except ssa.ApplyConflicts as exc:
                raise managed_fields.conflict_error(exc.conflicts) from None
            except ssa.ApplyError as exc:
                raise errors.bad_request(
                    f"failed to create typed patch object ({rd.api_version}, Kind="
                    f"{rd.kind}) {ns + '/' if ns else ''}{name}: {exc}"
                ) from None
            obj = result.obj
            if cur is None:
                obj["metadata"]["name"] = name
                obj["metadata"].pop("resourceVersion", None)
                try:
                    return self.do_create(
                        rd,
                        ns,
                        obj,
                        subresource=None,
                        name=None,
                        dry_run=dry_run,
                        ctx=ctx,
                        managed=result.managers,
                    )
                except ApiError as exc:
                    if exc.code == 409 and exc.status.get("reason") == "AlreadyExists":
                        raise _Retry() from None  # created meanwhile: apply to it
                    raise
            obj["metadata"]["resourceVersion"] = _rv(cur)
            return self._update_once(
                rd, ns, name, obj, cur, subresource, dry_run, ctx, precondition, managed=result.managers
            ), 200

        return self._retrying(rd, name, attempt)

    # ================================================================ delete

    def do_delete(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str,
        ctx: RequestContext,
        options: DeleteOptions,
        *,
        admit: bool = True,
    ) -> tuple[JSON, int]:
        """Delete. Returns (object, HTTP code): the removed object, or the object
        now carrying deletionTimestamp when deletion waits for grace/finalizers."""
        grace, propagation = options.get("grace_period_seconds"), options.get("propagation_policy")
        preconditions, dry_run = options.get("preconditions"), options.get("dry_run", False)
        if "delete" not in rd.verbs:
            raise errors.method_not_allowed()
        if propagation not in (None, "Orphan", "Background", "Foreground"):
            raise self._invalid(
                rd,
                name,
                [
                    (
                        "propagationPolicy",
                        "FieldValueNotSupported",
                        f'Unsupported value: "{propagation}": supported values: '
                        '"Foreground", "Background", "Orphan"',
                    )
                ],
            )
        if grace is not None and not isinstance(grace, int):
            raise errors.bad_request("gracePeriodSeconds must be an integer")
        ns = self._ns_key(rd, namespace)
        cur = self._get_stored(rd, ns, name)
        if rd.kind == "Namespace" and name in _UNDELETABLE_NAMESPACES:
            raise errors.forbidden("", "namespaces", name, "this namespace may not be deleted")
        if admit and self.admission.has_webhooks():
            review_options: JSON = {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
            if grace is not None:
                review_options["gracePeriodSeconds"] = grace
            if propagation:
                review_options["propagationPolicy"] = propagation
            if dry_run:
                review_options["dryRun"] = ["All"]
            a = self._attrs(
                rd, "DELETE", ns, name, None, self.present(rd, cur), dry_run, ctx, options=review_options
            )
            self._admit(a, ctx, mutate=True)
        out, code = self._retrying(
            rd, name, lambda: self._delete_once(rd, ns, name, grace, propagation, preconditions, dry_run)
        )
        if rd.kind == "Namespace" and not dry_run and objects.meta(out).get("deletionTimestamp"):
            self._drain_namespace(name)
            still = self.store.get("namespaces", "", name)
            out = dict(out) if still is None else still
        return self.present(rd, out), code

    def _delete_once(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        grace: int | None,
        propagation: str | None,
        preconditions: Mapping[str, str] | None,
        dry_run: bool,
    ) -> tuple[JSON, int]:
        cur = self._get_stored(rd, ns, name)
        meta = objects.meta(cur)
        if preconditions:
            self._check_precondition(rd, name, "UID", preconditions.get("uid"), meta.get("uid"))
            self._check_precondition(
                rd, name, "ResourceVersion", preconditions.get("resourceVersion"), meta.get("resourceVersion")
            )
        g = 0
        if rd.kind == "Pod" and not rd.crd:
            spec = cur.get("spec") or {}
            g = grace if grace is not None else int(spec.get("terminationGracePeriodSeconds", 30) or 0)
            g = max(g, 0)
            phase = (cur.get("status") or {}).get("phase")
            if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
                g = 0
        fins = list(meta.get("finalizers") or [])
        extra = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(propagation or "")
        if extra and extra not in fins and rd.kind != "Namespace":
            fins.append(extra)
        expected = _rv(cur)
        if meta.get("deletionTimestamp"):
            cur_grace = int(meta.get("deletionGracePeriodSeconds") or 0)
            new_grace = min(cur_grace, g)
            if not fins and new_grace == 0 and rd.kind != "Namespace":
                return self._remove(rd, ns, name, cur, expected, dry_run), 200
            if new_grace == cur_grace and fins == list(meta.get("finalizers") or []):
                return cur, 200
            new = dict(cur)
            nmeta = dict(meta)
            nmeta["finalizers"] = fins
            if new_grace < cur_grace:
                nmeta["deletionGracePeriodSeconds"] = new_grace
                nmeta["deletionTimestamp"] = format_time(self.clock.now() + timedelta(seconds=new_grace))
            new["metadata"] = nmeta
            return self._write(rd, ns, name, new, expected, dry_run), 200
        if not fins and g == 0 and rd.kind != "Namespace":
            return self._remove(rd, ns, name, cur, expected, dry_run), 200
        new = dict(cur)
        nmeta = dict(meta)
        nmeta["deletionTimestamp"] = format_time(self.clock.now() + timedelta(seconds=g))
        nmeta["deletionGracePeriodSeconds"] = g
        if fins:
            nmeta["finalizers"] = fins
        if nmeta.get("generation"):
            nmeta["generation"] = int(nmeta["generation"]) + 1
        new["metadata"] = nmeta
        if rd.kind == "Namespace":
            new["status"] = {**(cur.get("status") or {}), "phase": "Terminating"}
        return self._write(rd, ns, name, new, expected, dry_run), (
            202 if propagation == "Foreground" else 200
        )

    def _remove(self, rd: ResourceDef, ns: str, name: str, cur: JSON, expected: str, dry_run: bool) -> JSON:
        if dry_run:
            return cur
        return self._stored(rd, name, lambda: self.store.remove(rd.group_resource, ns, name, expected))

    def _write(self, rd: ResourceDef, ns: str, name: str, new: JSON, expected: str, dry_run: bool) -> JSON:
        if dry_run:
            return new
        return self._stored(rd, name, lambda: self.store.update(rd.group_resource, ns, name, new, expected))

    def do_delete_collection(
        self,
        rd: ResourceDef,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        grace: int | None,
        propagation: str | None,
        dry_run: bool,
        ctx: RequestContext,
    ) -> JSON:
        listed = self.do_list(rd, namespace, label_selector, field_selector)
        out = []
        for obj in listed["items"]:
            meta = objects.meta(obj)
            try:
                options: DeleteOptions = {
                    "grace_period_seconds": grace,
                    "propagation_policy": propagation,
                    "dry_run": dry_run,
                }
                res, _ = self.do_delete(rd, meta.get("namespace"), str(meta["name"]), ctx, options)
                out.append(res)
            except ApiError as exc:
                if exc.code != 404:
                    raise
        return {
            "apiVersion": rd.api_version,
            "kind": rd.list_kind,
            "metadata": {"resourceVersion": self.resource_version()},
            "items": out,
        }

    def _drain_namespace(self, ns: str) -> None:
        ctx = RequestContext(user={"username": "system:serviceaccount:kube-system:namespace-controller"})
        for gr in self.store.namespaced_resources_with_objects(ns):
            versions = self.registry.versions_of(gr)
            if not versions:
                continue
            rd = versions[0]
            for obj in self.store.list(gr, ns)[0]:
                with contextlib.suppress(ApiError):
                    now_in_background: DeleteOptions = {
                        "grace_period_seconds": 0,
                        "propagation_policy": "Background",
                    }
                    self.do_delete(
                        rd, ns, str(objects.meta(obj)["name"]), ctx, now_in_background, admit=False
                    )
        self._finish_namespace(ns)

    def _finish_namespace(self, ns: str) -> None:
        nso = self.store.get("namespaces", "", ns)
        if nso is None or not objects.meta(nso).get("deletionTimestamp"):
            return
        if self.store.namespaced_resources_with_objects(ns):
            return
        if objects.meta(nso).get("finalizers"):
            return
        with contextlib.suppress(StoreMissing):
            self.store.remove("namespaces", "", ns, None)

    def _on_removed(self, resource: str, obj: JSON) -> None:
        meta = objects.meta(obj)
        if resource == "customresourcedefinitions.apiextensions.k8s.io":
            spec = obj.get("spec") or {}
            gr = f"{(spec.get('names') or {}).get('plural')}.{spec.get('group')}"
            self.registry.remove_group_resource(gr)
            for item in self.store.list(gr)[0]:
                with contextlib.suppress(StoreMissing):
                    self.store.remove(
                        gr,
                        str(objects.meta(item).get("namespace", "")),
                        str(objects.meta(item)["name"]),
                        None,
                    )
        elif resource != "namespaces" and meta.get("namespace"):
            self._finish_namespace(str(meta["namespace"]))

    # ======================================================== subresources

    def _evict(
        self, rd: ResourceDef, namespace: str | None, name: str, body: Any, dry_run: bool, ctx: RequestContext
    ) -> tuple[JSON, int]:
        """POST pods/{name}/eviction: admission for `pods/eviction` CREATE, then delete.

        PodDisruptionBudgets are out of scope: an admitted eviction always
        deletes the pod (respecting the Eviction's deleteOptions).
        """
        if not isinstance(body, dict):
            raise errors.bad_request("the body of an eviction must be a policy/v1 Eviction object")
        if body.get("kind") not in (None, "Eviction"):
            raise errors.bad_request(f"expected an Eviction, got kind {body.get('kind')!r}")
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be a JSON object")
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                f"name in URL does not match name in Eviction object: {name} != {meta['name']}"
            )
        ns = self._ns_key(rd, namespace, body)
        meta["name"], meta["namespace"] = name, ns
        body.setdefault("apiVersion", "policy/v1")
        body["kind"] = "Eviction"
        pod = self._get_stored(rd, ns, name)
        self._admit_pod_action(rd, ns, name, body, dry_run, ctx, ("policy", "v1", "Eviction"))
        if objects.meta(pod).get("deletionTimestamp"):
            return errors.success(201), 201
        opts = body.get("deleteOptions") or {}
        if not isinstance(opts, dict):
            raise errors.bad_request("deleteOptions must be an object")
        dry = dry_run or bool(opts.get("dryRun"))
        options: DeleteOptions = {
            "grace_period_seconds": opts.get("gracePeriodSeconds"),
            "propagation_policy": opts.get("propagationPolicy"),
            "preconditions": opts.get("preconditions"),
            "dry_run": dry,
        }
        self.do_delete(rd, ns, name, ctx, options, admit=False)
        return errors.success(201), 201

    def _bind(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str | None,
        body: Any,
        dry_run: bool,
        ctx: RequestContext,
    ) -> tuple[JSON, int]:
        """POST pods/{name}/binding (or bindings): set spec.nodeName; 409 if already bound."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of a binding must be a v1 Binding object")
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be a JSON object")
        pod_name = name or meta.get("name")
        if not pod_name:
            raise errors.bad_request("a binding must name the pod")
        if meta.get("name") and meta["name"] != pod_name:
            raise errors.bad_request(f"name in URL does not match name in Binding object: {pod_name}")
        target = body.get("target") or {}
        node = target.get("name") if isinstance(target, dict) else None
        if not node:
            raise self._invalid(rd, str(pod_name), [("target.name", "FieldValueRequired", "Required value")])
        ns = self._ns_key(rd, namespace, body)
        meta["name"], meta["namespace"] = pod_name, ns
        body["apiVersion"], body["kind"] = "v1", "Binding"
        self._get_stored(rd, ns, str(pod_name))
        self._admit_pod_action(rd, ns, str(pod_name), body, dry_run, ctx, ("", "v1", "Binding"))

        def attempt() -> tuple[JSON, int]:
            cur = self._get_stored(rd, ns, str(pod_name))
            cmeta = objects.meta(cur)
            if cmeta.get("deletionTimestamp"):
                raise errors.conflict(
                    "",
                    "pods",
                    str(pod_name),
                    f"pod {pod_name} is being deleted, cannot be assigned to a host",
                )
            bound = (cur.get("spec") or {}).get("nodeName")
            if bound:
                raise errors.conflict(
                    "", "pods", str(pod_name), f'pod {pod_name} is already assigned to node "{bound}"'
                )
            new = json_copy(cur)
            new["spec"]["nodeName"] = node
            if meta.get("annotations"):
                new["metadata"].setdefault("annotations", {}).update(meta["annotations"])
            status = new.setdefault("status", {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": self._now(),
                }
            )
            status["conditions"] = conds
            if dry_run:
                return errors.success(201), 201
            self._stored(
                rd,
                str(pod_name),
                lambda: self.store.update(rd.group_resource, ns, str(pod_name), new, _rv(cur)),
            )
            return errors.success(201), 201

        return self._retrying(rd, str(pod_name), attempt)

    def _scale_of(self, rd: ResourceDef, obj: JSON) -> JSON:
        paths = rd.scale
        assert paths is not None
        meta = objects.meta(obj)
        selector = ""
        if paths.label_selector:
            raw = get_path(obj, paths.label_selector)
            if paths.selector_is_label_selector_dict:
                try:
                    selector = format_label_selector(raw) if raw is not None else ""
                except SelectorError:
                    selector = ""
            else:
                selector = str(raw or "")
        out: JSON = {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": int(get_path(obj, paths.spec_replicas) or 0)},
            "status": {"replicas": int(get_path(obj, paths.status_replicas) or 0)},
        }
        if selector:
            out["status"]["selector"] = selector
        return out

    def _update_scale(
        self,
        rd: ResourceDef,
        namespace: str | None,
        name: str,
        scale: Any,
        dry_run: bool,
        ctx: RequestContext,
    ) -> JSON:
        if not isinstance(scale, dict):
            raise errors.bad_request("the body of a scale update must be an autoscaling/v1 Scale object")
        replicas = (scale.get("spec") or {}).get("replicas") if isinstance(scale.get("spec"), dict) else None
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise errors.invalid(
                "autoscaling",
                "Scale",
                name,
                [
                    (
                        "spec.replicas",
                        "FieldValueInvalid",
                        f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                    )
                ],
            )
        smeta = scale.get("metadata") or {}
        if smeta.get("name") and smeta["name"] != name:
            raise self._name_mismatch(smeta["name"], name)
        ns = self._ns_key(rd, namespace)
        precondition = str(smeta.get("resourceVersion") or "")
        paths = rd.scale
        assert paths is not None

        def attempt() -> JSON:
            cur = self._get_stored(rd, ns, name)
            if precondition and precondition != _rv(cur):
                raise errors.conflict(rd.group, rd.plural, name)
            old_scale = self._scale_of(rd, cur)
            new_scale = json_copy(old_scale)
            new_scale["spec"]["replicas"] = replicas
            a = self._attrs(
                rd,
                "UPDATE",
                ns,
                name,
                new_scale,
                old_scale,
                dry_run,
                ctx,
                sub="scale",
                kind=("autoscaling", "v1", "Scale"),
            )
            admitted = self._admit(a, ctx) or new_scale
            want = (admitted.get("spec") or {}).get("replicas", replicas)
            if want == old_scale["spec"]["replicas"]:
                return old_scale
            new = json_copy(cur)
            set_path(new, paths.spec_replicas, want)
            managed_fields.write(
                new,
                ssa.update(
                    cur,
                    new,
                    self._apply_schema(rd),
                    managed_fields.read(cur),
                    ctx.manager(),
                    rd.api_version,
                    subresource="scale",
                    scope=self._scope(rd, None),
                    now=self._now(),
                ),
            )
            if rd.crd:  # the custom object is validated as written, like any update of it
                causes = validate_custom_object(new, rd.schema, cur)
                if causes:
                    raise self._invalid(rd, name, causes)
            if rd.has_generation:
                new["metadata"]["generation"] = int(objects.meta(cur).get("generation") or 0) + 1
            if dry_run:
                return self._scale_of(rd, new)
            stored = self._stored(
                rd, name, lambda: self.store.update(rd.group_resource, ns, name, new, _rv(cur)), precondition
            )
            return self._scale_of(rd, stored)

        return self._retrying(rd, name, attempt)

    # ================================================================= watch

    def do_watch(
        self,
        rd: ResourceDef,
        namespace: str | None,
        resource_version: str | None,
        label_selector: str | None,
        field_selector: str | None,
        allow_bookmarks: bool,
        timeout_seconds: float | None,
        *,
        copy_objects: bool,
    ) -> ApiWatch:
        ns = namespace if rd.namespaced and namespace else None
        pred = self._predicate(rd, ns, label_selector, field_selector)
        since: int | None = None
        if resource_version not in (None, "", "0"):
            try:
                since = int(str(resource_version))
            except ValueError:
                raise errors.bad_request(f"invalid resourceVersion {resource_version!r}") from None
        try:
            w, initial, _ = self.store.watch(rd.group_resource, pred, since)
        except TooOld as exc:
            raise errors.gone(str(exc)) from None
        return ApiWatch(
            self,
            rd,
            w,
            initial,
            bookmarks=allow_bookmarks,
            timeout=timeout_seconds,
            bookmark_interval=self.bookmark_interval,
            copy_objects=copy_objects,
        )

    # ================================================================ users

    def as_user(self, username: str, groups: builtins.list[str] | None = None) -> UserScopedApi:
        """A `ClusterAPI` view whose requests carry this user (seen in admission `userInfo`)."""
        return UserScopedApi(self, {"username": username, "groups": groups or ["system:authenticated"]})


class UserScopedApi(ClusterAPI):
    """`ClusterAPI` calls on an `ApiServer` on behalf of one user."""

    def __init__(self, server: ApiServer, user: JSON) -> None:
        self._server = server
        self._user = user


__all__ = [
    "DEFAULT_USER",
    "MAX_OBJECT_BYTES",
    "MUTATING",
    "VALIDATING",
    "ApiServer",
    "ApiWatch",
    "ClusterAPI",
    "RequestContext",
    "UserScopedApi",
]
