"""Each watch event encoded once for every watcher that receives it.

kube-apiserver's watch cache wraps the object of an event in a caching object that keeps
its serialization per format, so N watchers of a resource cost one encoding per event, not
N (three webhook replicas watching a WorkloadSpread whose status holds 800 reservations:
96 KB of JSON per write). The emulator's HTTP front end does the same here: the encoded
line of an ADDED, MODIFIED or DELETED event is kept, by what determines its bytes, for the
next watcher that sends it.

What determines the bytes: the resource definition the watcher reads through (its version,
the schema's defaults applied on read: `ApiServer.present`), the event type (one write can
be MODIFIED to one watcher and DELETED to another whose selector it left), and the stored
object, which never changes once stored, named by its uid and resourceVersion. Bookmarks,
errors and Table renderings are encoded per watcher, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["EncodedEvents"]

_CACHED_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})


class EncodedEvents:
    """A bounded, thread-safe map from an event to its encoded line (least recently used
    first out). `encodings` counts the encodings done, for tests and the benchmark."""

    def __init__(self, capacity: int = 64) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.encodings = 0
        self._lines: OrderedDict[tuple[int, str, str, str], tuple[object, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def line(self, definition: object, event: Mapping[str, Any], encode: Callable[[Any], bytes]) -> bytes:
        """`encode(event)` for this event through `definition`, encoded at most once while kept."""
        key = self._key(definition, event)
        if key is None:
            return self._encode(encode, event)
        with self._lock:
            kept = self._lines.get(key)
            if kept is not None and kept[0] is definition:
                self._lines.move_to_end(key)
                return kept[1]
        encoded = self._encode(encode, event)
        with self._lock:
            self._lines[key] = (definition, encoded)  # the definition held: its id is not reused
            self._lines.move_to_end(key)
            while len(self._lines) > self.capacity:
                self._lines.popitem(last=False)
        return encoded

    def _encode(self, encode: Callable[[Any], bytes], event: Mapping[str, Any]) -> bytes:
        with self._lock:
            self.encodings += 1
        return encode(event)

    @staticmethod
    def _key(definition: object, event: Mapping[str, Any]) -> tuple[int, str, str, str] | None:
        kind = event.get("type")
        obj = event.get("object")
        if kind not in _CACHED_TYPES or not isinstance(obj, dict):
            return None
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not meta.get("uid") or not meta.get("resourceVersion"):
            return None
        return (id(definition), str(kind), str(meta["uid"]), str(meta["resourceVersion"]))
