"""apps/v1 ControllerRevisions in the emulator: created, listed by label, renumbered; `data` is
immutable and `revision` non-negative, as kube-apiserver validates them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.semantics.clock import VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.interface import ApiError

pytestmark = pytest.mark.timeout(30)
REVISIONS = "apps/v1/controllerrevisions"


def revision(name: str = "web-abc", number: Any = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "data": {"spec": {"template": {"$patch": "replace"}}},
        "revision": number,
    }


@pytest.fixture
def api() -> Any:
    server = ApiServer(VirtualClock(datetime(2026, 6, 1, tzinfo=UTC)))
    yield server
    server.close()


def test_revisions_are_stored_listed_and_renumbered(api: ApiServer) -> None:
    created = api.create(REVISIONS, "default", revision())
    assert created["revision"] == 1 and created["data"] == revision()["data"]
    assert [
        r["metadata"]["name"] for r in api.list(REVISIONS, "default", label_selector="app=web")["items"]
    ] == ["web-abc"]
    created["revision"] = 3
    assert api.update(REVISIONS, "default", "web-abc", created)["revision"] == 3


def test_data_is_immutable_and_revision_non_negative(api: ApiServer) -> None:
    created = api.create(REVISIONS, "default", revision())
    changed = {**created, "data": {"spec": {"template": {"other": 1}}}}
    with pytest.raises(ApiError) as refused:
        api.update(REVISIONS, "default", "web-abc", changed)
    assert refused.value.code == 422 and "immutable" in str(refused.value)
    with pytest.raises(ApiError) as negative:
        api.create(REVISIONS, "default", revision("web-def", -1))
    assert negative.value.code == 422
