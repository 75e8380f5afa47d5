"""Typed views of a WorkloadSpread's spec.

`WorkloadSpread.from_object` reads the dict strictly enough for the engine to
work on it (types, required fields) and reports the first problem with its
field path; the full rule set lives in the Rego validation policy. Subset
node-selector terms, tolerations and patches stay dicts: they are copied into
pods verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine.model.common import ScheduleType, check_node_selector_term, list_field, mapping_field
from py_engine.model.constants import (
    IN_SUBSET_SPREAD_ANNOTATION,
    KIND,
    RECOVERY_WINDOW_ANNOTATION,
    SPREAD_GROUPS,
)
from py_engine.model.errors import ModelError
from py_engine.model.maxreplicas import MaxReplicas, parse_max_replicas
from py_engine.semantics.objects import JSON_OBJECT, api_group

JSON = dict[str, Any]


def is_workloadspread(obj: Any) -> bool:
    """True for a WorkloadSpread of Spreadgate's group or of OpenKruise's."""
    return (
        isinstance(obj, JSON_OBJECT)
        and obj.get("kind") == KIND
        and isinstance(obj.get("apiVersion"), str)
        and api_group(obj["apiVersion"]) in SPREAD_GROUPS
    )


def _string(value: Any, path: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ModelError(path, "must be a non-empty string")
    return value


@dataclass(frozen=True)
class TargetRef:
    """The workload whose pods are spread; matched by group, kind and name (not version)."""

    api_version: str
    kind: str
    name: str

    @property
    def group(self) -> str:
        return api_group(self.api_version)

    def identity(self) -> tuple[str, str, str]:
        return (self.group, self.kind, self.name)


@dataclass(frozen=True)
class TargetFilter:
    """Manage only some of the workload's pods, and count replicas from these paths."""

    selector: JSON | None
    replicas_path_list: tuple[str, ...]


@dataclass(frozen=True)
class Subset:
    """One ordered subset: where its pods may run, how many, and what they get."""

    name: str
    index: int
    max_replicas: MaxReplicas | None
    required_node_selector_term: JSON | None
    preferred_node_selector_terms: tuple[JSON, ...]
    tolerations: tuple[JSON, ...]
    patch: JSON | None

    def cap(self, replicas: int) -> int | None:
        """The resolved cap, None when unlimited."""
        return None if self.max_replicas is None else self.max_replicas.resolve(replicas)


@dataclass(frozen=True)
class ScheduleStrategy(ScheduleType):
    """Fixed (default) or Adaptive; Adaptive reschedules only with a positive critical time."""

    reschedule_critical_seconds: int | None
    disable_simulation_schedule: bool
    adaptive_set: bool

    @property
    def reschedules(self) -> bool:
        """Kruise reschedules only when type is Adaptive and the seconds are set and > 0."""
        return (
            self.is_adaptive
            and self.reschedule_critical_seconds is not None
            and self.reschedule_critical_seconds > 0
        )


@dataclass(frozen=True)
class WorkloadSpread:
    """A typed view of one WorkloadSpread object (the dict itself is kept in `raw`)."""

    name: str
    namespace: str
    uid: str
    generation: int
    target_ref: TargetRef
    target_filter: TargetFilter | None
    subsets: tuple[Subset, ...]
    strategy: ScheduleStrategy
    annotations: Mapping[str, str]
    raw: JSON = field(repr=False, compare=False)
    uses_percentages: bool = field(init=False, repr=False, compare=False)
    """Whether a subset's cap is a percentage (then caps follow the workload's replica count).
    Derived from `subsets` once, when the view is made: admission asks it several times per pod."""

    def __post_init__(self) -> None:
        percentages = any(s.max_replicas is not None and s.max_replicas.percent for s in self.subsets)
        object.__setattr__(self, "uses_percentages", percentages)

    @classmethod
    def from_object(cls, obj: Any) -> WorkloadSpread:
        """Read a WorkloadSpread dict (Spreadgate's or Kruise's group); raise ModelError if malformed."""
        if not is_workloadspread(obj):
            raise ModelError("kind", "not a WorkloadSpread (spreadgate.dev or apps.kruise.io)")
        metadata = mapping_field(obj.get("metadata"), "metadata")
        spec = mapping_field(obj.get("spec"), "spec", required=True)
        annotations = mapping_field(metadata.get("annotations"), "metadata.annotations")
        return cls(
            name=_string(metadata.get("name"), "metadata.name", required=False),
            namespace=_string(metadata.get("namespace"), "metadata.namespace", required=False),
            uid=_string(metadata.get("uid"), "metadata.uid", required=False),
            generation=_generation(metadata.get("generation")),
            target_ref=_target_ref(spec.get("targetRef")),
            target_filter=_target_filter(spec.get("targetFilter")),
            subsets=_subsets(spec.get("subsets")),
            strategy=_strategy(spec.get("scheduleStrategy")),
            annotations={str(k): str(v) for k, v in annotations.items()},
            raw=dict(obj),
        )

    def subset(self, name: str) -> Subset | None:
        return next((s for s in self.subsets if s.name == name), None)

    @property
    def stored_status(self) -> Mapping[str, Any]:
        """`status` as stored, or {} when absent or not an object. The status is ours to
        rewrite, so a malformed one is read as empty rather than refused: the next write
        replaces it, where refusing would leave the spread stuck on it."""
        status = self.raw.get("status")
        return status if isinstance(status, JSON_OBJECT) else {}

    @property
    def in_subset_spread(self) -> bool:
        """Spreadgate's in-subset topology ordering of deletion costs (on unless "false")."""
        return self.annotations.get(IN_SUBSET_SPREAD_ANNOTATION, "true").lower() != "false"

    def recovery_window_seconds(self, default: int) -> int:
        """How long an unschedulable subset stays skipped (annotation, else `default`)."""
        value = self.annotations.get(RECOVERY_WINDOW_ANNOTATION, "")
        return int(value) if value.isdigit() and int(value) > 0 else default


