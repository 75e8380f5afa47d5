"""Structural-schema validation and defaulting of custom objects over HTTPS, through the official
`kubernetes` client: the 422 `Status` (message, `details.causes[].field`) a client sees on create,
patch, status and scale, and the defaults it reads back."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from benchmarks.kube_objects import custom_resource_definition, scale_subresource
from py_engine.sim.apiserver import ApiServer

pytestmark = pytest.mark.timeout(60)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["selector"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
                "selector": {"type": "string"},
                "mode": {"type": "string", "enum": ["Fixed", "Adaptive"], "default": "Fixed"},
                "tags": {
                    "type": "array",
                    "maxItems": 2,
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}
CRD = custom_resource_definition(
    "example.com", "Gadget", schema=SCHEMA, subresources={"status": {}, "scale": scale_subresource()}
)
ARGS = ("example.com", "v1", "default", "gadgets")


@pytest.fixture
def gadgets(apiserver: ApiServer, custom_objects: kubernetes.client.CustomObjectsApi) -> Any:
    apiserver.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
    return custom_objects


def refusal(call: Any) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        call()
    assert info.value.status == 422
    body: dict[str, Any] = json.loads(info.value.body)
    assert body["reason"] == "Invalid"
    return body


def test_create_refused_with_field_paths_and_defaults_read_back(gadgets: Any) -> None:
    body = refusal(
        lambda: gadgets.create_namespaced_custom_object(
            *ARGS,
            {
                "apiVersion": "example.com/v1",
                "kind": "Gadget",
                "metadata": {"name": "g"},
                "spec": {"replicas": "3", "tags": ["a", "b", "a"]},
            },
        )
    )
    assert body["message"] == (
        'Gadget.example.com "g" is invalid: [spec.selector: Required value, '
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", '
        "spec.tags: Too many: 3: must have at most 2 items, "
        'spec.tags[2]: Duplicate value: "a"]'
    )
    assert [c["field"] for c in body["details"]["causes"]] == [
        "spec.selector",
        "spec.replicas",
        "spec.tags",
        "spec.tags[2]",
    ]
    created = gadgets.create_namespaced_custom_object(
        *ARGS,
        {
            "apiVersion": "example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "g"},
            "spec": {"replicas": 1, "selector": "app=g", "stray": 1},
        },
    )
    assert created["spec"] == {"replicas": 1, "selector": "app=g", "mode": "Fixed"}


def test_patch_status_and_scale_refused(gadgets: Any) -> None:
    gadgets.create_namespaced_custom_object(
        *ARGS,
        {
            "apiVersion": "example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "g"},
            "spec": {"replicas": 1, "selector": "app=g"},
        },
    )
    body = refusal(lambda: gadgets.patch_namespaced_custom_object(*ARGS, "g", {"spec": {"mode": "Random"}}))
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "field": "spec.mode",
            "message": 'Unsupported value: "Random": supported values: "Fixed", "Adaptive"',
        }
    ]
    body = refusal(
        lambda: gadgets.patch_namespaced_custom_object_status(*ARGS, "g", {"status": {"replicas": 1.5}})
    )
    assert body["details"]["causes"][0]["field"] == "status.replicas"
    body = refusal(
        lambda: gadgets.patch_namespaced_custom_object_scale(*ARGS, "g", {"spec": {"replicas": 12}})
    )
    assert body["message"] == (
        'Gadget.example.com "g" is invalid: spec.replicas: Invalid value: 12: '
        "spec.replicas in body should be less than or equal to 10"
    )
    scaled = gadgets.patch_namespaced_custom_object_scale(*ARGS, "g", {"spec": {"replicas": 4}})
    assert scaled["spec"]["replicas"] == 4
    assert gadgets.get_namespaced_custom_object(*ARGS, "g")["spec"] == {
        "replicas": 4,
        "selector": "app=g",
        "mode": "Fixed",
    }
