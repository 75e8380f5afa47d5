"""An in-memory cluster for the webhook fuzz: the real app, service, committer and Rego
engine, over a dict of objects instead of watch caches and an API server.

Each example builds a fresh `MemoryCluster` from its (possibly hostile) spreads,
so one example's status writes never leak into the next; the policy engine is
shared by the module (creating one per example would dominate the run).
"""

from __future__ import annotations

import copy
import json
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from py_engine.apiclient import Conflict, NotFound
from py_engine.placement.eligibility import EligibilityCache
from py_engine.placement.inventory import NodeInventory, build_node_inventory
from py_engine.policy import create_engine
from py_engine.semantics import objects
from py_engine.semantics.clock import RealClock
from py_engine.validation.service import ValidationConfig, ValidationService
from py_engine.workloadspread.admission.runtime.committer import Committer
from py_engine.workloadspread.admission.service import AdmissionService, ServiceConfig
from webhook.app import create_app
from webhook.metrics import WebhookMetrics

ENGINE = create_engine()
JSON = dict[str, Any]


class MemoryCluster:
    """The view (`LiveAdmissionView`'s reading API) and the status store (`StatusStore`) over dicts."""

    def __init__(self, objects: Iterable[Any], nodes: list[JSON] | None = None) -> None:
        self._lock = threading.Lock()
        self.objects: list[JSON] = [o for o in objects if isinstance(o, dict)]
        self.rv = 1
        self.writes = 0
        self.inventory: NodeInventory | None = build_node_inventory(nodes, []) if nodes else None

    # ------------------------------------------------------------------ view
    def ready(self) -> bool:
        return True

    def spreads_in(self, namespace: str) -> list[JSON]:
        with self._lock:
            return [
                o
                for o in self.objects
                if o.get("kind") == "WorkloadSpread"
                and str(objects.meta(o).get("namespace") or "default") == namespace
            ]

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        with self._lock:
            for o in self.objects:
                if (
                    o.get("kind") == kind
                    and objects.group_of(o) == objects.api_group(api_version)
                    and str(objects.meta(o).get("namespace") or "default") == namespace
                    and objects.meta(o).get("name") == name
                ):
                    return o
        return None

    fresh_lookup = lookup

    def pod(self, namespace: str, name: str) -> JSON | None:
        return self.lookup("v1", "Pod", namespace, name)

    def node_inventory(self) -> NodeInventory | None:
        return self.inventory

    # ----------------------------------------------------------------- store
    def _find(self, namespace: str, name: str) -> int:
        for index, o in enumerate(self.objects):
            if (
                o.get("kind") == "WorkloadSpread"
                and str(objects.meta(o).get("namespace") or "default") == namespace
                and objects.meta(o).get("name") == name
            ):
                return index
        raise NotFound(404, "NotFound", f"workloadspreads {name} not found")

    def get(self, namespace: str, name: str, *, timeout: float) -> JSON:
        with self._lock:
            return copy.deepcopy(self.objects[self._find(namespace, name)])

    def replace_status(self, namespace: str, name: str, obj: JSON, *, timeout: float) -> JSON:
        with self._lock:
            index = self._find(namespace, name)
            current = self.objects[index]
            sent = str(objects.meta(obj).get("resourceVersion") or "")
            if sent and sent != str(objects.meta(current).get("resourceVersion") or ""):
                raise Conflict(409, "Conflict", "the object has been modified")
            self.rv += 1
            updated = dict(current, status=copy.deepcopy(obj.get("status")))
            updated["metadata"] = dict(objects.meta(current), resourceVersion=str(self.rv))
            self.objects[index] = updated
            self.writes += 1
            return copy.deepcopy(updated)

    def cached(self, namespace: str, name: str) -> JSON | None:
        return None


def webhook_app(cluster: MemoryCluster, **config: Any) -> Flask:
    """The real Flask app, admission and validation services over `cluster` (a 1 MiB body cap
    keeps huge cases quick)."""
    clock = RealClock()
    committer = Committer(cluster, clock)
    service = AdmissionService(
        cluster,
        committer,
        clock,
        engine=ENGINE,  # type: ignore[arg-type]
        config=ServiceConfig(commit_timeout=2.0, **config),
        decision_cache=EligibilityCache(),
    )
    validation = ValidationService(
        cluster,
        ENGINE,
        config=ValidationConfig(  # type: ignore[arg-type]
            custom_workloads=config.get("custom_workloads", ()),
            allowed_patch_fields=config.get("allowed_patch_fields", ()),
        ),
    )
    return create_app(service, validation, metrics=WebhookMetrics(), max_body=1024 * 1024)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """A folder for the fuzzed CLI inputs, one per test module (a fixture is per example otherwise)."""
    with tempfile.TemporaryDirectory(prefix="spreadgate-fuzz-") as tmp:
        yield Path(tmp)


def write(path: Path, value: Any) -> str:
    """`value` as JSON in `path`; returns the path as a command-line argument."""
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)
