"""Random (version 4) UUIDs whose entropy is drawn a few kilobytes at a time.

`uuid.uuid4()` calls `os.urandom(16)`, and `os.urandom` releases the interpreter lock
around its `getrandom` system call. On the webhook's admission path, where a pod with
only `generateName` needs a key for its `creatingPods` entry, each such release under
load hands the lock to another thread and taking it back costs a context switch: about
one per admission (docs/performance.md, "Costs found, and what changed"). `UuidSource` draws the
entropy of `batch` UUIDs per call instead. The UUIDs are as random as `uuid4()`'s (the
same bytes, version and variant bits); a forked child starts with a fresh pool, so a
parent and its child never hand out the same UUID.
"""

from __future__ import annotations

import os
import weakref

_SOURCES: weakref.WeakSet[UuidSource] = weakref.WeakSet()


class UuidSource:
    """Callable: the next random UUID as a string. Thread-safe without a lock.

    Each refill turns `batch` UUIDs' entropy into their texts at once, and a call pops one:
    `list.pop` is atomic, so concurrent callers never get the same text, and two threads
    refilling together only drop one list of unused texts. A lock here had been contended on
    the admission path: a holder preempted by the interpreter's switch interval made every
    other admission thread block on it and wake again.
    """

    def __init__(self, batch: int = 256) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.batch = batch
        self._texts: list[str] = []
        _SOURCES.add(self)

    def __call__(self) -> str:
        try:
            return self._texts.pop()
        except IndexError:
            texts = uuid_texts(os.urandom(16 * self.batch))
            text = texts.pop()
            self._texts = texts
            return text

    def _forget(self) -> None:
        """Drop the pool (in a forked child: the parent holds the same texts)."""
        self._texts = []


def uuid_texts(entropy: bytes) -> list[str]:
    """The texts of the version-4 UUIDs made from each 16 bytes of `entropy`, as
    `str(uuid.UUID(bytes=chunk, version=4))` writes them: the version nibble set to 4 and the
    variant's two high bits to 10 (RFC 4122). Formatting the hex of the whole batch at once
    costs a fraction of building a `uuid.UUID` per text."""
    text = entropy.hex()
    return [
        f"{text[i : i + 8]}-{text[i + 8 : i + 12]}-4{text[i + 13 : i + 16]}-"
        f"{_VARIANT[text[i + 16]]}{text[i + 17 : i + 20]}-{text[i + 20 : i + 32]}"
        for i in range(0, len(text) - 31, 32)
    ]


# The first hex digit of the variant byte with its two high bits forced to 10: 8, 9, a or b.
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


def _after_fork_in_child() -> None:
    for source in list(_SOURCES):
        source._forget()


os.register_at_fork(after_in_child=_after_fork_in_child)
