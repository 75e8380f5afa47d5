"""Sorting a snapshot into a UnitedDeployment's state, and its refusals, asserted literally
(mutation run U1 found the node list, the name filter and the messages unpinned).

Rule (the module's docstring, docs/uniteddeployment.md): the UnitedDeployment named (or the only
one), workloads of the four subset kinds, pods, ControllerRevisions and nodes; anything else is
ignored; no or several UnitedDeployments is a one-line error naming them.
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.uniteddeployment.controller.state import StateError, state_from_objects

pytestmark = pytest.mark.timeout(30)


def _obj(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}}


WEB = ud_object(2, [{"name": "a"}], name="web")
API = ud_object(2, [{"name": "a"}], name="api")
DEPLOYMENT = _obj("apps/v1", "Deployment", "web-a")
STATEFULSET = _obj("apps/v1", "StatefulSet", "web-b")
POD = _obj("v1", "Pod", "web-a-1")
REVISION = _obj("apps/v1", "ControllerRevision", "web-5d8f")
NODE = _obj("v1", "Node", "node-1")
CONFIGMAP = _obj("v1", "ConfigMap", "settings")
SNAPSHOT = [API, NODE, DEPLOYMENT, "not an object", POD, CONFIGMAP, WEB, REVISION, STATEFULSET]


def test_the_named_unitedeployment_and_its_objects_by_kind() -> None:
    state = state_from_objects(SNAPSHOT, "web")
    assert state.ud.name == "web"
    assert state.workloads == (DEPLOYMENT, STATEFULSET)
    assert state.pods == (POD,)
    assert state.revisions == (REVISION,)
    assert state.nodes == (NODE,)
    assert state_from_objects(SNAPSHOT, "api").ud.name == "api"
    assert state_from_objects([NODE, WEB]).ud.name == "web"


def test_no_or_several_unitedeployments_are_refused_by_name() -> None:
    with pytest.raises(StateError) as none:
        state_from_objects([NODE, POD])
    assert str(none.value) == "no UnitedDeployment in the state"
    with pytest.raises(StateError) as unnamed:
        state_from_objects(SNAPSHOT, "db")
    assert str(unnamed.value) == "no UnitedDeployment named 'db' in the state"
    with pytest.raises(StateError) as several:
        state_from_objects(SNAPSHOT)
    assert str(several.value) == "several UnitedDeployments in the state (api, web); choose one with --name"
