"""How often the webhook process runs Python's cyclic garbage collector.

CPython collects its youngest generation after every 700 net allocations of container objects
(dicts, lists, tuples, class instances). An admission allocates a few hundred of them, and
those of a pod waiting for its batch's status write survive into the older generations, so at
Python's setting the collector ran about once per 11 admissions and cost 34 µs per admission
under the benchmark's load, against 8 µs per request for a no-op on the same server (docs/performance.md,
"Costs found, and what changed"). At 10,000 it ran once per several hundred admissions and cost
5 µs per admission; each run then walks at most that many young objects (0.26 ms for 10,000 in
one thread without a server).

The price is that cyclic garbage waits longer, so no memory bound may depend on the collector.
That premise, "almost nothing forms a cycle", was wrong once (issue 23): a TLS handshake that
failed left its 256 KiB protocol in a cycle through the exception's traceback, and a handshake
flood grew the process past 1 GiB between two collections. The front end now breaks that cycle
itself (`webhook.frontend._drop_traceback`), and `tests/webhook/test_front_end_bounds.py` counts
the live protocol objects after failed handshakes with the collector disabled, so a new cycle
on a per-connection path fails a test instead of waiting for this threshold.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

YOUNG_THRESHOLD = 10_000
"""`spreadgate webhook --gc-young-threshold`'s default."""


def tune_collector(young: int) -> None:
    """Collect the youngest generation after `young` net container allocations (`gc.set_threshold`),
    keeping the older generations' thresholds; 0 leaves the interpreter's setting. Process-wide:
    called once by the daemon (and the benchmark's webhook process, to measure the same)."""
    if young < 0:
        raise ValueError("the young-generation threshold must be 0 (unchanged) or positive")
    if young:
        _, middle, oldest = gc.get_threshold()
        gc.set_threshold(young, middle, oldest)


def freeze_when_ready(ready: Callable[[float], bool], timeout: float = 3600.0) -> threading.Thread:
    """In a daemon thread: once `ready(timeout)` is true (the watch caches hold their first
    list), collect once and move every live object to the permanent generation (`gc.freeze`).

    The caches' objects live as long as the process, and each full collection walks every
    one of them: 50,000 cached pods are about two million container objects, a collection of
    several hundred milliseconds to seconds during which no request is served, which put a
    cluster's size into the admission p99 (issue 28, docs/scale.md). Frozen objects are still
    freed by reference counting when the cache drops them; only the cycle search skips them,
    and cached objects form no cycles. Objects cached after the freeze (pods created since) are
    collected as usual.
    """

    def wait_and_freeze() -> None:
        if ready(timeout):
            gc.collect()
            gc.freeze()

    thread = threading.Thread(target=wait_and_freeze, name="gc-freeze-after-sync", daemon=True)
    thread.start()
    return thread
