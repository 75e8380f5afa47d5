"""Typed, frozen view of a UnitedDeployment (`spreadgate.dev/v1beta1`, short name sgud).

Field-compatible with Kruise's `apps.kruise.io/v1beta1`; Kruise's `v1alpha1` (and
ours under that version) is accepted and converted as Kruise converts it: the
spec one to one, the status through `ud_conversion.status_to_v1beta1`.
`UnitedDeployment.from_object` checks what the planner needs (types, required
fields, the syntax of replica values) and raises `ModelError` with the field path
of the first problem; everything else (sums, immutability) is the validation
policy's job. The rules are restated in docs/uniteddeployment.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine.model.common import ScheduleType, check_node_selector_term, list_field, mapping_field
from py_engine.model.constants import MAX_SUBSETS
from py_engine.model.errors import ModelError
from py_engine.model.ud_constants import (
    DEFAULT_RESCHEDULE_CRITICAL_SECONDS,
    DEFAULT_REVISION_HISTORY_LIMIT,
    DEFAULT_UNSCHEDULABLE_DURATION_SECONDS,
    MAX_INT32,
    TEMPLATE_KINDS,
    UD_ALPHA_VERSION,
    UD_GROUPS,
    UD_KIND,
    UD_VERSIONS,
)
from py_engine.model.ud_conversion import status_to_v1beta1
from py_engine.semantics.labels import SelectorError, selector_from_label_selector

JSON = dict[str, Any]

_PERCENT = re.compile(r"^([+-]?[0-9]+)%$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _string(value: Any, path: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ModelError(path, "must be a non-empty string" if required else "must be a string")
    return value


def _integer(value: Any, path: str, *, minimum: int | None = 0) -> int | None:
    """An optional whole number (JSON numbers like 3.0 included) within int32."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelError(path, f"must be an integer, not {value!r}")
    if minimum is not None and value < minimum:
        raise ModelError(path, f"must be at least {minimum}, got {value}")
    if abs(value) > MAX_INT32:
        raise ModelError(path, f"{value} is out of the int32 range")
    return value


def _string_map(value: Any, path: str) -> dict[str, str]:
    data = mapping_field(value, path)
    for key, item in data.items():
        if not isinstance(item, str):
            raise ModelError(f"{path}[{key}]", "must be a string")
    return {str(k): v for k, v in data.items()}


@dataclass(frozen=True)
class ReplicaValue:
    """A subset's `replicas`, `minReplicas` or `maxReplicas`: a count, or a percentage
    of `spec.replicas` (`percent`)."""

    value: int
    percent: bool = False

    def resolve(self, ud_replicas: int) -> int | None:
        """Kruise's resolution: a percentage rounds half up, `floor(R * p / 100 + 0.5)`;
        None when a percentage meets an unset `spec.replicas` (`ud_replicas < 0`)."""
        if not self.percent:
            return self.value
        if ud_replicas < 0:
            return None
        return (2 * ud_replicas * self.value + 100) // 200

    def to_json(self) -> int | str:
        return f"{self.value}%" if self.percent else self.value


def parse_replica_value(raw: Any, path: str) -> ReplicaValue | None:
    """An int-or-percentage value; None when unset. Kruise's syntax: an optional sign,
    decimal digits and `%`, within [0, 100]; integers must not be negative."""
    if raw is None:
        return None
    if isinstance(raw, str):
        match = _PERCENT.match(raw)
        if match is None:
            raise ModelError(path, f'{raw!r} is not an integer or a percentage like "25%"')
        percent = int(match.group(1))
        if not 0 <= percent <= 100:
            raise ModelError(path, f"{raw!r} must be between 0% and 100%")
        return ReplicaValue(percent, percent=True)
    value = _integer(raw, path)
    assert value is not None
    return ReplicaValue(value)


@dataclass(frozen=True)
class SubsetTemplate:
    """The one workload template: its key in `spec.template`, the subset workloads'
    apiVersion and kind, and the template's `metadata` and `spec` (kept as dicts:
    they are copied into the workloads)."""

    key: str
    api_version: str
    kind: str
    metadata: JSON
    spec: JSON

    @property
    def labels(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.metadata.get("labels") or {}).items()}

    @property
    def annotations(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.metadata.get("annotations") or {}).items()}


@dataclass(frozen=True)
class UdSubset:
    """One subset of the topology, in spec order."""

    name: str
    index: int
    node_selector_term: JSON | None
    tolerations: tuple[JSON, ...]
    replicas: ReplicaValue | None
    min_replicas: ReplicaValue | None
    max_replicas: ReplicaValue | None
    patch: JSON | None

    @property
    def patch_text(self) -> str:
        """The patch as the subset-patch annotation carries it ("" without a patch)."""
        return "" if self.patch is None else json.dumps(self.patch, separators=(",", ":"))


@dataclass(frozen=True)
class AdaptiveOptions:
    reschedule_critical_seconds: int = DEFAULT_RESCHEDULE_CRITICAL_SECONDS
    unschedulable_duration_seconds: int = DEFAULT_UNSCHEDULABLE_DURATION_SECONDS
    reserve_unschedulable_pods: bool = False


