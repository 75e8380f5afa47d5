"""The two ports of the admission service: what it reads and where its reservations go.

`AdmissionService` (`py_engine.workloadspread.admission.service`) decides every admission the
same way whoever runs it; only these two sides differ:

* `AdmissionReader`: the spreads of a namespace, workload lookups, pods and the
  node inventory. The webhook's is `runtime.service_view.LiveAdmissionView` (watch
  caches, a direct GET on a miss); `spreadgate admit` and the reference-vector
  tests use `snapshot.SnapshotReader` (a list of objects).
* `SpreadCommitter`: applies a pure reservation function to the freshest copy
  of a spread and writes the result durably before answering: `submit` blocks,
  `submit_async` answers through a continuation (the webhook's, so a waiting
  admission holds no thread). The webhook's is
  `runtime.committer.Committer` (group commit through the status subresource);
  the offline one is `recording.RecordingCommitter`, which only records what
  would be written.

The commit errors are part of the port: a committer raises them, the service
turns them into decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from py_engine.placement.inventory import NodeInventory

R = TypeVar("R")
JSON = dict[str, Any]
Apply = Callable[[JSON], tuple[JSON | None, R]]
"""`apply(obj) -> (object to write or None, the caller's result)`: a function of the spread it is
given alone. `obj["status"]` is private to the attempt (every `SpreadCommitter` deep-copies it per
batch, and later applies of the batch get the object the previous one returned), so `apply` may
extend the maps inside it in place when it returns an object to write; when it returns None or
raises, it must leave `obj` unchanged."""
Done = Callable[[R | None, BaseException | None], None]
"""`on_done(result, error)`: how an asynchronous submit is answered, once; `error` is None on success."""


class CommitFailed(Exception):
    """A reservation was not committed; `reason` is a short machine word."""

    reason = "CommitFailed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CommitTimeout(CommitFailed):
    """The deadline passed before the reservation could be written (nothing written)."""

    reason = "CommitTimeout"


class SpreadNotFound(CommitFailed):
    """The WorkloadSpread does not exist (any more)."""

    reason = "NotFound"


class CommitError(CommitFailed):
    """The API refused or failed the read/write for another reason."""

    reason = "CommitError"


class AdmissionReader(Protocol):
    """What the admission service reads (see the module docstring)."""

    def spreads_in(self, namespace: str) -> list[JSON]:
        """The namespace's WorkloadSpreads in name order (the API's list order)."""
        ...

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        """(apiVersion, kind, namespace, name) -> the object, or None when it does not exist."""
        ...

    def fresh_lookup(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        """Like `lookup`, for decisions that must not act on a cache that may be behind."""
        ...

    def pod(self, namespace: str, name: str) -> JSON | None:
        """A pod by name (the subject of an eviction)."""
        ...

    def node_inventory(self) -> NodeInventory | None:
        """Compact node facts for node-fit simulation; None when there are none."""
        ...

    def ready(self) -> bool:
        """Whether what is read is complete (watch caches synced)."""
        ...


class SpreadCommitter(Protocol):
    """Where reservations are committed (see the module docstring)."""

    def submit(
        self, namespace: str, name: str, apply: Apply[R], deadline: float, *, dry_run: bool = False
    ) -> R:
        """Commit `apply` on spread namespace/name before `deadline` (the clock's monotonic time);
        returns apply's result from the committed attempt. Raises `CommitFailed` subclasses, or
        whatever `apply` raised. `dry_run`: decide on the freshest object, write nothing."""
        ...

    def submit_async(
        self,
        namespace: str,
        name: str,
        apply: Apply[R],
        deadline: float,
        on_done: Done[R],
        *,
        dry_run: bool = False,
    ) -> None:
        """Like `submit`, but answers through `on_done(result, None)` or `on_done(None, error)`,
        called exactly once, possibly on another thread and possibly before this returns.

        This default is for committers that never wait (the offline ones, which subclass this
        port to inherit it): it runs `submit` and answers before returning. The webhook's
        committer overrides it so that a waiting admission holds no thread."""
        try:
            result = self.submit(namespace, name, apply, deadline, dry_run=dry_run)
        except Exception as exc:
            on_done(None, exc)
            return
        on_done(result, None)
