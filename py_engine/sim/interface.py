"""The in-process contract of the embedded API server.

The HTTPS front end and the in-process clients (workload controllers, scheduler,
kubelet, garbage collector) both speak to the server through the verbs of
`py_engine.sim.apiserver.ClusterAPI` (options typed here), so a
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


class WriteOptions(TypedDict, total=False):
    """Keyword options of a write (update; with more keys, create and patch). `subresource` is e.g.
    "status", "scale", "eviction", "binding" (default None: the object itself); `dry_run` (default
    False) admits and validates without storing."""

    subresource: str | None
    dry_run: bool


class CreateOptions(WriteOptions, total=False):
    """`name`: the parent object of a subresource create (pods/<name>/eviction)."""

    name: str | None


class PatchOptions(WriteOptions, total=False):
    """`field_manager` and `force`: server-side apply's (patch type `apply`)."""

    field_manager: str | None
    force: bool


class Selectors(TypedDict, total=False):
    """The label and field selectors of a list, watch or collection delete (default None: all)."""

    label_selector: str | None
    field_selector: str | None


class WatchOptions(Selectors, total=False):
    """A watch from `resource_version` (default None: synthetic ADDED events for what exists);
    `allow_bookmarks` default False; `timeout_seconds` default None (no end)."""

    resource_version: str | None
    allow_bookmarks: bool
    timeout_seconds: float | None


class DeletionOptions(TypedDict, total=False):
    """A delete's DeleteOptions (defaults: the resource's grace period and propagation, no dry run)."""

    grace_period_seconds: int | None
    propagation_policy: str | None
    dry_run: bool


class DeleteOptions(DeletionOptions, total=False):
    """`preconditions`: the uid and/or resourceVersion the object must still have."""

    preconditions: Mapping[str, str] | None


class DeleteCollectionOptions(DeletionOptions, Selectors, total=False):
    """The selected objects, each deleted with these options."""