@dataclass(frozen=True)
class UdScheduleStrategy(ScheduleType):
    adaptive: AdaptiveOptions

    @property
    def reserves(self) -> bool:
        return self.is_adaptive and self.adaptive.reserve_unschedulable_pods


@dataclass(frozen=True)
class UdUpdateStrategy:
    """`Manual` (the only type; "" reads as Manual) with per-subset partitions."""

    type: str
    partitions: Mapping[str, int]


@dataclass(frozen=True)
class UnitedDeployment:
    """A typed view of one UnitedDeployment; `status` is always in v1beta1 shape."""

    api_version: str
    name: str
    namespace: str
    uid: str
    generation: int
    replicas: int | None
    selector: JSON
    template: SubsetTemplate
    subsets: tuple[UdSubset, ...]
    schedule: UdScheduleStrategy
    update_strategy: UdUpdateStrategy
    revision_history_limit: int
    labels: Mapping[str, str]
    status: JSON = field(repr=False, compare=False)
    raw: JSON = field(repr=False, compare=False)

    @property
    def group(self) -> str:
        return self.api_version.split("/", 1)[0]

    @property
    def served_version(self) -> str:
        return self.api_version.split("/", 1)[1]

    @property
    def hub_api_version(self) -> str:
        """`<group>/v1beta1`: the version the controller works in and owner references name."""
        return f"{self.group}/v1beta1"

    def subset(self, name: str) -> UdSubset | None:
        return next((s for s in self.subsets if s.name == name), None)

    @classmethod
    def from_object(cls, obj: Any) -> UnitedDeployment:
        """Read a UnitedDeployment dict of either group and version; ModelError if malformed."""
        if not is_uniteddeployment(obj):
            raise ModelError(
                "kind", "not a UnitedDeployment (spreadgate.dev or apps.kruise.io, v1beta1 or v1alpha1)"
            )
        metadata = mapping_field(obj.get("metadata"), "metadata")
        spec = mapping_field(obj.get("spec"), "spec", required=True)
        raw_status = obj.get("status")
        status = dict(raw_status) if isinstance(raw_status, Mapping) else {}
        api_version = str(obj["apiVersion"])
        if api_version.endswith("/" + UD_ALPHA_VERSION):
            status = status_to_v1beta1(status)
        topology = mapping_field(spec.get("topology"), "spec.topology")
        generation = metadata.get("generation")
        return cls(
            api_version=api_version,
            name=_string(metadata.get("name"), "metadata.name"),
            namespace=_string(metadata.get("namespace"), "metadata.namespace"),
            uid=_string(metadata.get("uid"), "metadata.uid"),
            generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else 0,
            replicas=_integer(spec.get("replicas"), "spec.replicas"),
            selector=_selector(spec.get("selector")),
            template=_template(spec.get("template")),
            subsets=_subsets(topology.get("subsets")),
            schedule=_schedule(topology.get("scheduleStrategy")),
            update_strategy=_update_strategy(spec.get("updateStrategy")),
            revision_history_limit=_revision_history_limit(spec.get("revisionHistoryLimit")),
            labels=_string_map(metadata.get("labels"), "metadata.labels"),
            status=status,
            raw=dict(obj),
        )


def is_uniteddeployment(obj: Any) -> bool:
    """True for a UnitedDeployment of Spreadgate's or Kruise's group, v1beta1 or v1alpha1."""
    if not isinstance(obj, Mapping) or obj.get("kind") != UD_KIND:
        return False
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return False
    group, version = api_version.split("/", 1)
    return group in UD_GROUPS and version in UD_VERSIONS


def _selector(raw: Any) -> JSON:
    selector = mapping_field(raw, "spec.selector", required=True)
    try:
        compiled = selector_from_label_selector(selector)
    except SelectorError as exc:
        raise ModelError("spec.selector", str(exc)) from None
    if not compiled.requirements:
        raise ModelError("spec.selector", "an empty selector would select every workload and pod")
    return selector


def _template(raw: Any) -> SubsetTemplate:
    """The highest-priority template present (Kruise's controller order)."""
    template = mapping_field(raw, "spec.template", required=True)
    for key, api_version, kind in TEMPLATE_KINDS:
        if template.get(key) is None:
            continue
        path = f"spec.template.{key}"
        body = mapping_field(template[key], path)
        metadata = mapping_field(body.get("metadata"), f"{path}.metadata")
        _string_map(metadata.get("labels"), f"{path}.metadata.labels")
        _string_map(metadata.get("annotations"), f"{path}.metadata.annotations")
        spec = mapping_field(body.get("spec"), f"{path}.spec")
        pod_template = mapping_field(spec.get("template"), f"{path}.spec.template")
        pod_meta = mapping_field(pod_template.get("metadata"), f"{path}.spec.template.metadata")
        _string_map(pod_meta.get("labels"), f"{path}.spec.template.metadata.labels")
        mapping_field(pod_template.get("spec"), f"{path}.spec.template.spec")
        return SubsetTemplate(key=key, api_version=api_version, kind=kind, metadata=metadata, spec=spec)
    keys = ", ".join(key for key, _, _ in TEMPLATE_KINDS)
    raise ModelError("spec.template", f"should provide one of {keys}")


