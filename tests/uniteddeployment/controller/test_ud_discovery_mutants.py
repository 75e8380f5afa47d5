"""A subset workload's partition as discovery reads it: what mutation testing (run U1) found
unpinned. Kubernetes' StatefulSet has a partition only under the `RollingUpdate` strategy (the
default when `type` is unset); `OnDelete` has none."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.uniteddeployment.controller.discovery import SubsetWorkload

pytestmark = pytest.mark.timeout(30)


def statefulset(strategy: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web-a-x"},
        "spec": {"replicas": 3, "updateStrategy": strategy},
    }


@pytest.mark.parametrize(
    ("strategy", "partition"),
    [
        ({"type": "OnDelete", "rollingUpdate": {"partition": 2}}, None),
        ({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, 2),
        ({"rollingUpdate": {"partition": 2}}, 2),
        ({}, 0),
    ],
)
def test_an_on_delete_statefulset_has_no_partition(strategy: dict[str, Any], partition: int | None) -> None:
    assert SubsetWorkload("a", statefulset(strategy)).partition() == partition
