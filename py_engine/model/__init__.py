"""Typed, validated views of WorkloadSpread objects.

Objects travel as plain JSON dicts (as the API server sends them); these views
read them into frozen dataclasses for the decisions that need types, without
ever replacing the dict that is written back. Kruise's
`apps.kruise.io/v1alpha1` WorkloadSpreads are read exactly like Spreadgate's own.
"""

from py_engine.model.constants import (
    API_VERSION,
    GROUP,
    KIND,
    KRUISE_GROUP,
    KRUISE_MATCHED_ANNOTATION,
    MATCHED_ANNOTATION,
    PLURAL,
    VERSION,
    VERSION_IGNORED,
)
from py_engine.model.errors import ModelError
from py_engine.model.maxreplicas import MaxReplicas, parse_max_replicas
from py_engine.model.workloadspread import (
    ScheduleStrategy,
    Subset,
    TargetFilter,
    TargetRef,
    WorkloadSpread,
    is_workloadspread,
)

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "KRUISE_GROUP",
    "KRUISE_MATCHED_ANNOTATION",
    "MATCHED_ANNOTATION",
    "PLURAL",
    "VERSION",
    "VERSION_IGNORED",
    "MaxReplicas",
    "ModelError",
    "ScheduleStrategy",
    "Subset",
    "TargetFilter",
    "TargetRef",
    "WorkloadSpread",
    "is_workloadspread",
    "parse_max_replicas",
]