def _generation(value: Any) -> int:
    """metadata.generation; anything but a whole number (hand-written input) reads as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _target_ref(raw: Any) -> TargetRef:
    ref = mapping_field(raw, "spec.targetRef", required=True)
    return TargetRef(
        api_version=_string(ref.get("apiVersion"), "spec.targetRef.apiVersion"),
        kind=_string(ref.get("kind"), "spec.targetRef.kind"),
        name=_string(ref.get("name"), "spec.targetRef.name"),
    )


def _target_filter(raw: Any) -> TargetFilter | None:
    if raw is None:
        return None
    data = mapping_field(raw, "spec.targetFilter")
    selector = data.get("selector")
    if selector is not None and not isinstance(selector, JSON_OBJECT):
        raise ModelError("spec.targetFilter.selector", "must be a label selector object")
    paths = list_field(data.get("replicasPathList"), "spec.targetFilter.replicasPathList")
    for i, path in enumerate(paths):
        _string(path, f"spec.targetFilter.replicasPathList[{i}]")
    return TargetFilter(
        selector=dict(selector) if selector is not None else None,
        replicas_path_list=tuple(paths),
    )


def _node_selector_term(value: Any, path: str) -> JSON:
    """A NodeSelectorTerm (`check_node_selector_term`; a requirement's key may be absent)."""
    term = mapping_field(value, path, required=True)
    check_node_selector_term(term, path, key_required=False)
    return term


def _subsets(raw: Any) -> tuple[Subset, ...]:
    items = list_field(raw, "spec.subsets")
    if not items:
        raise ModelError("spec.subsets", "at least one subset is required")
    subsets = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        path = f"spec.subsets[{index}]"
        data = mapping_field(item, path, required=True)
        required = data.get("requiredNodeSelectorTerm")
        patch = data.get("patch")
        name = _string(data.get("name"), f"{path}.name")
        if name in seen:
            raise ModelError(f"{path}.name", f"duplicate subset name {name!r}")
        seen.add(name)
        subsets.append(
            Subset(
                name=name,
                index=index,
                max_replicas=parse_max_replicas(data.get("maxReplicas"), f"{path}.maxReplicas"),
                required_node_selector_term=(
                    _node_selector_term(required, f"{path}.requiredNodeSelectorTerm")
                    if required is not None
                    else None
                ),
                preferred_node_selector_terms=tuple(
                    _preferred_term(t, f"{path}.preferredNodeSelectorTerms[{j}]")
                    for j, t in enumerate(
                        list_field(
                            data.get("preferredNodeSelectorTerms"), f"{path}.preferredNodeSelectorTerms"
                        )
                    )
                ),
                tolerations=tuple(
                    mapping_field(t, f"{path}.tolerations[{j}]", required=True)
                    for j, t in enumerate(list_field(data.get("tolerations"), f"{path}.tolerations"))
                ),
                patch=mapping_field(patch, f"{path}.patch") if patch is not None else None,
            )
        )
    return tuple(subsets)


def _preferred_term(value: Any, path: str) -> JSON:
    term = mapping_field(value, path, required=True)
    if term.get("preference") is not None:
        _node_selector_term(term["preference"], f"{path}.preference")
    return term


def _strategy(raw: Any) -> ScheduleStrategy:
    data = mapping_field(raw, "spec.scheduleStrategy")
    kind = _string(data.get("type"), "spec.scheduleStrategy.type", required=False)
    adaptive_raw = data.get("adaptive")
    adaptive = mapping_field(adaptive_raw, "spec.scheduleStrategy.adaptive")
    seconds = adaptive.get("rescheduleCriticalSeconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
        raise ModelError("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", "must be an integer")
    return ScheduleStrategy(
        type=kind or "Fixed",
        reschedule_critical_seconds=seconds,
        disable_simulation_schedule=bool(adaptive.get("disableSimulationSchedule", False)),
        adaptive_set=adaptive_raw is not None,
    )
