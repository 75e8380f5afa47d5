"""The watch cache: sync, events, indexes, bookmarks, reconnect and relist on 410."""

from __future__ import annotations

from typing import Any

import webhook_testkit
from polling import wait_until
from webhook_testkit import KubeEnv, kube_env  # noqa: F401

from py_engine.apiclient import NODES, PODS, WatchCache

env = webhook_testkit.env  # the fixture, used by name


def pod(name: str, node: str = "", **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def by_app(obj: Any) -> list[str]:
    app = (obj.get("metadata", {}).get("labels") or {}).get("app")
    return [app] if app else []


def test_sync_events_indexes_and_version(env: KubeEnv) -> None:
    c = env.client
    c.create(PODS, "default", pod("a", app="x"))
    cache = WatchCache(c, PODS, indexers={"app": by_app}, watch_timeout_seconds=5).start()
    seen: list[tuple[str, str]] = []
    cache.add_handler(lambda typ, obj, old: seen.append((typ, obj["metadata"]["name"])))
    try:
        assert cache.wait_synced(5)
        assert cache.get("default", "a") is not None and cache.get("default", "b") is None
        v0 = cache.version
        c.create(PODS, "default", pod("b", app="x"))
        c.create(PODS, "kube-system", pod("c", app="y"))
        wait_until(lambda: len(cache) == 3, 5, "3 pods cached")
        assert cache.version > v0
        assert [p["metadata"]["name"] for p in cache.by_index("app", "x")] == ["a", "b"]
        assert [p["metadata"]["name"] for p in cache.list("kube-system")] == ["c"]
        c.patch(PODS, "default", "b", {"metadata": {"labels": {"app": "y"}}})
        wait_until(lambda: len(cache.by_index("app", "y")) == 2, 5, "index moved")
        assert [p["metadata"]["name"] for p in cache.by_index("app", "x")] == ["a"]
        c.delete(PODS, "default", "a", grace_period_seconds=0)
        wait_until(lambda: cache.get("default", "a") is None, 5, "delete seen")
        assert cache.by_index("app", "x") == []
        assert ("ADDED", "b") in seen and ("MODIFIED", "b") in seen and ("DELETED", "a") in seen
    finally:
        cache.stop()
    assert not cache.running


def test_bookmarks_advance_resource_version(env: KubeEnv) -> None:
    cache = WatchCache(env.client, NODES, watch_timeout_seconds=30).start()
    try:
        assert cache.wait_synced(5)
        # Writes to another resource move the global resourceVersion; bookmarks carry it.
        before = cache.resource_version
        env.client.create(PODS, "default", pod("p"))
        wait_until(lambda: cache.stats.bookmarks > 0 and cache.resource_version != before, 5, "a bookmark")
    finally:
        cache.stop()


def test_reconnects_after_errors_and_relists_on_gone(env: KubeEnv) -> None:
    c = env.client
    c.create(PODS, "default", pod("keep"))
    c.create(PODS, "default", pod("doomed"))
    cache = WatchCache(
        c, PODS, namespace="default", watch_timeout_seconds=1, backoff_initial=0.05, backoff_max=0.2
    ).start()
    try:
        assert cache.wait_synced(5)
        # Every new watch fails; once the current one times out the cache is cut off.
        env.faults.set_spec("pods:watch:error500=1")
        wait_until(lambda: cache.stats.errors >= 2, 10, "watch reconnect failures")
        lists_before = cache.stats.lists
        # Meanwhile more than the server's 500-event history happens: the cache's RV expires.
        c.delete(PODS, "default", "doomed", grace_period_seconds=0)
        for i in range(260):
            c.create(PODS, "kube-system", pod(f"filler-{i}"))
            c.delete(PODS, "kube-system", f"filler-{i}", grace_period_seconds=0)
        c.create(PODS, "default", pod("new"))
        env.faults.clear()
        wait_until(lambda: cache.stats.gone >= 1 and cache.stats.lists > lists_before, 10, "410 and relist")
        wait_until(
            lambda: sorted(p["metadata"]["name"] for p in cache.list()) == ["keep", "new"],
            5,
            "relisted content",
        )
        c.create(PODS, "default", pod("after"))
        wait_until(lambda: cache.get("default", "after") is not None, 5, "watch resumed after relist")
    finally:
        cache.stop()


def test_cached_objects_are_kept_without_managed_fields(env: KubeEnv) -> None:
    """The server records managed fields on every write; the cache keeps the rest of the object."""
    c = env.client
    c.create(PODS, "default", pod("listed", app="x"))
    assert c.get(PODS, "default", "listed")["metadata"].get("managedFields")
    cache = WatchCache(c, PODS, watch_timeout_seconds=5).start()
    try:
        assert cache.wait_synced(5)
        c.create(PODS, "default", pod("watched", app="x"))
        wait_until(lambda: cache.get("default", "watched") is not None, 5, "the watched pod")
        written = c.create(PODS, "default", pod("upserted", app="x"))
        cache.upsert(written)
        for name in ("listed", "watched", "upserted"):
            cached = cache.get("default", name)
            assert cached is not None and "managedFields" not in cached["metadata"]
            assert (
                cached["metadata"]["labels"] == {"app": "x"}
                and cached["spec"]["containers"][0]["name"] == "c"
            )
        assert written["metadata"].get("managedFields")  # the caller's object is not changed
    finally:
        cache.stop()


def test_a_late_upsert_never_moves_the_cache_back_to_an_older_object(env: KubeEnv) -> None:
    """A writer's `upsert` of its write's response can come after the watch already delivered a
    newer version (someone scaled the object meanwhile) or its deletion: the cache keeps what the
    watch said and tells no handler, or the newer object would be lost until the next relist."""
    c = env.client
    cache = WatchCache(c, PODS, namespace="default", watch_timeout_seconds=30).start()
    seen: list[tuple[str, str]] = []
    cache.add_handler(lambda typ, obj, old: seen.append((typ, obj["metadata"]["resourceVersion"])))
    try:
        assert cache.wait_synced(5)
        ours = c.create(PODS, "default", pod("web", app="x"))
        theirs = c.patch(PODS, "default", "web", {"metadata": {"labels": {"app": "y"}}})
        newer = theirs["metadata"]["resourceVersion"]
        wait_until(
            lambda: (cache.get("default", "web") or {}).get("metadata", {}).get("resourceVersion") == newer,
            5,
            "the patch seen",
        )
        seen.clear()
        cache.upsert(ours)  # our create's response, handed to the cache late
        kept = cache.get("default", "web")
        assert kept is not None and kept["metadata"]["resourceVersion"] == newer and seen == []
        c.delete(PODS, "default", "web", grace_period_seconds=0)
        wait_until(lambda: cache.get("default", "web") is None, 5, "the delete seen")
        seen.clear()
        cache.upsert(theirs)  # a response that predates the deletion the watch delivered
        assert cache.get("default", "web") is None and seen == []
        # A response the watch has not delivered yet is taken ahead of it (and said once).
        ahead = c.create(PODS, "default", pod("ahead", app="x"))
        cache.upsert(ahead)
        cached = cache.get("default", "ahead")
        assert (
            cached is not None
            and cached["metadata"]["resourceVersion"] == ahead["metadata"]["resourceVersion"]
        )
        wait_until(
            lambda: cache.resource_version == ahead["metadata"]["resourceVersion"], 5, "the watch catches up"
        )
        assert [t for t, rv in seen if rv == ahead["metadata"]["resourceVersion"]] == ["ADDED"]
    finally:
        cache.stop()


def versioned(name: str, rv: int, app: str = "x") -> dict[str, Any]:
    obj = pod(name, app=app)
    obj["metadata"].update(namespace="default", resourceVersion=str(rv))
    return obj


def test_upserts_ahead_of_the_watch_apply_and_the_watch_stays_authoritative() -> None:
    """An upsert newer than the watch is applied and said once; a later event of the same
    version is not said again; watch events and relists always apply (a server whose
    resourceVersions went backwards cannot leave the cache stuck); resourceVersions that are
    not integers fall back to equality."""
    client: Any = None  # never started: the store is driven directly
    cache = WatchCache(client, PODS)
    seen: list[tuple[str, str, str]] = []
    cache.add_handler(
        lambda typ, obj, old: seen.append((typ, obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))
    )
    cache._replace_all([versioned("web", 5)], "5")
    seen.clear()
    cache.upsert(versioned("web", 7, app="ours"))
    cache.upsert(versioned("made", 8))
    cache.upsert(versioned("web", 6, app="older"))  # a response older than the last one
    assert seen == [("MODIFIED", "web", "7"), ("ADDED", "made", "8")]
    cache._apply({"type": "MODIFIED", "object": versioned("web", 7, app="ours")})
    assert len(seen) == 2 and cache.resource_version == "7"
    cache._replace_all([versioned("web", 3, app="restored")], "3")  # a restored server
    assert (cache.get("default", "web") or {})["metadata"]["labels"] == {"app": "restored"}
    assert cache.get("default", "made") is None and cache.resource_version == "3"
    cache.upsert(versioned("web", 2))  # older than what the watch delivered
    assert (cache.get("default", "web") or {})["metadata"]["resourceVersion"] == "3"
    opaque = versioned("web", 0)
    opaque["metadata"]["resourceVersion"] = "opaque-1"
    cache.upsert(opaque)
    assert (cache.get("default", "web") or {})["metadata"]["resourceVersion"] == "opaque-1"
