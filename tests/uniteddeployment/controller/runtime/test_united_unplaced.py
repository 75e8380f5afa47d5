"""Issue 25: an Adaptive UnitedDeployment whose replicas cannot all be placed says so.

On the playground such a UnitedDeployment showed DESIRED 6 CURRENT 0 with every condition True,
no Event and no log line. Now its status carries `ReplicasAllocated=False` (reason
`NoFittingNode`) with the count and the subsets no node fits, a Warning Event is recorded and a
log line with fields is written, once per change; when a node fits again the condition turns True.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from united_kit import UDS, pools, term, ud, ud_warnings, united

from py_engine.assembled_stack import Stack
from py_engine.logsetup import record_fields
from py_engine.sim.nodepool import nodes_from_description

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ADAPTIVE = {"type": "Adaptive"}
AB: list[dict[str, Any]] = [
    {"name": "a", "maxReplicas": 4, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def test_replicas_that_fit_nowhere_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    with (
        Stack(pools("c")) as stack,
        caplog.at_level(logging.WARNING, logger="py_engine.uniteddeployment.controller.runtime"),
    ):
        stack.create(UDS, united("web", 6, AB, schedule=ADAPTIVE))
        stack.settle()
        conditions = {c["type"]: c for c in ud(stack, "web")["status"]["conditions"]}
        allocated = conditions["ReplicasAllocated"]
        assert (allocated["status"], allocated["reason"]) == ("False", "NoFittingNode")
        assert allocated["message"] == "6 of 6 replicas cannot be placed: no node fits a pod of subsets a, b"
        assert [m for r, m in ud_warnings(stack) if r == "NoFittingNode"] == [allocated["message"]]
        lines = [r for r in caplog.records if r.getMessage() == "replicas cannot all be placed"]
        assert len(lines) == 1
        assert dict(record_fields(lines[0])) == {
            "uniteddeployment": "default/web",
            "unplaced": 6,
            "replicas": 6,
            "no_node_fit": "a,b",
        }
        # A node for subset b appears: every replica has a place again.
        for node in nodes_from_description(
            {
                "pools": [
                    {
                        "name": "b",
                        "count": 1,
                        "labels": {"node.spreadgate.dev/pool": "b"},
                        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    }
                ]
            }
        ):
            stack.api.create("v1/nodes", None, node)
        stack.settle()
        allocated = {c["type"]: c for c in ud(stack, "web")["status"]["conditions"]}["ReplicasAllocated"]
        assert (allocated["status"], allocated["reason"]) == ("True", "Allocated")
        assert ud(stack, "web")["status"]["replicas"] == 6
