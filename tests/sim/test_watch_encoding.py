"""Each watch event is encoded once for all the watchers that receive it, as kube-apiserver's
watch cache does (py_engine/sim/watch_encoding.py); what decides an event's bytes keeps
events apart."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from py_engine.sim.watch_encoding import EncodedEvents

pytestmark = pytest.mark.timeout(60)


def event(kind: str, uid: str = "u1", rv: str = "7", **meta: Any) -> dict[str, Any]:
    return {"type": kind, "object": {"metadata": {"uid": uid, "resourceVersion": rv, **meta}}}


class CountingEncoder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, ev: Any) -> bytes:
        self.calls += 1
        return json.dumps(ev).encode()


def test_one_encoding_per_event_type_object_version_and_definition() -> None:
    events, encode = EncodedEvents(), CountingEncoder()
    definition, other_definition = object(), object()
    first = events.line(definition, event("MODIFIED"), encode)
    assert events.line(definition, event("MODIFIED"), encode) is first and encode.calls == 1
    # A watcher whose selector the object left gets the same write as DELETED.
    assert json.loads(events.line(definition, event("DELETED"), encode))["type"] == "DELETED"
    events.line(definition, event("MODIFIED", rv="8"), encode)  # the next write
    events.line(definition, event("MODIFIED", uid="u2"), encode)  # another object
    events.line(other_definition, event("MODIFIED"), encode)  # read through another version
    assert encode.calls == 5 and events.encodings == 5


def test_bookmarks_and_objects_without_identity_are_encoded_each_time() -> None:
    events, encode = EncodedEvents(), CountingEncoder()
    definition = object()
    bookmark = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}
    no_uid = {"type": "MODIFIED", "object": {"metadata": {"resourceVersion": "9"}}}
    for _ in range(2):
        events.line(definition, bookmark, encode)
        events.line(definition, no_uid, encode)
        events.line(definition, {"type": "ERROR", "object": {"code": 410}}, encode)
    assert encode.calls == 6


def test_the_kept_lines_are_bounded_least_recently_used_first_out() -> None:
    events, encode = EncodedEvents(capacity=2), CountingEncoder()
    definition = object()
    events.line(definition, event("ADDED", rv="1"), encode)
    events.line(definition, event("ADDED", rv="2"), encode)
    events.line(definition, event("ADDED", rv="1"), encode)  # kept; now the most recent
    events.line(definition, event("ADDED", rv="3"), encode)  # drops rv 2
    assert encode.calls == 3
    events.line(definition, event("ADDED", rv="1"), encode)
    assert encode.calls == 3
    events.line(definition, event("ADDED", rv="2"), encode)
    assert encode.calls == 4
    with pytest.raises(ValueError, match="at least 1"):
        EncodedEvents(capacity=0)


@pytest.fixture
def env(request: pytest.FixtureRequest) -> KubeEnv:
    return request.getfixturevalue("kube_env")  # type: ignore[no-any-return]


@pytest.fixture
def two_watchers(env: KubeEnv) -> Iterator[list[list[dict[str, Any]]]]:
    """Two clients watching WorkloadSpreads over HTTPS; each list gathers one's events."""
    clients = [env.new_client(timeout=5) for _ in range(2)]
    watches = [
        client.watch(SPREADS, "default", timeout_seconds=30, allow_bookmarks=False) for client in clients
    ]
    seen: list[list[dict[str, Any]]] = [[], []]

    def read(index: int) -> None:
        for ev in watches[index]:
            seen[index].append(ev)

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(2)]
    for reader in readers:
        reader.start()
    try:
        yield seen
    finally:
        for watch in watches:
            watch.close()
        for reader in readers:
            reader.join(5)
        for client in clients:
            client.close()


def test_two_watchers_of_a_write_cost_one_encoding_and_see_the_same_event(
    env: KubeEnv, two_watchers: list[list[dict[str, Any]]]
) -> None:
    encoded = env.server._server.encoded_events
    before = encoded.encodings
    created = env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    current = dict(created, status={"subsetStatuses": [{"name": "a", "missingReplicas": -1, "replicas": 0}]})
    env.client.replace_status(SPREADS, "default", "ws", current)
    wait_until(lambda: all(len(seen) == 2 for seen in two_watchers), 10, "both watchers' two events")
    assert two_watchers[0] == two_watchers[1]
    assert [ev["type"] for ev in two_watchers[0]] == ["ADDED", "MODIFIED"]
    assert two_watchers[0][1]["object"]["status"]["subsetStatuses"][0]["missingReplicas"] == -1
    assert encoded.encodings - before == 2  # one per event, not one per watcher
