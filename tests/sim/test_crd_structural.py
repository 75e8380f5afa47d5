"""Custom objects are validated against the CRD's structural schema and defaulted from it, as
kube-apiserver does: each rule with the cause kube-apiserver gives (reason, field path, message).
The pure functions first, then the embedded API server's writes (create, update, patch, status,
scale) in process; `test_crd_structural_http.py` goes over HTTPS with the official client."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.kube_objects import custom_resource_definition, scale_subresource
from py_engine.semantics.clock import VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.defaulting import default_custom_object, needs_defaults
from py_engine.sim.interface import ApiError
from py_engine.sim.pruning import MAX_DEPTH
from py_engine.sim.structural import MAX_CAUSES, go_number, validate_custom_object, validate_value

pytestmark = pytest.mark.timeout(30)


def obj_schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def causes(value: Any, schema: dict[str, Any], path: str = "spec.x") -> list[tuple[str, str, str]]:
    return validate_value(value, schema, path)


# ----------------------------------------------------------------------- types


def test_type_integer_takes_json_integers_only() -> None:
    assert causes(3, {"type": "integer"}, "spec.replicas") == []
    assert causes(3.0, {"type": "integer"}, "spec.replicas") == []  # Go's decoder reads 3.0 as an integer
    assert causes("3", {"type": "integer"}, "spec.replicas") == [
        (
            "spec.replicas",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        )
    ]
    assert (
        causes(3.5, {"type": "integer"}, "spec.replicas")[0][2]
        == 'Invalid value: "number": spec.replicas in body must be of type integer: "number"'
    )
    assert (
        causes(True, {"type": "integer"}, "spec.replicas")[0][2]
        == 'Invalid value: "boolean": spec.replicas in body must be of type integer: "boolean"'
    )


def test_type_number_string_boolean_object_array() -> None:
    assert causes(1, {"type": "number"}) == [] and causes(1.5, {"type": "number"}) == []
    assert causes(False, {"type": "number"})[0][2].endswith('must be of type number: "boolean"')
    assert (
        causes(7, {"type": "string"})[0][2]
        == 'Invalid value: "integer": spec.x in body must be of type string: "integer"'
    )
    assert causes("true", {"type": "boolean"})[0][2].endswith('must be of type boolean: "string"')
    assert causes([], {"type": "object"})[0][2].endswith('must be of type object: "array"')
    assert causes({}, {"type": "array"})[0][2].endswith('must be of type array: "object"')


def test_nullable() -> None:
    assert causes(None, {"type": "string", "nullable": True}) == []
    assert causes([None], {"type": "array", "items": {"type": "string"}}, "spec.tags") == [
        (
            "spec.tags[0]",
            "FieldValueTypeInvalid",
            'Invalid value: "null": spec.tags[0] in body must be of type string: "null"',
        )
    ]


def test_int_or_string() -> None:
    schema = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert causes(3, schema) == [] and causes("30%", schema) == []
    assert causes(True, schema, "spec.maxUnavailable") == [
        (
            "spec.maxUnavailable",
            "FieldValueTypeInvalid",
            'Invalid value: "boolean": spec.maxUnavailable in body must be of type integer,string: "boolean"',
        )
    ]
    assert causes({"a": 1}, {"x-kubernetes-int-or-string": True})[0][2].endswith(
        'must be of type integer,string: "object"'
    )


# ------------------------------------------------------------- value rules


def test_enum() -> None:
    assert causes("a", {"type": "string", "enum": ["a", "b"]}) == []
    assert causes("foo", {"type": "string", "enum": ["a", "b"]}) == [
        ("spec.x", "FieldValueNotSupported", 'Unsupported value: "foo": supported values: "a", "b"')
    ]
    assert (
        causes(3, {"type": "integer", "enum": [1, 2]})[0][2]
        == 'Unsupported value: 3: supported values: "1", "2"'
    )
    assert causes(1, {"enum": [True]}) != []  # JSON true is not 1


def test_required() -> None:
    schema = {"type": "object", "required": ["name", "image"], "properties": {"name": {"type": "string"}}}
    assert causes({"name": "a", "image": "b"}, schema, "spec") == []
    assert causes({"image": "b"}, schema, "spec") == [("spec.name", "FieldValueRequired", "Required value")]
    assert [c[0] for c in causes({}, schema, "spec")] == ["spec.name", "spec.image"]


def test_minimum_maximum_and_exclusive() -> None:
    assert causes(-1, {"type": "integer", "minimum": 0}, "spec.replicas") == [
        (
            "spec.replicas",
            "FieldValueInvalid",
            "Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        )
    ]
    assert (
        causes(0, {"type": "integer", "minimum": 0, "exclusiveMinimum": True})[0][2]
        == "Invalid value: 0: spec.x in body should be greater than 0"
    )
    assert (
        causes(101, {"type": "integer", "maximum": 100})[0][2]
        == "Invalid value: 101: spec.x in body should be less than or equal to 100"
    )
    assert (
        causes(100, {"type": "integer", "maximum": 100, "exclusiveMaximum": True})[0][2]
        == "Invalid value: 100: spec.x in body should be less than 100"
    )
    assert (
        causes(1.5, {"type": "number", "maximum": 1.25})[0][2]
        == "Invalid value: 1.5: spec.x in body should be less than or equal to 1.25"
    )
    assert (
        causes(7, {"type": "integer", "multipleOf": 5})[0][2]
        == "Invalid value: 7: spec.x in body should be a multiple of 5"
    )
    assert causes(100, {"type": "integer", "minimum": 0, "maximum": 100}) == []


def test_string_length_and_pattern() -> None:
    assert causes("", {"type": "string", "minLength": 1}, "spec.subsets[1].name") == [
        (
            "spec.subsets[1].name",
            "FieldValueInvalid",
            'Invalid value: "": spec.subsets[1].name in body should be at least 1 chars long',
        )
    ]
    assert causes("abcdef", {"type": "string", "maxLength": 5}) == [
        ("spec.x", "FieldValueTooLong", "Too long: may not be longer than 5")
    ]
    assert causes("ééééé", {"type": "string", "maxLength": 5}) == []  # characters, not bytes
    assert causes("Web", {"type": "string", "pattern": "^[a-z]+$"}) == [
        ("spec.x", "FieldValueInvalid", "Invalid value: \"Web\": spec.x in body should match '^[a-z]+$'")
    ]
    assert causes("x web y", {"type": "string", "pattern": "web"}) == []  # unanchored, as Go matches
    assert causes("٣", {"type": "string", "pattern": r"^\d$"}) != []  # \d is ASCII, as in RE2


def test_patterns_run_on_re2() -> None:
    # Backtracking engines take exponential time here (Python's re would not return within the
    # test's timeout); RE2, Go's engine, is linear.
    assert causes("a" * 5000 + "!", {"type": "string", "pattern": "^(a+)+$"})[0][2].endswith(
        "should match '^(a+)+$'"
    )
    assert (
        causes("anything", {"type": "string", "pattern": "^(?=a)"}) == []
    )  # RE2 rejects lookahead: unchecked


def test_items_and_properties_counts() -> None:
    subsets = {"type": "array", "maxItems": 200, "items": {"type": "object"}}
    assert causes([{}] * 201, subsets, "spec.subsets") == [
        ("spec.subsets", "FieldValueTooMany", "Too many: 201: must have at most 200 items")
    ]
    assert causes([], {"type": "array", "minItems": 1}, "spec.subsets") == [
        (
            "spec.subsets",
            "FieldValueInvalid",
            "Invalid value: 0: spec.subsets in body should have at least 1 items",
        )
    ]
    assert causes({"a": "1", "b": "2", "c": "3"}, {"type": "object", "maxProperties": 2}) == [
        ("spec.x", "FieldValueTooMany", "Too many: 3: must have at most 2 items")
    ]
    assert (
        causes({}, {"type": "object", "minProperties": 1})[0][2]
        == "Invalid value: 0: spec.x in body should have at least 1 properties"
    )


def test_formats() -> None:
    assert causes("2030-01-02T03:04:05Z", {"type": "string", "format": "date-time"}) == []
    assert causes("yesterday", {"type": "string", "format": "date-time"}, "status.at") == [
        (
            "status.at",
            "FieldValueTypeInvalid",
            'Invalid value: "yesterday": status.at in body must be of type date-time: "yesterday"',
        )
    ]
    assert causes("not-a-uuid", {"type": "string", "format": "uuid"}) != []
    assert causes("10.0.0.0/8", {"type": "string", "format": "cidr"}) == []
    assert causes("anything", {"type": "string", "format": "int-or-whatever"}) == []  # unknown: unchecked
    assert causes(5, {"type": "integer", "format": "int32"}) == []


def test_additional_properties_schema() -> None:
    labels = {"type": "object", "additionalProperties": {"type": "string"}}
    assert causes({"a": "1"}, labels, "spec.nodeSelector") == []
    assert causes({"a": 1}, labels, "spec.nodeSelector") == [
        (
            "spec.nodeSelector.a",
            "FieldValueTypeInvalid",
            'Invalid value: "integer": spec.nodeSelector.a in body must be of type string: "integer"',
        )
    ]


def test_preserve_unknown_fields_leaves_unknown_fields_unchecked() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"replicas": {"type": "integer"}},
    }
    assert causes({"anything": {"deep": [1, "a"]}}, schema, "spec.template") == []
    assert causes({"replicas": "1"}, schema, "spec.template")[0][0] == "spec.template.replicas"


def test_list_map_keys_and_sets() -> None:
    by_name = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
    }
    assert causes([{"name": "a"}, {"name": "b"}], by_name, "spec.subsets") == []
    assert causes([{"name": "a"}, {"name": "b"}, {"name": "a", "x": 1}], by_name, "spec.subsets") == [
        ("spec.subsets[2]", "FieldValueDuplicate", 'Duplicate value: map[string]interface {}{"name":"a"}')
    ]
    two_keys = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "items": {"type": "object"},
    }
    assert causes([{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}], two_keys) == []
    assert causes([{"port": 80, "protocol": "TCP"}, {"protocol": "TCP", "port": 80}], two_keys) == [
        (
            "spec.x[1]",
            "FieldValueDuplicate",
            'Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}',
        )
    ]
    a_set = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    assert causes(["a", "b"], a_set) == []
    assert causes(["a", "b", "a"], a_set, "spec.values") == [
        ("spec.values[2]", "FieldValueDuplicate", 'Duplicate value: "a"')
    ]
    assert causes([1, 1.0], {"type": "array", "x-kubernetes-list-type": "set"}) != []
    assert causes([1, True], {"type": "array", "x-kubernetes-list-type": "set"}) == []


def test_embedded_resource_needs_api_version_and_kind() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert causes({"apiVersion": "v1", "kind": "Pod", "spec": {}}, schema, "spec.template") == []
    assert causes({"spec": {}}, schema, "spec.template") == [
        ("spec.template.apiVersion", "FieldValueRequired", "Required value: must not be empty"),
        ("spec.template.kind", "FieldValueRequired", "Required value: must not be empty"),
    ]


def test_composition() -> None:
    assert (
        causes(5, {"allOf": [{"minimum": 1}, {"maximum": 3}]})[0][2]
        == "Invalid value: 5: spec.x in body should be less than or equal to 3"
    )
    assert (
        causes("a", {"anyOf": [{"type": "integer"}, {"enum": ["b"]}]})[0][2]
        == 'Invalid value: "a": spec.x in body must validate at least one schema (anyOf)'
    )
    assert (
        causes(2, {"oneOf": [{"minimum": 1}, {"maximum": 3}]})[0][2]
        == "Invalid value: 2: spec.x in body must validate one and only one schema (oneOf)"
    )
    assert (
        causes(2, {"not": {"minimum": 1}})[0][2]
        == "Invalid value: 2: spec.x in body must not validate the schema (not)"
    )


def test_depth_and_cause_count_are_bounded() -> None:
    schema: dict[str, Any] = {"type": "object"}
    deep: dict[str, Any] = {}
    cursor, node = schema, deep
    for _ in range(MAX_DEPTH + 5):
        cursor["properties"] = {"a": {"type": "object"}}
        cursor = cursor["properties"]["a"]
        node["a"] = {}
        node = node["a"]
    found = causes(deep, schema, "spec")
    assert len(found) == 1 and found[0][1] == "FieldValueForbidden"
    assert (
        found[0][2]
        == f"Forbidden: nested more than {MAX_DEPTH} levels deep (the embedded API server's limit)"
    )
    many = causes(["x"] * (MAX_CAUSES * 3), {"type": "array", "items": {"type": "integer"}})
    assert len(many) == MAX_CAUSES


def test_numbers_print_as_go_prints_them() -> None:
    assert [go_number(v) for v in (0, 0.0, 1.5, 1e21, 100000000.0, -3)] == [
        "0",
        "0",
        "1.5",
        "1e+21",
        "100000000",
        "-3",
    ]


def test_metadata_is_not_the_schemas_business() -> None:
    schema = obj_schema(metadata={"type": "object"}, spec=obj_schema(replicas={"type": "integer"}))
    assert (
        validate_custom_object(
            {"metadata": {"name": "w", "labels": {"a": "b"}}, "spec": {"replicas": 1}}, schema
        )
        == []
    )
    assert validate_custom_object({"spec": {"replicas": 1}}, None) == []


def test_updates_are_ratcheted_as_kube_apiserver_ratchets_them() -> None:
    schema = obj_schema(
        spec=obj_schema(
            name={"type": "string", "maxLength": 3},
            ports={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": obj_schema(name={"type": "string"}, port={"type": "integer", "maximum": 100}),
            },
            args={"type": "array", "items": {"type": "string", "maxLength": 3}},
        )
    )
    old = {"spec": {"name": "toolong", "ports": [{"name": "a", "port": 500}], "args": ["toolong"]}}
    assert [c[0] for c in validate_custom_object(old, schema)] == [
        "spec.name",
        "spec.ports[0].port",
        "spec.args[0]",
    ]
    assert validate_custom_object(copy.deepcopy(old), schema, old) == []  # nothing changed: nothing checked
    # map-list items follow their key; an atomic list's items are not correlated once the list changes
    new = {
        "spec": {
            "name": "toolong",
            "ports": [{"name": "b", "port": 1}, {"name": "a", "port": 500}],
            "args": ["toolong", "x"],
        }
    }
    assert validate_custom_object(new, schema, old) == [
        ("spec.args[0]", "FieldValueTooLong", "Too long: may not be longer than 3")
    ]
    changed = {"spec": {"name": "stilltoolong", "ports": [{"name": "a", "port": 501}], "args": ["toolong"]}}
    assert [c[0] for c in validate_custom_object(changed, schema, old)] == ["spec.name", "spec.ports[0].port"]


# -------------------------------------------------------------- defaulting

DEFAULTED = obj_schema(
    spec=obj_schema(
        mode={"type": "string", "default": "Fixed"},
        strategy=obj_schema(
            type={"type": "string", "default": "RollingUpdate"},
            maxSurge={"x-kubernetes-int-or-string": True, "default": "25%"},
        ),
        policy={
            "type": "object",
            "default": {},
            "properties": {"retries": {"type": "integer", "default": 3}},
        },
        note={"type": "string", "nullable": True, "default": "n"},
        limit={"type": "integer"},
        weights={"type": "object", "additionalProperties": {"type": "integer", "default": 1}},
        steps={
            "type": "array",
            "items": {
                "type": "object",
                "default": {"pause": True},
                "properties": {"pause": {"type": "boolean"}},
            },
        },
    )
)


def defaulted(spec: dict[str, Any]) -> dict[str, Any]:
    obj = {"spec": copy.deepcopy(spec)}
    default_custom_object(obj, DEFAULTED)
    return obj["spec"]


def test_defaults_fill_missing_fields_of_present_objects_only() -> None:
    assert defaulted({}) == {"mode": "Fixed", "policy": {"retries": 3}, "note": "n"}
    assert defaulted({"strategy": {}})["strategy"] == {"type": "RollingUpdate", "maxSurge": "25%"}
    assert defaulted({"mode": "Adaptive"})["mode"] == "Adaptive"
    obj: dict[str, Any] = {}
    default_custom_object(obj, DEFAULTED)
    assert obj == {}  # no spec: nothing is created inside an absent parent


def test_nulls_as_kube_apiserver_treats_them() -> None:
    out = defaulted({"mode": None, "note": None, "limit": None})
    assert out["mode"] == "Fixed"  # non-nullable null with a default: the default
    assert out["note"] is None  # nullable null: stays
    assert "limit" not in out  # non-nullable null without a default: dropped
    out = defaulted({"weights": {"a": None, "b": 5}, "steps": [None, {"pause": False}]})
    assert out["weights"] == {"a": 1, "b": 5}
    assert out["steps"] == [{"pause": True}, {"pause": False}]


def test_defaults_are_copies() -> None:
    first, second = defaulted({}), defaulted({})
    first["policy"]["retries"] = 9
    assert (
        second["policy"]["retries"] == 3
        and DEFAULTED["properties"]["spec"]["properties"]["policy"]["default"] == {}
    )


def test_needs_defaults_agrees_with_defaulting() -> None:
    for spec in (
        {},
        {"mode": "A", "policy": {"retries": 1}, "note": None},
        {"weights": {"a": None}},
        {"mode": "A", "policy": {"retries": 1}, "note": "x"},
    ):
        obj = {"spec": copy.deepcopy(spec)}
        before = copy.deepcopy(obj)
        predicted = needs_defaults(obj, DEFAULTED)
        default_custom_object(obj, DEFAULTED)
        assert predicted == (obj != before), spec


# ------------------------------------------------------------- the server

SCHEMA: dict[str, Any] = obj_schema(
    spec={
        "type": "object",
        "required": ["selector"],
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
            "selector": {"type": "string", "minLength": 1},
            "mode": {"type": "string", "enum": ["Fixed", "Adaptive"], "default": "Fixed"},
            "subsets": {
                "type": "array",
                "maxItems": 3,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "pattern": "^[a-z]+$"},
                        "max": {"x-kubernetes-int-or-string": True},
                    },
                },
            },
        },
    },
    status=obj_schema(
        replicas={"type": "integer"},
        phase={"type": "string", "default": "Pending"},
        selector={"type": "string"},
    ),
)
CRD = custom_resource_definition(
    "example.com", "Widget", schema=SCHEMA, subresources={"status": {}, "scale": scale_subresource()}
)
WIDGETS = "example.com/v1/widgets"
CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def vapi() -> Any:
    api = ApiServer(VirtualClock(datetime(2030, 1, 2, tzinfo=UTC)), history_size=50)
    api.create(CRDS, None, CRD)
    yield api
    api.close()


def refused(call: Any) -> dict[str, Any]:
    with pytest.raises(ApiError) as info:
        call()
    assert info.value.code == 422 and info.value.reason == "Invalid"
    return info.value.status


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"selector": "app=w", **spec},
    }


def test_create_is_pruned_defaulted_then_validated(vapi: ApiServer) -> None:
    created = vapi.create(WIDGETS, "default", widget(replicas=2, unknown="not an integer either"))
    assert created["spec"] == {"selector": "app=w", "replicas": 2, "mode": "Fixed"}  # pruned, defaulted
    status = refused(
        lambda: vapi.create(
            WIDGETS,
            "default",
            {
                "metadata": {"name": "v"},
                "spec": {
                    "replicas": "two",
                    "mode": "Random",
                    "subsets": [{"name": "a"}, {"name": "a"}, {"name": "B"}, {}],
                },
            },
        )
    )
    assert status["message"] == (
        'Widget.example.com "v" is invalid: ['
        "spec.selector: Required value, "
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", '
        'spec.mode: Unsupported value: "Random": supported values: "Fixed", "Adaptive", '
        "spec.subsets: Too many: 4: must have at most 3 items, "
        "spec.subsets[2].name: Invalid value: \"B\": spec.subsets[2].name in body should match '^[a-z]+$', "
        "spec.subsets[3].name: Required value, "
        'spec.subsets[1]: Duplicate value: map[string]interface {}{"name":"a"}]'
    )
    assert status["details"]["group"] == "example.com" and status["details"]["kind"] == "Widget"
    assert [(c["field"], c["reason"]) for c in status["details"]["causes"]] == [
        ("spec.selector", "FieldValueRequired"),
        ("spec.replicas", "FieldValueTypeInvalid"),
        ("spec.mode", "FieldValueNotSupported"),
        ("spec.subsets", "FieldValueTooMany"),
        ("spec.subsets[2].name", "FieldValueInvalid"),
        ("spec.subsets[3].name", "FieldValueRequired"),
        ("spec.subsets[1]", "FieldValueDuplicate"),
    ]
    refused(
        lambda: vapi.create(
            WIDGETS, "default", {"metadata": {"name": "v"}, "spec": {"replicas": 1}}, dry_run=True
        )
    )
    assert vapi.list(WIDGETS, "default")["items"][0]["metadata"]["name"] == "w"


def test_update_and_patches_are_validated(vapi: ApiServer) -> None:
    created = vapi.create(WIDGETS, "default", widget(replicas=1))
    bad = copy.deepcopy(created)
    bad["spec"]["replicas"] = 11
    status = refused(lambda: vapi.update(WIDGETS, "default", "w", bad))
    assert status["message"] == (
        'Widget.example.com "w" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"
    )
    status = refused(lambda: vapi.patch(WIDGETS, "default", "w", {"spec": {"selector": ""}}, "merge"))
    assert status["details"]["causes"][0]["field"] == "spec.selector"
    refused(
        lambda: vapi.patch(
            WIDGETS,
            "default",
            "w",
            [{"op": "add", "path": "/spec/subsets", "value": [{"name": "a", "max": True}]}],
            "json",
        )
    )
    # a merge patch that removes a defaulted field gets the default back
    patched = vapi.patch(
        WIDGETS, "default", "w", {"spec": {"mode": None, "subsets": [{"name": "a", "max": "50%"}]}}, "merge"
    )
    assert patched["spec"]["mode"] == "Fixed" and patched["spec"]["subsets"] == [{"name": "a", "max": "50%"}]
    assert vapi.get(WIDGETS, "default", "w")["spec"]["replicas"] == 1


def test_status_writes_are_defaulted_and_validated(vapi: ApiServer) -> None:
    created = vapi.create(WIDGETS, "default", widget(replicas=1))
    created["status"] = {"replicas": 1}
    written = vapi.update(WIDGETS, "default", "w", created, subresource="status")
    assert written["status"] == {"replicas": 1, "phase": "Pending"}
    status = refused(
        lambda: vapi.patch(
            WIDGETS, "default", "w", {"status": {"replicas": "one"}}, "merge", subresource="status"
        )
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueTypeInvalid",
            "field": "status.replicas",
            "message": 'Invalid value: "string": status.replicas in body must be of type integer: "string"',
        }
    ]


def test_scale_writes_are_validated_against_the_custom_schema(vapi: ApiServer) -> None:
    vapi.create(WIDGETS, "default", widget(replicas=1))
    scale = vapi.patch(WIDGETS, "default", "w", {"spec": {"replicas": 10}}, "merge", subresource="scale")
    assert scale["spec"]["replicas"] == 10
    status = refused(
        lambda: vapi.patch(WIDGETS, "default", "w", {"spec": {"replicas": 11}}, "merge", subresource="scale")
    )
    assert status["message"] == (
        'Widget.example.com "w" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"
    )
    assert vapi.get(WIDGETS, "default", "w")["spec"]["replicas"] == 10


def test_defaults_added_to_the_schema_later_show_on_read(vapi: ApiServer) -> None:
    vapi.create(WIDGETS, "default", widget(replicas=1))
    crd = vapi.get(CRDS, None, "widgets.example.com")
    spec_props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec_props["paused"] = {"type": "boolean", "default": False}
    vapi.update(CRDS, None, "widgets.example.com", crd)
    assert vapi.get(WIDGETS, "default", "w")["spec"]["paused"] is False
    assert vapi.list(WIDGETS, "default")["items"][0]["spec"]["paused"] is False
    assert "paused" not in vapi.store.get("widgets.example.com", "default", "w")["spec"]  # read path only


def test_objects_stored_under_a_looser_schema_stay_writable(vapi: ApiServer) -> None:
    vapi.create(WIDGETS, "default", widget(replicas=1, subsets=[{"name": "a", "max": 1}]))
    crd = vapi.get(CRDS, None, "widgets.example.com")
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["selector"]["maxLength"] = 3  # "app=w" is now too long
    spec_schema["properties"]["subsets"]["items"]["properties"]["max"] = {"type": "string"}
    vapi.update(CRDS, None, "widgets.example.com", crd)
    patched = vapi.patch(WIDGETS, "default", "w", {"spec": {"replicas": 2}}, "merge")
    assert patched["spec"]["selector"] == "app=w" and patched["spec"]["replicas"] == 2
    vapi.patch(WIDGETS, "default", "w", {"status": {"replicas": 2}}, "merge", subresource="status")
    vapi.patch(WIDGETS, "default", "w", {"spec": {"replicas": 3}}, "merge", subresource="scale")
    status = refused(lambda: vapi.patch(WIDGETS, "default", "w", {"spec": {"selector": "app=ww"}}, "merge"))
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueTooLong",
            "field": "spec.selector",
            "message": "Too long: may not be longer than 3",
        }
    ]
    status = refused(
        lambda: vapi.patch(WIDGETS, "default", "w", {"spec": {"subsets": [{"name": "a", "max": 2}]}}, "merge")
    )
    assert status["details"]["causes"][0]["field"] == "spec.subsets[0].max"


def test_builtin_kinds_are_named_with_their_group(vapi: ApiServer) -> None:
    status = refused(
        lambda: vapi.create(
            "apps/v1/deployments",
            "default",
            {
                "metadata": {"name": "d"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": {}},
                },
            },
        )
    )
    assert status["message"].startswith('Deployment.apps "d" is invalid: ')
