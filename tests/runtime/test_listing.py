"""The listed sources' shared base (py_engine/runtime/listing.py), through both
subclasses: what a refresh lists, in which scope and order, what it hands out, and that what a
source derived from the previous lists (pod lists, indexes) is dropped by a refresh."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from py_engine.apiclient import NODES, PODS, REPLICASETS, NotFound, Resource
from py_engine.model.resource import SPREADS
from py_engine.runtime.listing import ListedLists, by_name
from py_engine.uniteddeployment.controller.runtime.resources import CONTROLLER_REVISIONS, UNITED_DEPLOYMENTS
from py_engine.uniteddeployment.controller.runtime.source import ListedUnitedSource
from py_engine.workloadspread.controller.runtime.sources import ListedSource

pytestmark = pytest.mark.timeout(30)
JSON = dict[str, Any]


def client_of(fake: ListingClient) -> Any:
    return fake  # stands in for a KubeClient


def obj(name: str, namespace: str | None = "default", labels: dict[str, str] | None = None) -> JSON:
    metadata: JSON = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = labels
    return {"metadata": metadata}


class ListingClient:
    """Serves `items[plural]`, scoped like the API server; records each list call; no CRDs."""

    def __init__(self, items: dict[str, list[JSON]]) -> None:
        self.items = items
        self.lists: list[tuple[str, str | None]] = []

    def get(self, resource: Resource, namespace: str | None, name: str, **_: Any) -> JSON:
        raise NotFound(404, "NotFound", f"{resource.plural} {name} not found")

    def list(self, resource: Resource, namespace: str | None = None, **_: Any) -> JSON:
        self.lists.append((resource.plural, namespace))
        found = self.items.get(resource.plural, [])
        return {
            "items": [o for o in found if namespace is None or o["metadata"].get("namespace") == namespace]
        }


class Plain(ListedLists):
    """The base alone: lists what it is told to, counts how often its derived state is dropped."""

    def __init__(self, client: Any, namespace: str | None = None) -> None:
        super().__init__(client, namespace=namespace)
        self.dropped = 0
        self.memo: dict[str, int] = {}

    def refresh(self, resources: list[Resource]) -> None:
        self._replace(self._listing(resources))

    def _lists_replaced(self) -> None:
        self.dropped += 1
        self.memo = {}


def test_by_name_is_api_list_order() -> None:
    objects = [obj("b", "y"), obj("a", "y"), obj("z", None), obj("c", "x")]
    assert [(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in by_name(objects)] == [
        (None, "z"),
        ("x", "c"),
        ("y", "a"),
        ("y", "b"),
    ]


def test_a_list_is_scoped_to_the_namespace_only_for_namespaced_resources_and_sorted() -> None:
    client = ListingClient(
        {"pods": [obj("b"), obj("a"), obj("c", "other")], "nodes": [obj("n2", None), obj("n1", None)]}
    )
    source = Plain(client_of(client), namespace="default")
    source.refresh([PODS, NODES])
    assert sorted(client.lists) == [("nodes", None), ("pods", "default")]
    assert [o["metadata"]["name"] for o in source._items(PODS)] == ["a", "b"]
    assert [o["metadata"]["name"] for o in source._items(NODES)] == ["n1", "n2"]


def test_items_filter_by_namespace_and_hand_out_a_copy_of_the_list_with_shared_objects() -> None:
    pods = [obj("a"), obj("b", "other")]
    source = Plain(client_of(ListingClient({"pods": pods})))
    source.refresh([PODS])
    assert [o["metadata"]["name"] for o in source._items(PODS, "other")] == ["b"]
    assert source._items(NODES) == []  # not listed: empty
    handed = source._items(PODS)
    handed.clear()
    assert len(source._items(PODS)) == 2
    assert source._items(PODS)[0] is pods[0]


def test_a_refresh_replaces_the_lists_and_drops_what_was_derived_from_them() -> None:
    client = ListingClient({"pods": [obj("a")]})
    source = Plain(client_of(client))
    source.refresh([PODS])
    assert source._derived(source.memo, "k", lambda: 1) == 1
    assert source._derived(source.memo, "k", lambda: 2) == 1  # built once per refresh
    client.items["pods"] = [obj("b")]
    source.refresh([PODS])
    assert source.dropped == 2
    assert [o["metadata"]["name"] for o in source._items(PODS)] == ["b"]
    assert source._derived(source.memo, "k", lambda: 3) == 3


def test_a_value_built_from_lists_a_refresh_replaced_stays_out_of_the_new_memo() -> None:
    source = Plain(client_of(ListingClient({})))
    source.refresh([])
    old_memo = source.memo

    def build_across_a_refresh() -> int:
        source.refresh([])  # the refresh lands while the value is being built
        return 1

    assert source._derived(old_memo, "k", build_across_a_refresh) == 1
    assert source.memo == {}


def test_concurrent_builders_agree_on_the_first_value_stored() -> None:
    source = Plain(client_of(ListingClient({})))
    memo: dict[str, object] = {}
    both_building = threading.Barrier(2)  # each builds: neither found a value
    results: list[object] = []

    def build() -> object:
        both_building.wait(timeout=5)
        return object()

    threads = [
        threading.Thread(target=lambda: results.append(source._derived(memo, "k", build))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert len(results) == 2 and results[0] is results[1] is memo["k"]


def test_the_spread_source_lists_spreads_pods_nodes_and_workloads_as_listed() -> None:
    pod = obj("p")  # no apiVersion/kind: handed out as listed
    client = ListingClient(
        {"workloadspreads": [obj("ws")], "pods": [pod], "nodes": [obj("n", None)], "replicasets": [obj("rs")]}
    )
    source = ListedSource(client_of(client), namespace="default")
    source.refresh()
    listed = {plural for plural, _ in client.lists}
    assert {SPREADS.plural, PODS.plural, NODES.plural, REPLICASETS.plural} <= listed
    assert source.pods("default") == [pod] and source.pods("default")[0] is pod
    assert [s["metadata"]["name"] for s in source.spreads()] == ["ws"]
    assert list(source.nodes()) == ["n"]


def test_the_spread_source_rebuilds_its_pod_list_after_a_refresh() -> None:
    client = ListingClient({"pods": [obj("a")]})
    source = ListedSource(client_of(client))
    source.refresh()
    first = source.pods("default")
    assert source.pods("default") is first  # one list per namespace and refresh
    client.items["pods"] = [obj("a"), obj("b")]
    source.refresh()
    assert [p["metadata"]["name"] for p in source.pods("default")] == ["a", "b"]


def test_the_united_source_types_its_items_and_lists_nothing_else_without_a_united_deployment() -> None:
    client = ListingClient({"pods": [obj("p", labels={"app": "web"})]})
    source = ListedUnitedSource(client_of(client), namespace="default")
    source.refresh()
    assert client.lists == [(UNITED_DEPLOYMENTS.plural, "default")]
    assert source.all_pods() == []

    client.lists.clear()
    client.items[UNITED_DEPLOYMENTS.plural] = [obj("web")]
    source.refresh()
    assert {plural for plural, _ in client.lists} >= {
        UNITED_DEPLOYMENTS.plural,
        CONTROLLER_REVISIONS.plural,
        PODS.plural,
        NODES.plural,
    }
    [ud] = source.united_deployments()
    assert (ud["apiVersion"], ud["kind"]) == (UNITED_DEPLOYMENTS.api_version, UNITED_DEPLOYMENTS.kind)
    [pod] = source.pods("default", {"matchLabels": {"app": "web"}})
    assert (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")


def test_the_united_source_rebuilds_its_indexes_after_a_refresh() -> None:
    client = ListingClient(
        {UNITED_DEPLOYMENTS.plural: [obj("web")], "pods": [obj("a", labels={"app": "web"})]}
    )
    source = ListedUnitedSource(client_of(client))
    source.refresh()
    selector = {"matchLabels": {"app": "web"}}
    assert [p["metadata"]["name"] for p in source.pods("default", selector)] == ["a"]
    client.items["pods"].append(obj("b", labels={"app": "web"}))
    assert [p["metadata"]["name"] for p in source.pods("default", selector)] == ["a"]  # until the refresh
    source.refresh()
    assert [p["metadata"]["name"] for p in source.pods("default", selector)] == ["a", "b"]
