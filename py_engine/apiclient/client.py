"""A dict-speaking client over the official `kubernetes` package.

Why not the generated `CoreV1Api`/`AppsV1Api` methods: in `kubernetes` 37 they
map responses to pydantic models that reject unknown fields and cost ~7x a
plain `json.loads`. Every call here goes through the official `ApiClient`
(configuration, kubeconfig/in-cluster auth, TLS, token refresh) with raw,
unparsed responses (`_preload_content=False` in the generated APIs'
terms) and plain `json` on both sides, for core, apps, batch and custom
resources alike. Failures come out as `py_engine.apiclient.errors.KubeError`.

Only generic Kubernetes lives here: no WorkloadSpread knowledge.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, Literal, TypedDict, Unpack

import kubernetes
import urllib3
import yaml

from py_engine.apiclient.errors import KubeError, ServerError, error_from_response
from py_engine.apiclient.resources import Resource

JSON = dict[str, Any]
PatchType = Literal["merge", "json", "strategic"]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
_JSON = "application/json"
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"
"""The Accept header of a write whose caller needs only the stored object's metadata back: the
API server then answers a `PartialObjectMetadata` instead of encoding the whole object, and one
that cannot answers the object (the second choice)."""


class WriteOptions(TypedDict, total=False):
    """Keyword options of a write: `dry_run` (default False: the server stores the result) and
    `timeout` (seconds; default the client's)."""

    dry_run: bool
    timeout: float | None


class ReplaceOptions(WriteOptions, total=False):
    """`metadata_only` (default False): see `KubeClient.replace`."""

    metadata_only: bool


def _dry_run(options: WriteOptions) -> list[tuple[str, str]]:
    return _query(dryRun="All" if options.get("dry_run") else None)


def _query(**params: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None or value is False:
            continue
        out.append((key, "true" if value is True else str(value)))
    return out


class WatchStream:
    """One open watch: iterate for event dicts (`type`, `object`); `close()` from any
    thread ends the iteration.

    Only the thread that reads the stream closes its socket: `close()` from another
    thread shuts the socket down, which makes the blocked read return, and the
    reader then closes it. Closing a socket's descriptor under a read in progress
    could let that read land on a reused descriptor. The connection goes back to
    the pool closed (the pool reconnects on next use), never as a half-shut socket
    that only a later `pool.clear()` or the garbage collector would close.
    """

    def __init__(self, response: Any) -> None:
        self._response = response
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._reader: int | None = None
        self._released = False

    def __iter__(self) -> Iterator[JSON]:
        with self._lock:
            if self._closed.is_set():
                self._release_locked()
                return
            self._reader = threading.get_ident()
        buffer = b""
        chunks = self._response.stream(64 * 1024, decode_content=True)
        try:
            # The closed flag is checked before every resumption of the stream: the
            # reader may have closed the response itself while suspended at a yield.
            while not self._closed.is_set():
                chunk = next(chunks, None)
                if chunk is None:
                    if buffer.strip():
                        yield self._event(buffer)
                    return
                buffer += chunk
                while b"\n" in buffer and not self._closed.is_set():
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield self._event(line)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            if self._closed.is_set():
                return
            raise ServerError(0, "WatchInterrupted", f"watch stream broke: {exc}") from None
        finally:
            with self._lock:
                self._closed.set()
                self._reader = None
                self._release_locked()
            chunks.close()

    @staticmethod
    def _event(line: bytes) -> JSON:
        try:
            event = json.loads(line)
        except ValueError as exc:
            raise ServerError(0, "WatchDecode", f"undecodable watch event: {exc}") from None
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise ServerError(0, "WatchDecode", "watch event without an object")
        return event

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            if self._reader is not None and self._reader != threading.get_ident():
                with contextlib.suppress(Exception):
                    self._response.shutdown()
            else:
                self._release_locked()

    def _release_locked(self) -> None:
        if self._released:
            return
        self._released = True
        with contextlib.suppress(Exception):
            self._response.close()
        with contextlib.suppress(Exception):
            self._response.release_conn()


# How often the token refresh hook runs at most. The `kubernetes` package calls it before
# every request; the kubeconfig loader's hook then re-applies the whole configuration, and
# assigning the host re-reads every proxy variable of the environment (about 2 ms, most of
# a status write's client CPU on the webhook's admission path). Tokens are renewed 5 minutes
# before they expire (kubeconfig) or every minute (in-cluster), so one second is harmless.
TOKEN_REFRESH_INTERVAL = 1.0


class ThrottledRefresh:
    """Calls a configuration's `refresh_api_key_hook` at most once per `interval` seconds.

    The kubeconfig loader's hook installs a new hook of its own each time it runs; that one
    becomes the hook this object calls, and this object stays installed.
    """

    def __init__(
        self, hook: Any, interval: float = TOKEN_REFRESH_INTERVAL, clock: Any = time.monotonic
    ) -> None:
        self.hook = hook
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None

    def __call__(self, configuration: Any) -> None:
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last < self.interval:
                return
            self._last = now
            self.hook(configuration)
            installed = getattr(configuration, "refresh_api_key_hook", None)
            if installed is not self and installed is not None:
                self.hook = installed
                configuration.refresh_api_key_hook = self


class KubeClient:
    """get/list/create/replace/replace_status/patch/delete/watch on any `Resource`.

    Thread-safe (urllib3's pool is). `timeout` is the default per-request limit in
    seconds; every verb takes `timeout=` so callers with a deadline (the
    committer) can pass what is left of it.
    """

    def __init__(self, api_client: Any, *, timeout: float = 30.0) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.host: str = str(api_client.configuration.host)

    # ----------------------------------------------------------- constructors

    @classmethod
    def load(
        cls,
        kubeconfig: str | None = None,
        *,
        context: str | None = None,
        timeout: float = 30.0,
        pool_size: int = 64,
    ) -> KubeClient:
        """From `kubeconfig` when given; else in-cluster config inside a pod; else the
        default kubeconfig (`$KUBECONFIG`, `~/.kube/config`). Raises `KubeError` (status 0)
        when no configuration can be loaded."""
        cfg = kubernetes.client.Configuration()
        try:
            if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
                kubernetes.config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
            else:
                kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=kubeconfig, context=context, client_configuration=cfg
                )
        except (kubernetes.config.ConfigException, OSError, ValueError, TypeError, yaml.YAMLError) as exc:
            raise KubeError(0, "ConfigError", f"cannot load cluster configuration: {exc}") from None
        if cfg.refresh_api_key_hook is not None:
            cfg.refresh_api_key_hook = ThrottledRefresh(cfg.refresh_api_key_hook)
        # Retries belong to the callers (conflict loops, watch backoff), not to urllib3.
        cfg.retries = False
        cfg.connection_pool_maxsize = pool_size
        return cls(kubernetes.client.ApiClient(cfg), timeout=timeout)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.api_client.rest_client.pool_manager.clear()
        with contextlib.suppress(Exception):
            self.api_client.close()

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- transport

    def _open(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = _JSON,
        timeout: Any = None,
        accept: str = _JSON,
    ) -> Any:
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        try:
            # Bodies are plain JSON data, which the REST layer encodes with json.dumps: the body is
            # kept out of param_serialize, whose sanitize_for_serialization walk (for the generated
            # model classes) cost as much as the encoding itself on every status write.
            _, url, headers, _, _ = self.api_client.param_serialize(
                method=method,
                resource_path=path,
                query_params=query or None,
                header_params=headers,
                body=None,
                auth_settings=["BearerToken"],
            )
            response = self.api_client.call_api(
                method,
                url,
                header_params=headers,
                body=body,
                _request_timeout=timeout if timeout is not None else self.timeout,
            )
        except kubernetes.client.ApiException as exc:
            raise ServerError(int(exc.status or 0), "ClientError", str(exc.reason or exc)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ServerError(0, "ConnectionError", f"{method} {path}: {exc}") from None
        return response.response

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = _JSON,
        timeout: float | None = None,
        accept: str = _JSON,
    ) -> JSON:
        """One request, the body read in full and decoded; non-2xx raises `KubeError`."""
        raw = self._open(method, path, query, body, content_type, timeout, accept)
        try:
            data = raw.data
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ServerError(0, "ConnectionError", f"{method} {path}: {exc}") from None
        finally:
            raw.release_conn()
        if not 200 <= raw.status <= 299:
            raise error_from_response(raw.status, data, str(raw.reason or ""))
        try:
            decoded = json.loads(data) if data else {}
        except ValueError as exc:
            raise ServerError(
                raw.status, "DecodeError", f"{method} {path}: response is not JSON: {exc}"
            ) from None
        if not isinstance(decoded, dict):
            raise ServerError(raw.status, "DecodeError", f"{method} {path}: response is not a JSON object")
        return decoded

    # ----------------------------------------------------------------- verbs

    def get(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        subresource: str | None = None,
        timeout: float | None = None,
    ) -> JSON:
        return self.request("GET", resource.object_path(namespace, name, subresource), timeout=timeout)

    def list(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        timeout: float | None = None,
    ) -> JSON:
        """The whole collection (pages followed), as one List dict with the list's resourceVersion."""
        path = resource.collection_path(namespace)
        items: list[JSON] = []
        token: str | None = None
        meta: JSON = {}
        for _ in range(100_000):
            page = self.request(
                "GET",
                path,
                _query(
                    labelSelector=label_selector,
                    fieldSelector=field_selector,
                    limit=page_size,
                    **{"continue": token},
                ),
                timeout=timeout,
            )
            items.extend(i for i in page.get("items") or [] if isinstance(i, dict))
            meta = page.get("metadata") or {}
            token = meta.get("continue") or None
            if not token:
                break
        return {
            "apiVersion": resource.api_version,
            "kind": f"{resource.kind or 'Object'}List",
            "metadata": {"resourceVersion": str(meta.get("resourceVersion", ""))},
            "items": items,
        }

    def create(
        self,
        resource: Resource,
        namespace: str | None,
        obj: Mapping[str, Any],
        **options: Unpack[WriteOptions],
    ) -> JSON:
        return self._post(resource.collection_path(namespace), obj, options)

    def create_subresource(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        subresource: str,
        obj: Mapping[str, Any],
        **options: Unpack[WriteOptions],
    ) -> JSON:
        """POST to a subresource, e.g. `pods/<name>/eviction` or `pods/<name>/binding`."""
        return self._post(resource.object_path(namespace, name, subresource), obj, options)

    def _post(self, path: str, obj: Mapping[str, Any], options: WriteOptions) -> JSON:
        return self.request("POST", path, _dry_run(options), body=dict(obj), timeout=options.get("timeout"))

    def replace(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        obj: Mapping[str, Any],
        *,
        subresource: str | None = None,
        **options: Unpack[ReplaceOptions],
    ) -> JSON:
        """PUT; the object's `metadata.resourceVersion` makes it conditional (409 when stale).

        `metadata_only` asks the server to answer with the stored object's metadata alone (a
        `PartialObjectMetadata`); a server that cannot answers with the whole object, so the
        caller checks the answer's `kind`."""
        return self.request(
            "PUT",
            resource.object_path(namespace, name, subresource),
            _dry_run(options),
            body=dict(obj),
            timeout=options.get("timeout"),
            accept=METADATA_ONLY if options.get("metadata_only") else _JSON,
        )

    def replace_status(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        obj: Mapping[str, Any],
        **options: Unpack[ReplaceOptions],
    ) -> JSON:
        """PUT to the status subresource (only `status` is taken; resourceVersion-checked)."""
        return self.replace(resource, namespace, name, obj, subresource="status", **options)

    def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType = "merge",
        *,
        subresource: str | None = None,
        **options: Unpack[WriteOptions],
    ) -> JSON:
        if patch_type not in _PATCH_CONTENT_TYPES:
            raise ValueError(f"unknown patch type {patch_type!r}")
        return self.request(
            "PATCH",
            resource.object_path(namespace, name, subresource),
            _dry_run(options),
            body=patch,
            content_type=_PATCH_CONTENT_TYPES[patch_type],
            timeout=options.get("timeout"),
        )

    def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> JSON:
        options: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = dict(preconditions)
        if dry_run:
            options["dryRun"] = ["All"]
        return self.request("DELETE", resource.object_path(namespace, name), body=options, timeout=timeout)

    def watch(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
        timeout_seconds: int = 300,
    ) -> WatchStream:
        """Open a watch from `resource_version`. A 410 at open raises `Gone`; a 410 later
        arrives as an ERROR event (the caller relists). The read timeout is the server-side
        timeout plus a margin, so a silently dead connection ends too."""
        query = _query(
            watch=True,
            resourceVersion=resource_version,
            labelSelector=label_selector,
            fieldSelector=field_selector,
            allowWatchBookmarks=allow_bookmarks,
            timeoutSeconds=timeout_seconds,
        )
        raw = self._open(
            "GET", resource.collection_path(namespace), query, timeout=(10.0, float(timeout_seconds) + 30.0)
        )
        if not 200 <= raw.status <= 299:
            try:
                data = raw.data
            finally:
                raw.release_conn()
            raise error_from_response(raw.status, data, str(raw.reason or ""))
        return WatchStream(raw)
