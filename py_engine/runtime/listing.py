"""Lists taken at one moment, for the listed sources of both controllers.

`py_engine.workloadspread.controller.runtime.sources.ListedSource` (WorkloadSpread) and
`py_engine.uniteddeployment.controller.runtime.source.ListedUnitedSource` serve `--once` and the
stepped Manager (`stepped.SteppedManager`, which the virtual-time stack runs): every read of a
sync comes from lists taken at their last `refresh()`, so a sync sees exactly the API server's
state at that moment, with no watch lag to wait for. What they list differs; how a list is
taken (namespace scope, API list order), swapped in and read back under one lock is this base
class, so the two cannot drift apart (the watch-cache counterpart is `cachegroup.CacheGroup`).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from py_engine.apiclient import KubeClient, Resource
from py_engine.semantics.objects import meta

JSON = dict[str, Any]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def by_name(objects: list[JSON]) -> list[JSON]:
    """API list order (namespace, then name): the order the reference breaks ties by."""
    return sorted(
        objects, key=lambda o: (str(meta(o).get("namespace") or ""), str(meta(o).get("name") or ""))
    )


class ListedLists(ABC):
    """The lists of the last `_replace`, read by resource and namespace (see the module docstring).

    Subclasses implement `refresh()` with `_list` and `_replace`, may give listed items
    their type (`_typed`), keep what they derive from the lists (indexes) with `_derived` and
    drop it when the lists change (`_lists_replaced`). `_lock` guards `_lists` and those memos.
    """

    @abstractmethod
    def refresh(self) -> None:
        """List every resource a sync reads (raises `KubeError` when the API fails); a
        `SteppedManager` calls it right before each pass of the controller reading it."""

    def __init__(self, client: KubeClient, *, namespace: str | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self._lock = threading.Lock()
        self._lists: dict[Resource, list[JSON]] = {}

    def _typed(self, obj: JSON, resource: Resource) -> JSON:
        """A listed item as the source hands it out (as listed, unless a subclass says otherwise)."""
        return obj

    def _list(self, resource: Resource) -> list[JSON]:
        """`resource`'s objects, in the source's namespace when it is namespaced, in API list order
        (raises `KubeError` when the API fails)."""
        ns = self.namespace if resource.namespaced else None
        items = self.client.list(resource, ns).get("items") or []
        return by_name([self._typed(item, resource) for item in items])

    def _replace(self, lists: Mapping[Resource, list[JSON]]) -> None:
        """Swap in a whole refresh at once: a concurrent reader sees the old lists or the new ones."""
        with self._lock:
            self._lists = dict(lists)
            self._lists_replaced()

    def _lists_replaced(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Drop what was derived from the previous lists (called with `_lock` held)."""

    def _listing(self, resources: Iterable[Resource]) -> dict[Resource, list[JSON]]:
        """One fresh list per resource, in the order given."""
        return {resource: self._list(resource) for resource in resources}

    def _items(self, resource: Resource, namespace: str | None = None) -> list[JSON]:
        """The last list of `resource`, or its objects in `namespace`.

        A copy of the list, the objects shared."""
        with self._lock:
            items = self._lists.get(resource, [])
        if namespace is None:
            return list(items)
        return [o for o in items if meta(o).get("namespace") == namespace]

    def _item(self, resource: Resource, namespace: str, name: str) -> JSON | None:
        """The object `namespace/name` of the last list of `resource`, None when it was not listed."""
        return next((o for o in self._items(resource, namespace) if meta(o).get("name") == name), None)

    def _derived(self, memo: dict[K, V], key: K, build: Callable[[], V]) -> V:
        """`memo[key]`, built by `build` on first use. It is built outside the lock (building reads
        `_items`, which takes it); when two threads build at once, the first stored is kept. A memo
        replaced meanwhile (a refresh) does not receive a value built from the lists before it."""
        with self._lock:
            value = memo.get(key)
        if value is None:
            value = build()
            with self._lock:
                value = memo.setdefault(key, value)
        return value
