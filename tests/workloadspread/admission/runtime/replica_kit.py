"""One webhook replica's committer against the embedded API server, and a peer writing beside
it: the set-up of the committer's tests against the API server (`test_committer.py`,
`test_committer_conflicts.py`, `test_committer_overtaken.py`; the fixtures `env` and
`replica` are in this directory's conftest.py).

The embedded API server over HTTPS, one real watch cache per replica; the reservations are toys
(a list of holders in `status.conditions`, a field the CRD declares), idempotent as the real
ones are (a holder already present changes nothing).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from memory_store import WriteHooks
from webhook_testkit import SPREADS, KubeEnv

from py_engine.apiclient import KubeClient, WatchCache
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.admission.runtime.committer import Committer, KubeStatusStore

CLOCK = RealClock()
JSON = dict[str, Any]


def held(obj: JSON) -> list[str]:
    status = obj.get("status") or {}
    return [str(c["reason"]) for c in status.get("conditions") or [] if c.get("type") == "Holder"]


def with_holder(obj: JSON, holder: str) -> JSON:
    conditions = [*(obj.get("status") or {}).get("conditions", []), holder_condition(holder)]
    return dict(obj, status=dict(obj.get("status") or {}, conditions=conditions))


def holder_condition(holder: str) -> JSON:
    return {"type": "Holder", "status": "True", "reason": holder}


def take(holder: str, applies: list[str] | None = None) -> Callable[[JSON], tuple[JSON | None, bool]]:
    """A reservation: add `holder` unless present (idempotent); `applies` records each call."""

    def apply(obj: JSON) -> tuple[JSON | None, bool]:
        if applies is not None:
            applies.append(holder)
        if holder in held(obj):
            return None, True
        return with_holder(obj, holder), True

    return apply


class CountingStore(KubeStatusStore):
    """`KubeStatusStore` counting GETs and write attempts, with `hooks` around its writes;
    `writers` names the thread of each write, `waited` holds what each `wait_cached` returned."""

    def __init__(self, client: KubeClient, cache: WatchCache) -> None:
        super().__init__(client, SPREADS, cache)
        self.gets = 0
        self.attempts = 0
        self.hooks = WriteHooks()
        self.writers: list[str] = []
        self.waited: list[JSON | None] = []

    def get(self, namespace: str, name: str, *, timeout: float) -> JSON:
        self.gets += 1
        return super().get(namespace, name, timeout=timeout)

    def replace_status(self, namespace: str, name: str, obj: JSON, *, timeout: float) -> JSON:
        self.attempts += 1
        self.writers.append(threading.current_thread().name)
        return self.hooks.around(partial(super().replace_status, namespace, name, obj, timeout=timeout))

    def wait_cached(self, *args: Any, **kwargs: Any) -> JSON | None:
        found = super().wait_cached(*args, **kwargs)
        self.waited.append(found)
        return found


CONFLICT_OPTIONS: dict[str, Any] = {"linger": 0.0, "conflict_wait": 10.0}
"""The conflict tests' committer: no linger; a `conflict_wait` long enough that the watch always
delivers first on a loaded machine."""


class Replica:
    """One webhook replica (or process): its own client, watch cache and committer (`options`
    are the committer's, over `seed=1`)."""

    def __init__(self, env: KubeEnv, **options: Any) -> None:
        self.client = KubeClient.load(env.kubeconfig, timeout=5)
        self.cache = WatchCache(self.client, SPREADS, watch_timeout_seconds=30).start()
        assert self.cache.wait_synced(5)
        self.store = CountingStore(self.client, self.cache)
        self.committer = Committer(self.store, CLOCK, **({"seed": 1} | options))

    def submit(self, apply: Callable[[JSON], tuple[JSON | None, bool]]) -> bool:
        result: bool = self.committer.submit("default", "ws", apply, CLOCK.monotonic() + 20)
        return result

    def sees(self, obj: JSON) -> bool:
        cached = self.cache.get("default", "ws")
        return (
            cached is not None and cached["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
        )

    def close(self) -> None:
        self.cache.stop()
        self.client.close()


def peer_write(env: KubeEnv, holder: str) -> JSON:
    """Another replica's successful status write."""
    current = env.client.get(SPREADS, "default", "ws")
    return env.client.replace_status(SPREADS, "default", "ws", with_holder(current, holder))


def stored(env: KubeEnv) -> list[str]:
    return held(env.client.get(SPREADS, "default", "ws"))
