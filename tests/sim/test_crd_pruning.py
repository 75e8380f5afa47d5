"""Unknown fields of custom resources are pruned against the CRD's structural schema, as
kube-apiserver prunes them: on create, update, patch and status writes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.kube_objects import custom_resource_definition
from py_engine.semantics.clock import VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.pruning import MAX_DEPTH, prune_custom_object

pytestmark = pytest.mark.timeout(30)

INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
# A v1beta1-CloneSet-like schema: the update knobs live under rollingUpdate.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "updateStrategy": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string"},
                        "rollingUpdate": {"type": "object", "properties": {"partition": INT_OR_STRING}},
                    },
                },
                "selector": {
                    "type": "object",
                    "properties": {
                        "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}
                    },
                },
                "claims": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object"}},
                },
            },
        },
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
    },
}
CRD = custom_resource_definition("example.com", "Widget", schema=SCHEMA)
WIDGETS = "example.com/v1/widgets"


def pruned(obj: dict[str, Any], schema: dict[str, Any] | None = SCHEMA) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    prune_custom_object(out, schema)
    return out


def test_undeclared_fields_go_declared_ones_stay() -> None:
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "anything": 1},
        "spec": {
            "replicas": 2,
            "updateStrategy": {"partition": 1, "rollingUpdate": {"partition": 1, "x": 2}},
        },
        "extra": True,
    }
    assert pruned(obj) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "anything": 1},
        "spec": {"replicas": 2, "updateStrategy": {"rollingUpdate": {"partition": 1}}},
    }


def test_preserved_maps_lists_and_embedded_resources() -> None:
    obj = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "whatever": {"deep": 1}}]}},
            "selector": {"matchLabels": {"a": "1", "b": "2"}},
            "claims": [{"name": "x", "size": 3}, {"name": "y"}],
            "embedded": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"x": 1},
                "junk": 1,
            },
        }
    }
    assert pruned(obj)["spec"] == {
        "template": {"spec": {"containers": [{"name": "c", "whatever": {"deep": 1}}]}},
        "selector": {"matchLabels": {"a": "1", "b": "2"}},
        "claims": [{"name": "x"}, {"name": "y"}],
        "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
    }


def test_no_schema_or_a_preserving_root_prunes_nothing() -> None:
    obj = {"spec": {"anything": {"at": ["all"]}}}
    assert pruned(obj, None) == obj
    assert pruned(obj, {"type": "object", "x-kubernetes-preserve-unknown-fields": True}) == obj


def test_depth_is_bounded() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_DEPTH + 10):
        node["a"] = {}
        node = node["a"]
    schema: dict[str, Any] = {"type": "object"}
    cursor = schema
    for _ in range(MAX_DEPTH + 10):
        cursor["properties"] = {"a": {"type": "object"}}
        cursor = cursor["properties"]["a"]
    prune_custom_object(
        {"spec": deep}, {"type": "object", "properties": {"spec": schema}}
    )  # no RecursionError


@pytest.fixture
def vapi() -> Any:
    api = ApiServer(VirtualClock(datetime(2030, 1, 2, tzinfo=UTC)), history_size=50)
    api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
    yield api
    api.close()


def test_every_write_is_pruned(vapi: ApiServer) -> None:
    created = vapi.create(
        WIDGETS,
        "default",
        {"metadata": {"name": "w"}, "spec": {"replicas": 1, "updateStrategy": {"partition": 3}}},
    )
    assert created["spec"] == {"replicas": 1, "updateStrategy": {}}
    created["spec"]["updateStrategy"] = {"partition": 2, "rollingUpdate": {"partition": 2}}
    updated = vapi.update(WIDGETS, "default", "w", created)
    assert updated["spec"]["updateStrategy"] == {"rollingUpdate": {"partition": 2}}
    patched = vapi.patch(WIDGETS, "default", "w", {"spec": {"unknown": 1, "replicas": 4}}, "merge")
    assert patched["spec"] == {"replicas": 4, "updateStrategy": {"rollingUpdate": {"partition": 2}}}
    status = vapi.patch(
        WIDGETS, "default", "w", {"status": {"replicas": 4, "marker": "x"}}, "merge", subresource="status"
    )
    assert status["status"] == {"replicas": 4}
    assert vapi.get(WIDGETS, "default", "w")["spec"]["replicas"] == 4