def _node_selector_term(raw: Any, path: str) -> JSON | None:
    if raw is None:
        return None
    term = mapping_field(raw, path)
    check_node_selector_term(term, path, key_required=True)
    return term


def _subsets(raw: Any) -> tuple[UdSubset, ...]:
    items = list_field(raw, "spec.topology.subsets")
    if len(items) > MAX_SUBSETS:
        # The CRD and the validating webhook refuse more; one stored around them (written
        # before the bound, or with the webhook down) must not make the controller create a
        # workload per subset (issue 23: 2,290 Deployments in 20 s for 10,000 subsets).
        raise ModelError(
            "spec.topology.subsets",
            f"{len(items)} subsets, more than the {MAX_SUBSETS} allowed "
            "(the CRD's maxItems); nothing is reconciled until it is fixed",
        )
    subsets: list[UdSubset] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        path = f"spec.topology.subsets[{index}]"
        data = mapping_field(item, path, required=True)
        name = _string(data.get("name"), f"{path}.name", required=True)
        if not _DNS_LABEL.match(name) or len(name) > 63:
            raise ModelError(f"{path}.name", f"invalid subset name {name!r}: must be a DNS-1123 label")
        if name in seen:
            raise ModelError(f"{path}.name", f"duplicated subset name {name}")
        seen.add(name)
        patch = data.get("patch")
        subsets.append(
            UdSubset(
                name=name,
                index=index,
                node_selector_term=_node_selector_term(
                    data.get("nodeSelectorTerm"), f"{path}.nodeSelectorTerm"
                ),
                tolerations=tuple(
                    mapping_field(t, f"{path}.tolerations[{j}]", required=True)
                    for j, t in enumerate(list_field(data.get("tolerations"), f"{path}.tolerations"))
                ),
                replicas=parse_replica_value(data.get("replicas"), f"{path}.replicas"),
                min_replicas=parse_replica_value(data.get("minReplicas"), f"{path}.minReplicas"),
                max_replicas=parse_replica_value(data.get("maxReplicas"), f"{path}.maxReplicas"),
                patch=mapping_field(patch, f"{path}.patch") if patch is not None else None,
            )
        )
    return tuple(subsets)


def _schedule(raw: Any) -> UdScheduleStrategy:
    data = mapping_field(raw, "spec.topology.scheduleStrategy")
    kind = _string(data.get("type"), "spec.topology.scheduleStrategy.type")
    if kind not in ("", "Fixed", "Adaptive"):
        raise ModelError(
            "spec.topology.scheduleStrategy.type", f"unsupported value {kind!r}: Fixed or Adaptive"
        )
    path = "spec.topology.scheduleStrategy.adaptive"
    adaptive = mapping_field(data.get("adaptive"), path)
    critical = _integer(adaptive.get("rescheduleCriticalSeconds"), f"{path}.rescheduleCriticalSeconds")
    duration = _integer(adaptive.get("unschedulableDuration"), f"{path}.unschedulableDuration")
    if duration is None:  # the field's older name, read as an alias (docs/uniteddeployment.md)
        duration = _integer(adaptive.get("unschedulableLastSeconds"), f"{path}.unschedulableLastSeconds")
    reserve = adaptive.get("reserveUnschedulablePods", False)
    if not isinstance(reserve, bool):
        raise ModelError(f"{path}.reserveUnschedulablePods", "must be a boolean")
    return UdScheduleStrategy(
        type=kind or "Fixed",
        adaptive=AdaptiveOptions(
            reschedule_critical_seconds=DEFAULT_RESCHEDULE_CRITICAL_SECONDS if critical is None else critical,
            unschedulable_duration_seconds=DEFAULT_UNSCHEDULABLE_DURATION_SECONDS
            if duration is None
            else duration,
            reserve_unschedulable_pods=reserve,
        ),
    )


def _update_strategy(raw: Any) -> UdUpdateStrategy:
    data = mapping_field(raw, "spec.updateStrategy")
    kind = _string(data.get("type"), "spec.updateStrategy.type")
    if kind not in ("", "Manual"):
        raise ModelError("spec.updateStrategy.type", f"unsupported value {kind!r}: only Manual")
    manual = mapping_field(data.get("manualUpdate"), "spec.updateStrategy.manualUpdate")
    path = "spec.updateStrategy.manualUpdate.partitions"
    partitions: dict[str, int] = {}
    for name, value in mapping_field(manual.get("partitions"), path).items():
        partitions[str(name)] = _integer(value, f"{path}[{name}]", minimum=None) or 0
    return UdUpdateStrategy(type=kind or "Manual", partitions=partitions)


def _revision_history_limit(raw: Any) -> int:
    value = _integer(raw, "spec.revisionHistoryLimit")
    return DEFAULT_REVISION_HISTORY_LIMIT if value is None else value
