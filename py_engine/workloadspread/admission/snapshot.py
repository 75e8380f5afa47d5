"""The offline `AdmissionReader` (`py_engine.workloadspread.admission.ports`): objects of a snapshot.

`spreadgate admit` reads `kubectl get sgws,deploy,rs,pods,nodes -o yaml`; the
reference-vector tests hand over their cluster. Objects are indexed the way the
webhook's caches are (group, kind, namespace, name; the version is ignored), the
spreads of a namespace come in name order like the API's list, and the node
inventory is built from the snapshot's nodes and the pods bound to them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from py_engine.model import is_workloadspread
from py_engine.placement.inventory import NodeInventory, build_node_inventory
from py_engine.semantics import objects

JSON = dict[str, Any]
Key = tuple[str, str, str, str]


class SnapshotReader:
    """Objects of one snapshot; `replace_spread` keeps what an offline commit would write."""

    def __init__(self, items: Iterable[JSON] = ()) -> None:
        self.objects: dict[Key, JSON] = {}
        for obj in items:
            self.add(obj)

    @staticmethod
    def key(obj: JSON) -> Key | None:
        kind = obj.get("kind")
        name = objects.meta(obj).get("name")
        if not isinstance(kind, str) or not isinstance(name, str):
            return None
        return (objects.group_of(obj), kind, objects.namespace(obj), name)

    def add(self, obj: JSON) -> None:
        """Index `obj` (a later object with the same key replaces the earlier one)."""
        key = self.key(obj)
        if key is not None:
            self.objects[key] = obj

    def of_kind(self, kind: str) -> list[JSON]:
        return [obj for (_, k, _, _), obj in self.objects.items() if k == kind]

    @property
    def spreads(self) -> list[JSON]:
        return [obj for obj in self.objects.values() if is_workloadspread(obj)]

    def spread(self, namespace: str, name: str) -> JSON | None:
        return next((s for s in self.spreads_in(namespace) if objects.name(s) == name), None)

    def replace_spread(self, obj: JSON) -> None:
        """Put a spread as written back (the key of the one it replaces, whatever its group)."""
        for key, current in list(self.objects.items()):
            if (
                is_workloadspread(current)
                and objects.namespace(current) == objects.namespace(obj)
                and objects.name(current) == objects.name(obj)
            ):
                self.objects[key] = obj
                return
        self.add(obj)

    # ---------------------------------------------------------- AdmissionReader

    def spreads_in(self, namespace: str) -> list[JSON]:
        return sorted((s for s in self.spreads if objects.namespace(s) == namespace), key=objects.name)

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        return self.objects.get((objects.api_group(api_version), kind, namespace, name))

    fresh_lookup = lookup

    def pod(self, namespace: str, name: str) -> JSON | None:
        return self.objects.get(("", "Pod", namespace, name))

    def node_inventory(self) -> NodeInventory | None:
        nodes = self.of_kind("Node")
        return build_node_inventory(nodes, self.of_kind("Pod")) if nodes else None

    def ready(self) -> bool:
        return True
