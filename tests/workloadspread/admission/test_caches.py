"""The admission caches (py_engine/workloadspread/admission/caches.py): a hit returns what a fresh parse
returns, a new resourceVersion or a changed spec misses, and decisions do not change."""

from __future__ import annotations

import copy
import threading
from dataclasses import fields
from typing import Any

import pytest
from admission_builders import NOW_TEXT, deployment_chain, make_ctx, pod, spread, subset, versioned

from py_engine.model import ModelError, WorkloadSpread
from py_engine.workloadspread.admission.caches import AdmissionCaches, SpreadViews
from py_engine.workloadspread.admission.context import AdmissionError
from py_engine.workloadspread.admission.matched import without_matched_annotations
from py_engine.workloadspread.admission.reserve import reserve_create
from py_engine.workloadspread.admission.statuses import with_version_statuses

pytestmark = pytest.mark.timeout(60)


def same_view(a: WorkloadSpread, b: WorkloadSpread) -> bool:
    """Every field equal, `raw` included (the dataclass leaves `raw` out of ==)."""
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(WorkloadSpread))


def stored(rv: str = "7", **spec_extra: Any) -> dict[str, Any]:
    obj = spread([subset("a", 2), subset("b", "50%")], **spec_extra)
    obj["metadata"].update(resourceVersion=rv, generation=1, annotations={"x": "1"})
    obj["status"] = versioned("abc123", {"name": "a", "replicas": 0, "missingReplicas": 2})
    return obj


def test_a_hit_returns_what_a_fresh_parse_returns_with_the_asked_object_as_raw() -> None:
    views = SpreadViews()
    first = stored()
    assert same_view(views.view(first), WorkloadSpread.from_object(first))
    # The same version with another status (what every reservation of a batch hands over).
    second = with_version_statuses(first, "abc123", [{"name": "a", "replicas": 0, "missingReplicas": 1}])
    hit = views.view(second)
    assert (views.hits, views.misses) == (1, 1)
    assert same_view(hit, WorkloadSpread.from_object(second))
    assert hit.raw == second and hit.raw is not second  # a copy of the object asked about, as from_object's


def test_a_deep_copy_of_the_same_version_is_a_hit() -> None:
    views = SpreadViews()
    views.view(stored())
    again = copy.deepcopy(stored())
    assert same_view(views.view(again), WorkloadSpread.from_object(again))
    assert views.hits == 1


def test_a_new_resource_version_misses() -> None:
    views = SpreadViews()
    views.view(stored("7"))
    newer = stored("8", targetFilter={"selector": {"matchLabels": {"app": "web"}}})
    assert same_view(views.view(newer), WorkloadSpread.from_object(newer))
    assert (views.hits, views.misses) == (0, 2)


@pytest.mark.parametrize("change", ["spec", "generation", "annotations", "name", "bool-for-int"])
def test_the_same_key_with_other_content_is_parsed_again(change: str) -> None:
    """Hand-built spreads share uid and resourceVersion (tests, snapshots): never a stale view."""
    views = SpreadViews()
    views.view(stored())
    other = stored()
    if change == "spec":
        other["spec"]["subsets"][0]["maxReplicas"] = 3
    elif change == "generation":
        other["metadata"]["generation"] = 2
    elif change == "annotations":
        other["metadata"]["annotations"] = {"x": "2"}
    elif change == "name":
        other["metadata"]["name"] = "other"
    else:  # Python's == takes True for 1: the parse must still see the bool and refuse it
        other["spec"]["subsets"][0]["maxReplicas"] = 1
        views.view(other)
        other = copy.deepcopy(other)
        other["spec"]["subsets"][0]["maxReplicas"] = True
        with pytest.raises(ModelError):
            views.view(other)
        return
    assert same_view(views.view(other), WorkloadSpread.from_object(other))
    assert views.hits == 0


def test_a_spec_changed_in_place_is_not_served_from_the_cache() -> None:
    views = SpreadViews()
    obj = stored()
    views.view(obj)
    obj["spec"] = copy.deepcopy(obj["spec"])
    obj["spec"]["subsets"].append({"name": "c"})
    assert [s.name for s in views.view(obj).subsets] == ["a", "b", "c"]


