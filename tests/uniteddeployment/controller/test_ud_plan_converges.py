"""Property: once the planned objects exist as planned, the next sync writes nothing.

For any UnitedDeployment the allocator accepts (any template kind, fixed, percentage or
capacity subsets, patches, partitions): apply the first plan's creations, let every workload
report its replicas ready, plan again, and nothing is created, updated or deleted, and the
per-subset targets are unchanged.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ud_testkit import ud_object, workload_template

from py_engine.uniteddeployment.controller.plan import plan
from py_engine.uniteddeployment.controller.state import state_from_objects

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
KINDS = ["deploymentTemplate", "statefulSetTemplate", "advancedStatefulSetTemplate", "cloneSetTemplate"]
VALUE = st.integers(0, 6) | st.sampled_from(["10%", "50%"])
PATCH = (
    st.none()
    | st.just({"metadata": {"labels": {"tier": "x"}}})
    | st.just({"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}})
)


@st.composite
def subsets(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    mode = draw(st.sampled_from(["fixed", "capacity"]))
    out: list[dict[str, Any]] = []
    for i in range(count):
        item: dict[str, Any] = {"name": f"s{i}"}
        if mode == "fixed" and draw(st.booleans()):
            item["replicas"] = draw(VALUE)
        if mode == "capacity":
            if draw(st.booleans()):
                item["minReplicas"] = draw(st.integers(0, 3))
            if draw(st.booleans()) and i < count - 1:
                item["maxReplicas"] = draw(st.integers(3, 6))
        patch = draw(PATCH)
        if patch is not None:
            item["patch"] = patch
        out.append(item)
    return out


@settings(max_examples=60, deadline=None)
@given(
    replicas=st.integers(0, 12),
    topology=subsets(),
    kind=st.sampled_from(KINDS),
    partitions=st.dictionaries(st.sampled_from(["s0", "s1"]), st.integers(-1, 4)),
)
def test_second_sync_writes_nothing(
    replicas: int, topology: list[dict[str, Any]], kind: str, partitions: dict[str, int]
) -> None:
    names = {s["name"] for s in topology}
    update = {
        "type": "Manual",
        "manualUpdate": {"partitions": {k: v for k, v in partitions.items() if k in names}},
    }
    obj = ud_object(replicas, topology, template=workload_template(kind), update=update)
    first = plan(state_from_objects([obj]), NOW)
    if first.refused:
        return
    objects: list[dict[str, Any]] = [{**obj, "status": first.status}]
    for i, created in enumerate(first.create):
        created = copy.deepcopy(created)
        if created["kind"] != "ControllerRevision":
            created["metadata"]["name"] = f"{created['metadata'].pop('generateName')}x{i}"
            size = created["spec"]["replicas"]
            created["status"] = {"replicas": size, "readyReplicas": size}
        objects.append(created)
    second = plan(state_from_objects(objects), NOW)
    assert (second.create, second.update, second.delete, second.errors) == ((), (), (), ())
    assert second.subsets == first.subsets
