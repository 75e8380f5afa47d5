"""Random (version 4) UUIDs whose entropy is drawn a few kilobytes at a time.

`uuid.uuid4()` calls `os.urandom(16)`, and `os.urandom` releases the interpreter lock
around its `getrandom` system call. On the webhook's admission path, where a pod with
only `generateName` needs a key for its `creatingPods` entry, each such release under
load hands the lock to another thread and taking it back costs a context switch: about
one per admission (README, "A webhook no client can stall"). `UuidSource` draws the
entropy of `batch` UUIDs per call instead. The UUIDs are as random as `uuid4()`'s (the
same bytes, version and variant bits); a forked child starts with a fresh pool, so a
parent and its child never hand out the same UUID.
"""

from __future__ import annotations

import os
import threading
import uuid
import weakref

_SOURCES: weakref.WeakSet[UuidSource] = weakref.WeakSet()


class UuidSource:
    """Callable: the next random UUID as a string. Thread-safe."""

    def __init__(self, batch: int = 256) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.batch = batch
        self._lock = threading.Lock()
        self._pool = b""
        self._offset = 0
        _SOURCES.add(self)

    def __call__(self) -> str:
        with self._lock:
            if self._offset >= len(self._pool):
                self._pool = os.urandom(16 * self.batch)
                self._offset = 0
            raw = self._pool[self._offset:self._offset + 16]
            self._offset += 16
        return str(uuid.UUID(bytes=raw, version=4))

    def _forget(self) -> None:
        """Drop the pool (in a forked child: the parent holds the same bytes)."""
        self._lock = threading.Lock()
        self._pool = b""
        self._offset = 0


def _after_fork_in_child() -> None:
    for source in list(_SOURCES):
        source._forget()


os.register_at_fork(after_in_child=_after_fork_in_child)
