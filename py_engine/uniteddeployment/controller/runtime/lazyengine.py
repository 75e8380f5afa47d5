"""A policy engine built on first use and closed once (the node-fit check and the subset patch
allowlist check each hold one, so a controller that never needs a check never loads the policies)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from py_engine.policy import PolicyEngine, create_engine


class LazyEngine:
    """`get()` builds the engine (`factory`, default the embedded one) the first time; `close()`."""

    def __init__(self, factory: Callable[[], PolicyEngine] | None = None) -> None:
        self._factory = factory
        self._engine: PolicyEngine | None = None
        self._lock = threading.Lock()

    def get(self) -> PolicyEngine:
        with self._lock:
            if self._engine is None:
                self._engine = self._factory() if self._factory is not None else create_engine()
            return self._engine

    def close(self) -> None:
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()
