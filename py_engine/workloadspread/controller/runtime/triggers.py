"""Which watch events enqueue which spreads (docs/design-workloadspread.md §2.5 "Triggers").

Spread events enqueue the spread. Pod events enqueue the spread named by the
pod's annotation, else every spread targeting the pod's owner and, when that
owner is on a built-in kind's owner chain (a ReplicaSet: the workload registry's
`OWNER_CHAIN_KINDS`, py_engine/model/workloads.py), its owner's: pre-existing
pods must reach the sync that adopts them. Pod updates count only when
something a sync reads changed (phase, node, conditions, deletion, labels, the
matched annotation); our own deletion-cost patches do not, so they cannot loop.
Workload events enqueue the spreads targeting the workload (a ReplicaSet also
its Deployment's, by the same chain); for a
custom kind any change of its spec counts (its replicas path may be anywhere). Node
events that change scheduling facts enqueue every spread, since adoption and
the Adaptive fit read nodes.

Routing compares the target's `namespace/group/kind/name` with each spread's
(a scan of the spread cache: spreads are few compared with pods).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from py_engine.model import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.model.pods import controller_owner, matched_spread
from py_engine.model.workloads import OWNER_CHAIN_KINDS, builtin
from py_engine.runtime.triggers import node_facts, pod_facts, queue_key
from py_engine.semantics.objects import api_group, meta
from py_engine.workloadspread.controller.runtime.sources import JSON, CachedSource

Enqueue = Callable[[str], None]
_MATCHED = (MATCHED_ANNOTATION, KRUISE_MATCHED_ANNOTATION)
"""The annotations naming a pod's spread: a change of either re-routes the pod."""


def target_index(spread: Mapping[str, Any]) -> Iterable[str]:
    """Index value of a spread: the target's namespace/group/kind/name."""
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping):
        return []
    ns = meta(spread).get("namespace") or ""
    return [f"{ns}/{api_group(str(ref.get('apiVersion') or ''))}/{ref.get('kind')}/{ref.get('name')}"]


def _target(ns: str, api_version: str, kind: str, name: str) -> str:
    return f"{ns}/{api_group(api_version)}/{kind}/{name}"


def _workload_facts(obj: Mapping[str, Any] | None) -> Any:
    if obj is None:
        return None
    spec = obj.get("spec") or {}
    annotations = meta(obj).get("annotations") or {}
    status = obj.get("status") or {}
    return (
        spec.get("replicas"),
        spec.get("parallelism"),
        spec.get("template"),
        meta(obj).get("deletionTimestamp"),
        annotations.get("deployment.kubernetes.io/revision"),
        status.get("updateRevision"),
        status.get("currentRevision"),
    )


class Triggers:
    """Wires a `CachedSource`'s caches to `enqueue` (see the module docstring)."""

    def __init__(self, source: CachedSource, enqueue: Enqueue) -> None:
        self.source = source
        self.enqueue = enqueue

    def install(self) -> None:
        self.source.spread_cache.add_handler(self._on_spread)
        self.source.pod_cache.add_handler(self._on_pod)
        self.source.node_cache.add_handler(self._on_node)
        for (group, kind), cache in self.source.workload_caches.items():
            cache.add_handler(self._workload_handler(f"{group}/v1" if group else "v1", kind))

    def spreads_targeting(self, ns: str, api_version: str, kind: str, name: str) -> list[str]:
        wanted = _target(ns, api_version, kind, name)
        return [
            queue_key(s)
            for s in self.source.spreads()
            if meta(s).get("namespace") == ns and wanted in target_index(s)
        ]

    def _owner_targets(self, ns: str, obj: Mapping[str, Any]) -> list[str]:
        """The spreads targeting `obj`'s controller owner and, up the owner chain, its owners'."""
        owner = controller_owner(obj)
        if owner is None:
            return []
        api_version, kind, name = (
            str(owner.get("apiVersion") or ""),
            str(owner.get("kind")),
            str(owner.get("name")),
        )
        keys = self.spreads_targeting(ns, api_version, kind, name)
        if (api_group(api_version), kind) in OWNER_CHAIN_KINDS:
            link = self.source.workload(api_version, kind, ns, name)
            if link is not None:
                keys += self._owner_targets(ns, link)
        return keys

    def _on_spread(self, event: str, obj: JSON, old: JSON | None) -> None:
        self.enqueue(queue_key(obj))

    def _on_pod(self, event: str, pod: JSON, old: JSON | None) -> None:
        if event == "MODIFIED" and pod_facts(pod, _MATCHED) == pod_facts(old, _MATCHED):
            return
        ns = str(meta(pod).get("namespace") or "")
        keys: list[str] = []
        for candidate in (pod, old):
            matched = matched_spread(candidate) if candidate is not None else None
            if matched is not None and matched.name:
                keys.append(f"{ns}/{matched.name}")
        if not keys:
            keys = self._owner_targets(ns, pod)
        for key in dict.fromkeys(keys):
            self.enqueue(key)

    def _workload_handler(self, api_version: str, kind: str) -> Callable[[str, JSON, JSON | None], None]:
        def handle(event: str, obj: JSON, old: JSON | None) -> None:
            self._on_workload(api_version, kind, event, obj, old)

        return handle

    def _on_workload(self, api_version: str, kind: str, event: str, obj: JSON, old: JSON | None) -> None:
        """`api_version`/`kind` come from the cache: listed items may lack them."""
        custom = builtin(api_group(api_version), kind) is None  # its replicas may be anywhere in its spec
        if (
            event == "MODIFIED"
            and _workload_facts(obj) == _workload_facts(old)
            and not (custom and obj.get("spec") != (old or {}).get("spec"))
        ):
            return
        ns = str(meta(obj).get("namespace") or "")
        keys = self.spreads_targeting(ns, api_version, kind, str(meta(obj).get("name") or ""))
        if (api_group(api_version), kind) in OWNER_CHAIN_KINDS:
            keys += self._owner_targets(ns, obj)
        for key in dict.fromkeys(keys):
            self.enqueue(key)

    def _on_node(self, event: str, node: JSON, old: JSON | None) -> None:
        if event == "MODIFIED" and node_facts(node) == node_facts(old):
            return
        for spread in self.source.spreads():
            self.enqueue(queue_key(spread))
