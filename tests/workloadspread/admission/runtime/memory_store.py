"""An in-memory `StatusStore` for committer tests: spreads by (namespace, name) with a
resourceVersion, 409 on a stale write, no watch cache."""

from __future__ import annotations

import threading
from typing import Any

from py_engine.apiclient import Conflict, NotFound


class MemoryStore:
    """Spreads by (namespace, name) with a resourceVersion; 409 on a stale write."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.rv = 0

    def add(self, namespace: str, name: str) -> None:
        with self.lock:
            self.rv += 1
            self.objects[(namespace, name)] = {
                "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(self.rv)},
                "status": {},
            }

    def get(self, namespace: str, name: str, *, timeout: float) -> dict[str, Any]:
        with self.lock:
            if (namespace, name) not in self.objects:
                raise NotFound(404, "NotFound", "not found")
            return self.objects[(namespace, name)]

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        with self.lock:
            current = self.objects[(namespace, name)]
            if obj["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise Conflict(409, "Conflict", "stale")
            self.rv += 1
            written = dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(self.rv)))
            self.objects[(namespace, name)] = written
            return written

    def cached(self, namespace: str, name: str) -> dict[str, Any] | None:
        return None
