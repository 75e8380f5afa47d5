"""Events on a UnitedDeployment, with Kruise's reasons (one fixed: Kruise's
`Failed SpecifySubsetReplicas` has a space, here `FailedSpecifySubsetReplicas`).

Recording is best effort: a failure is logged, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from py_engine.runtime.events import ObjectEventRecorder
from py_engine.semantics.events import NORMAL, WARNING, Event

log = logging.getLogger(__name__)

COMPONENT = "spreadgate-united-controller"
SUCCESSFUL_UPDATE_SUBSET = "SuccessfulUpdateSubset"
FAILED_UPDATE_SUBSET = "FailedUpdateSubset"
FAILED_REVISION_PROVISION = "FailedRevisionProvision"
FAILED_SPECIFY_SUBSET_REPLICAS = "FailedSpecifySubsetReplicas"
FAILED_FIND_SUBSETS = "FailedFindSubsets"
INVALID_SPEC = "InvalidSpec"
FORBIDDEN_SUBSET_PATCH = "ForbiddenSubsetPatch"

__all__ = ["NORMAL", "WARNING", "Event", "UnitedEventRecorder"]


class UnitedEventRecorder(ObjectEventRecorder):
    """Creates core/v1 Events whose involved object is the UnitedDeployment (`ObjectEventRecorder`)."""

    component = COMPONENT
    log = log

    def involved_type(self, ud: Mapping[str, Any]) -> tuple[Any, Any]:
        return ud.get("apiVersion"), ud.get("kind") or "UnitedDeployment"

    def failure_fields(self, namespace: str, name: str) -> dict[str, Any]:
        return {"uniteddeployment": f"{namespace}/{name}"}
