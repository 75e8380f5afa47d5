"""Object accessors read what Kubernetes would act on and never raise on hostile input."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.semantics import objects


def test_well_formed_objects() -> None:
    pod = {"apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u",
                                            "labels": {"a": "1"}, "annotations": {"k": "v"}}}
    assert (objects.name(pod), objects.namespace(pod), objects.uid(pod)) == ("p", "ns", "u")
    assert objects.labels(pod) == {"a": "1"} and objects.annotations(pod) == {"k": "v"}
    assert objects.group_of(pod) == "" and objects.api_group("apps/v1") == "apps"
    assert objects.api_group("apps.kruise.io/v1alpha1") == "apps.kruise.io"


@pytest.mark.parametrize("obj", [{}, {"metadata": None}, {"metadata": "x"}, {"metadata": {"name": 5}},
                                 {"metadata": {"labels": ["a"], "annotations": {"k": 1, 2: "v"}}}, []])
def test_malformed_objects_read_as_empty(obj: Any) -> None:
    assert objects.name(obj) == "" and objects.namespace(obj) == "default" and objects.uid(obj) == ""
    assert objects.labels(obj) == {} and objects.annotations(obj) == {} and objects.group_of(obj) == ""


def test_namespace_default_can_be_chosen() -> None:
    assert objects.namespace({"metadata": {"namespace": ""}}, default="") == ""
