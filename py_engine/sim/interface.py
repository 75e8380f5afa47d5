"""The in-process contract of the embedded API server.

The HTTPS front end and the in-process clients (workload controllers, scheduler,
kubelet, garbage collector) both speak to the server through `ClusterAPI`, so a
controller running inside the emulator gets exactly the semantics an external
client gets over HTTP: admission webhooks, resourceVersion conflicts, status
isolation, graceful deletion. Objects are plain JSON dicts.

A resource is named by its API path prefix and plural, e.g. `"v1/pods"`,
`"apps/v1/deployments"`, `"spreadgate.dev/v1alpha1/workloadspreads"`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, Protocol, TypedDict

JSON = dict[str, Any]

PatchType = Literal["merge", "json", "strategic"]
"""`application/merge-patch+json`, `application/json-patch+json`,
`application/strategic-merge-patch+json`."""


class WatchEvent(TypedDict):
    """One watch event as the API streams it (`type` is ADDED, MODIFIED, DELETED,
    BOOKMARK or ERROR; for ERROR `object` is a Status)."""

    type: str
    object: JSON


class ApiError(Exception):
    """An API failure carrying the Kubernetes `Status` object the server returns."""

    def __init__(self, status: JSON) -> None:
        super().__init__(str(status.get("message", "")))
        self.status = status

    @property
    def code(self) -> int:
        return int(self.status.get("code", 500))

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))


class Watch(Protocol):
    """A live watch: iterate for events; `close()` ends the iteration."""

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def close(self) -> None: ...


class ClusterAPI(Protocol):
    """Verbs of the API server, with the same semantics as over HTTP.

    Every method raises `ApiError` for what Kubernetes answers with a Status
    (404 NotFound, 409 Conflict/AlreadyExists, 422 Invalid, 410 Gone, 403, 429,
    500, 504). `namespace` is None for cluster-scoped resources and for
    all-namespace list/watch. `subresource` is e.g. "status", "scale",
    "eviction", "binding".
    """

    def create(
        self,
        resource: str,
        namespace: str | None,
        obj: JSON,
        *,
        subresource: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
    ) -> JSON: ...

    def get(
        self, resource: str, namespace: str | None, name: str, *, subresource: str | None = None
    ) -> JSON: ...

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> JSON: ...

    def update(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        obj: JSON,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> JSON: ...

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> JSON: ...

    def delete(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> JSON: ...

    def watch(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
        timeout_seconds: float | None = None,
    ) -> Watch: ...
