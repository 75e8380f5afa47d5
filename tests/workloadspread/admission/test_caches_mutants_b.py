"""The parsed-spread cache (py_engine/workloadspread/admission/caches.py), field by field: which
objects are cached at all, which metadata fields a hit must agree on, and what the counters read.

The rule comes from the module's docstring: a spread is cached by (uid, resourceVersion), both
non-empty strings; an entry is reused only when apiVersion, kind, name, namespace, uid, generation
(with their types), the annotations and the spec are those it was parsed from.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import pytest
from admission_builders import pod, spread, subset, versioned

from py_engine.model import ModelError, WorkloadSpread
from py_engine.placement.eligibility import EligibilityCache
from py_engine.policy import PolicyEngine, create_engine
from py_engine.workloadspread.admission.caches import DEFAULT_SPREAD_VIEWS, AdmissionCaches, SpreadViews
from py_engine.workloadspread.admission.choose import Eligibility, eligibility
from py_engine.workloadspread.admission.context import AdmissionContext, no_lookup

pytestmark = pytest.mark.timeout(30)


def _stored() -> dict[str, Any]:
    obj = spread([subset("a", 2), subset("b")], namespace="team-a")
    obj["metadata"].update(generation=3, annotations={"x": "1"})
    return obj


def _same_view(a: WorkloadSpread, b: WorkloadSpread) -> bool:
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(WorkloadSpread))


def test_a_fresh_cache_counts_nothing_and_holds_the_default_bound() -> None:
    views = SpreadViews()
    assert (views.hits, views.misses, len(views), views.maxsize) == (0, 0, 0, DEFAULT_SPREAD_VIEWS)
    assert DEFAULT_SPREAD_VIEWS == 256
    one = SpreadViews(maxsize=1)
    one.view(_stored())
    one.view(_stored())
    assert (one.hits, one.misses, len(one)) == (1, 1, 1)
    with pytest.raises(ValueError) as info:
        SpreadViews(maxsize=0)
    assert str(info.value) == "SpreadViews maxsize must be at least 1"


@pytest.mark.parametrize(
    ("uid", "resource_version"),
    [("", "7"), ("uid-ws", ""), ("uid-ws", 7), (None, "7"), ("uid-ws", None)],
)
def test_only_a_non_empty_string_uid_and_resource_version_make_a_key(uid: Any, resource_version: Any) -> None:
    views = SpreadViews()
    obj = _stored()
    obj["metadata"].update(uid=uid, resourceVersion=resource_version)
    if uid is None:
        del obj["metadata"]["uid"]
    if resource_version is None:
        del obj["metadata"]["resourceVersion"]
    for _ in range(2):
        views.view(obj)
    assert (views.hits, views.misses, len(views)) == (0, 0, 0)


def test_hits_and_misses_count_one_each() -> None:
    views = SpreadViews()
    obj = _stored()
    for _ in range(3):
        views.view(copy.deepcopy(obj))
    other = copy.deepcopy(obj)
    other["metadata"]["resourceVersion"] = "8"
    views.view(other)
    assert (views.hits, views.misses, len(views)) == (2, 2, 2)


def _changed(field: str) -> dict[str, Any]:
    obj = _stored()
    if field == "namespace":
        obj["metadata"]["namespace"] = "team-b"
    elif field == "name":
        obj["metadata"]["name"] = "other"
    elif field == "generation":
        obj["metadata"]["generation"] = 4
    else:
        obj["metadata"]["annotations"] = {"x": "2"}
    return obj


@pytest.mark.parametrize("field", ["namespace", "name", "generation", "annotations"])
def test_a_metadata_field_changed_under_the_same_key_is_parsed_again(field: str) -> None:
    views = SpreadViews()
    views.view(_stored())
    other = _changed(field)
    assert _same_view(views.view(other), WorkloadSpread.from_object(other))
    assert (views.hits, views.misses) == (0, 2)


@pytest.mark.parametrize(
    ("key", "value"), [("kind", "ConfigMap"), ("apiVersion", "example.com/v1"), ("apiVersion", None)]
)
def test_an_object_that_is_no_longer_a_spread_under_the_same_key_is_refused(key: str, value: Any) -> None:
    views = SpreadViews()
    views.view(_stored())
    other = _stored()
    other[key] = value
    with pytest.raises(ModelError):
        views.view(other)


def test_a_spread_without_metadata_is_parsed_every_time() -> None:
    views = SpreadViews()
    obj = _stored()
    obj["metadata"] = "not an object"
    with pytest.raises(ModelError):
        views.view(obj)
    del obj["metadata"]
    assert views.view(obj).name == ""
    assert (views.hits, views.misses, len(views)) == (0, 0, 0)


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


def test_the_runtimes_caches_keep_the_subset_policy_input(engine: PolicyEngine) -> None:
    """Two decisions on the same spread object through `AdmissionCaches`: the spread's part of the
    policy input (kept only next to a decision cache) is built once and reused; the decision is
    the one made without caches (b is Schedulable=False)."""
    caches = AdmissionCaches()
    assert (caches.spreads.maxsize, caches.subset_inputs.hits, caches.subset_inputs.misses) == (256, 0, 0)
    assert AdmissionCaches(spread_views=3).spreads.maxsize == 3
    obj = spread(
        [subset("a", 2), subset("b", 2)],
        status=versioned(
            "abc123",
            {"name": "a", "missingReplicas": 2},
            {"name": "b", "missingReplicas": 2, "conditions": [{"type": "Schedulable", "status": "False"}]},
        ),
    )
    view = caches.spreads.view(obj)
    statuses = obj["status"]["versionedSubsetStatuses"]["abc123"]
    now = datetime(2026, 1, 1, tzinfo=UTC)
    cached = AdmissionContext(
        now=now, lookup=no_lookup, engine=engine, caches=caches, decision_cache=EligibilityCache(8)
    )
    plain = AdmissionContext(now=now, lookup=no_lookup, engine=engine)
    decisions = [eligibility(pod(), view, statuses, ctx) for ctx in (cached, cached, plain)]
    assert [d.names for d in decisions] == [frozenset({"a"})] * 3
    assert decisions[0] == decisions[2] and isinstance(decisions[0], Eligibility)
    assert set(decisions[0].rejected) == {"b"}
    assert (caches.subset_inputs.misses, caches.subset_inputs.hits) == (1, 1)


def test_annotations_removed_under_the_same_key_are_parsed_again() -> None:
    views = SpreadViews()
    assert views.view(_stored()).annotations == {"x": "1"}
    bare = _stored()
    del bare["metadata"]["annotations"]
    assert views.view(bare).annotations == {}
    assert (views.hits, views.misses) == (0, 2)


def test_a_spec_removed_under_the_same_key_is_refused() -> None:
    views = SpreadViews()
    views.view(_stored())
    specless = _stored()
    del specless["spec"]
    with pytest.raises(ModelError):
        views.view(specless)
    assert (views.hits, views.misses) == (0, 1)
