"""Every failed UnitedDeployment write is logged once, by the loop, with its structured fields
(as the WorkloadSpread controller's are: docs/operations.md, "What is logged, at which level")."""

from __future__ import annotations

import logging

import pytest
from united_kit import UDS, pools, term, united

from py_engine.assembled_stack import Stack
from py_engine.logsetup import record_fields

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def test_a_failed_create_is_logged_once_with_write_object_and_cause(caplog: pytest.LogCaptureFixture) -> None:
    subsets = [{"name": "a", "nodeSelectorTerm": term("a")}]
    with (
        Stack(pools("a"), faults="deployments.apps:create:error500=1") as stack,
        caplog.at_level(logging.WARNING, logger="py_engine.uniteddeployment.controller.runtime"),
    ):
        stack.create(UDS, united("web", 2, subsets))
        stack.controller_step()
    failures = [r for r in caplog.records if r.getMessage() == "create write failed"]
    assert len(failures) == 1
    fields = record_fields(failures[0])
    assert (fields["uniteddeployment"], fields["write"]) == ("default/web", "create")
    assert fields["object"].startswith("Deployment/web-a-") and "500" in fields["cause"]
