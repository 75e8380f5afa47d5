"""Per-runtime caches of what every admission of a burst would otherwise re-derive.

Each replica of a workload is admitted against the same stored WorkloadSpread, so
parsing the spread into its typed view (`WorkloadSpread.from_object`) gives the same
answer pod after pod. `SpreadViews` remembers the parsed view per spread, keyed by
(uid, resourceVersion), and hands out a view whose `raw` is the object asked about
(the status changes with every reservation; the view's other fields come from the
metadata and the spec only).

A hit never changes a decision: besides the key, an entry is only reused when the
spec it was parsed from is the very object asked about, or the same JSON text, and the
metadata fields the view reads are equal with their types. A spread without uid or
resourceVersion (an offline snapshot) is parsed every time. Malformed spreads are not
cached (the `ModelError` is raised again on the next read).

`AdmissionCaches` is the object the admission service owns and hands to every
decision through `AdmissionContext.caches`; nothing here is process-global, and
every cache is bounded (least recently used entries leave first) and thread-safe
(docs/performance.md, "Costs found, and what changed").
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model import WorkloadSpread
from py_engine.placement.eligibility import SubsetInputs
from py_engine.semantics.lru import put_recent

DEFAULT_SPREAD_VIEWS = 256


def _same(a: Any, b: Any) -> bool:
    """Equal with the same type (`1`, `1.0` and `True` are different metadata values)."""
    return type(a) is type(b) and a == b


_SPEC_TEXT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr)


def _spec_text(spec: Any) -> str:
    return _SPEC_TEXT.encode(spec)


def _with_raw(view: WorkloadSpread, raw: dict[str, Any]) -> WorkloadSpread:
    """`dataclasses.replace(view, raw=raw)` without re-running `__init__` over every field: the
    view is a frozen dataclass whose one derived field (`uses_percentages`, from `__post_init__`)
    depends on the spec alone, which the clone shares, and a hit is taken once per reservation."""
    clone = object.__new__(WorkloadSpread)
    clone.__dict__.update(view.__dict__)
    clone.__dict__["raw"] = raw
    return clone


@dataclass(frozen=True)
class _Entry:
    view: WorkloadSpread
    spec: Any
    spec_text: str
    metadata: tuple[Any, ...]
    annotations: Any
    annotations_text: str


def _metadata_fields(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], tuple[Any, ...]]:
    metadata = obj.get("metadata")
    meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else {}
    fields = (
        obj.get("apiVersion"),
        obj.get("kind"),
        meta.get("name"),
        meta.get("namespace"),
        meta.get("uid"),
        meta.get("generation"),
    )
    return meta, fields


class SpreadViews:
    """Parsed WorkloadSpread views by (uid, resourceVersion); see the module docstring.

    `hits` and `misses` count cacheable reads (for tests and metrics).
    """

    def __init__(self, maxsize: int = DEFAULT_SPREAD_VIEWS) -> None:
        if maxsize < 1:
            raise ValueError("SpreadViews maxsize must be at least 1")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def view(self, obj: Mapping[str, Any]) -> WorkloadSpread:
        """`WorkloadSpread.from_object(obj)`, from the cache when `obj` is a version already parsed.
        Raises `ModelError` as `from_object` does."""
        meta, fields = _metadata_fields(obj)
        uid, rv = meta.get("uid"), meta.get("resourceVersion")
        if not (isinstance(uid, str) and uid and isinstance(rv, str) and rv):
            return WorkloadSpread.from_object(obj)
        key = (uid, rv)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        spec = obj.get("spec")
        annotations = meta.get("annotations")
        if entry is not None and self._matches(entry, spec, fields, annotations):
            with self._lock:
                self.hits += 1
            return _with_raw(entry.view, dict(obj))
        view = WorkloadSpread.from_object(obj)
        fresh = _Entry(view, spec, _spec_text(spec), fields, annotations, _spec_text(annotations))
        with self._lock:
            self.misses += 1
            put_recent(self._entries, key, fresh, self.maxsize)
        return view

    @staticmethod
    def _matches(entry: _Entry, spec: Any, fields: tuple[Any, ...], annotations: Any) -> bool:
        if len(fields) != len(entry.metadata) or not all(map(_same, fields, entry.metadata)):
            return False
        if annotations is not entry.annotations and _spec_text(annotations) != entry.annotations_text:
            return False
        return spec is entry.spec or _spec_text(spec) == entry.spec_text


class AdmissionCaches:
    """The caches one admission runtime owns (one per `AdmissionService`)."""

    def __init__(self, *, spread_views: int = DEFAULT_SPREAD_VIEWS) -> None:
        self.spreads = SpreadViews(spread_views)
        self.subset_inputs = SubsetInputs()
        """The spread's part of the subset policy input
        (`py_engine.workloadspread.admission.eligibility.decide_subsets`)."""