def test_malformed_spreads_are_refused_every_time_and_not_cached() -> None:
    views = SpreadViews()
    bad = stored()
    bad["spec"]["subsets"] = []
    for _ in range(2):
        with pytest.raises(ModelError):
            views.view(bad)
    assert len(views) == 0


def test_spreads_without_uid_or_resource_version_are_not_cached() -> None:
    views = SpreadViews()
    obj = stored()
    del obj["metadata"]["resourceVersion"]
    views.view(obj)
    views.view(obj)
    assert len(views) == 0 and views.hits == 0


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    views = SpreadViews(maxsize=2)
    for rv in ("1", "2", "1", "3"):
        views.view(stored(rv))
    assert len(views) == 2
    views.view(stored("1"))  # kept: used after "2"
    assert views.hits == 2
    views.view(stored("2"))  # evicted
    assert views.misses == 4
    with pytest.raises(ValueError):
        SpreadViews(maxsize=0)


def test_concurrent_readers_agree_with_a_fresh_parse() -> None:
    views = SpreadViews(maxsize=3)
    objects = [stored(str(rv)) for rv in range(6)]
    expected = [WorkloadSpread.from_object(o) for o in objects]
    failures: list[str] = []

    def read(offset: int) -> None:
        for i in range(300):
            index = (i + offset) % len(objects)
            if not same_view(views.view(objects[index]), expected[index]):
                failures.append(f"object {index}")

    threads = [threading.Thread(target=read, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not failures and not any(t.is_alive() for t in threads)
    assert len(views) <= 3


def reservations(obj: dict[str, Any], caches: AdmissionCaches | None, count: int) -> list[Any]:
    """`count` reservations in a row, each on the spread the previous one wrote (one batch)."""
    ctx = make_ctx(deployment_chain(replicas=4), caches=caches)
    out = []
    current = obj
    for i in range(count):
        result = reserve_create(current, pod(name=f"web-abc123-{i}"), ctx, generated_uid=f"uid-{i}")
        out.append((result.subset, result.uid, result.warnings, result.spread))
        current = result.spread or current
    return out


def test_reservations_decide_the_same_with_and_without_the_caches() -> None:
    caches = AdmissionCaches()
    obj = stored()
    assert reservations(obj, caches, 6) == reservations(obj, None, 6)
    assert caches.spreads.hits >= 5
    # A spread the caches saw before, with another cap under the same uid and resourceVersion.
    lowered = stored()
    lowered["spec"]["subsets"][0]["maxReplicas"] = 0
    assert reservations(lowered, caches, 3) == reservations(lowered, None, 3)


def test_an_unreadable_spread_is_denied_with_the_caches_too() -> None:
    obj = stored()
    obj["spec"]["subsets"] = [{"name": "a"}, {"name": "a"}]
    with pytest.raises(AdmissionError):
        reserve_create(obj, pod(), make_ctx(caches=AdmissionCaches()), generated_uid="u")


def test_status_copies_share_metadata_members_without_mutating_the_input() -> None:
    obj = stored()
    before = copy.deepcopy(obj)
    updated = with_version_statuses(obj, "abc123", [{"name": "a", "creatingPods": {"p": NOW_TEXT}}])
    updated["metadata"]["resourceVersion"] = "99"
    assert obj == before
    assert updated["metadata"] is not obj["metadata"]
    assert updated["metadata"]["annotations"] is obj["metadata"]["annotations"]


def test_removing_matched_annotations_copies_only_the_path_to_them() -> None:
    original = pod(annotations={"spreadgate.dev/matched-workloadspread": "{}", "keep": "me"})
    before = copy.deepcopy(original)
    stripped = without_matched_annotations(original)
    assert stripped is not None
    assert original == before
    assert stripped["metadata"]["annotations"] == {"keep": "me"}
    assert stripped["spec"] is original["spec"]
