"""Object accessors read what Kubernetes would act on and never raise on hostile input."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.semantics import objects


def test_well_formed_objects() -> None:
    pod = {
        "apiVersion": "v1",
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u",
            "labels": {"a": "1"},
            "annotations": {"k": "v"},
        },
    }
    assert (objects.name(pod), objects.namespace(pod), objects.uid(pod)) == ("p", "ns", "u")
    assert objects.labels(pod) == {"a": "1"} and objects.annotations(pod) == {"k": "v"}
    assert objects.group_of(pod) == "" and objects.api_group("apps/v1") == "apps"
    assert objects.api_group("apps.kruise.io/v1alpha1") == "apps.kruise.io"


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"metadata": None},
        {"metadata": "x"},
        {"metadata": {"name": 5}},
        {"metadata": {"labels": ["a"], "annotations": {"k": 1, 2: "v"}}},
        [],
    ],
)
def test_malformed_objects_read_as_empty(obj: Any) -> None:
    assert objects.name(obj) == "" and objects.namespace(obj) == "default" and objects.uid(obj) == ""
    assert objects.labels(obj) == {} and objects.annotations(obj) == {} and objects.group_of(obj) == ""


def test_namespace_default_can_be_chosen() -> None:
    assert objects.namespace({"metadata": {"namespace": ""}}, default="") == ""


def test_an_empty_or_non_string_namespace_reads_as_the_default() -> None:
    assert objects.namespace({"metadata": {"namespace": ""}}) == "default"
    assert objects.namespace({"metadata": {"namespace": 7}}, default="prod") == "prod"


def test_the_group_of_an_object_is_read_from_its_api_version() -> None:
    assert objects.group_of({"apiVersion": "apps/v1", "kind": "Deployment"}) == "apps"
    assert objects.group_of({"apiVersion": "apps.kruise.io/v1beta1"}) == "apps.kruise.io"
    assert objects.group_of({"apiversion": "apps/v1"}) == ""  # the field name is case-sensitive


def test_the_group_is_everything_before_the_last_slash() -> None:
    # Not a valid apiVersion (Kubernetes refuses a second slash), but read one way only.
    assert objects.api_group("example.com/extra/v1") == "example.com/extra"
    assert objects.api_group("/v1") == ""
