"""The workload registry: every kind a WorkloadSpread may target, and what Spreadgate knows about it.

One place for the facts the webhook, the controller, the offline commands and the
REST naming all read (docs/design-workloadspread.md §1.4), so they cannot drift:

* the built-in kinds (Kruise's list: `apps` Deployment, ReplicaSet, StatefulSet;
  `apps.kruise.io` StatefulSet and CloneSet; `batch` Job), each with where its replicas
  live and their default, whether pods are placed by ordinal (StatefulSets, §2.1.3),
  whether its scale-down reads `pod-deletion-cost` (§2.5.3), the kinds between it and its
  pods (Pod -> ReplicaSet -> Deployment) and the REST resource that serves it;
* custom kinds: Kruise's whitelist (ConfigMap `kruise-configuration`, key
  `WorkloadSpread_Watch_Custom_Workload_WhiteList`) and the `--custom-workload
  GROUP/KIND[=REPLICAS_PATH]` flag, read by one parser into one `Whitelist`;
* the replica count percentages resolve against, as the webhook and as the controller
  read it (the two columns of §1.4's table differ for custom kinds; both are here, side by
  side, over one path reader).

`policies/validation/validation.rego` keeps its own `builtin_kind_groups` (Rego cannot
import Python); tests/model/test_workload_registry.py fails when it disagrees with this
registry, and so do the REST constants of `py_engine/apiclient/resources.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.objects import JSON_OBJECT, api_group

GroupKind = tuple[str, str]

UNKNOWN_REPLICAS = -1
WHITELIST_KEY = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
KRUISE_CONFIGMAP = "kruise-configuration"
FLAG_FORMAT = "GROUP/KIND[=REPLICAS_PATH]"


# ----------------------------------------------------------------------------- built-in kinds


@dataclass(frozen=True)
class WorkloadKind:
    """One built-in workload kind (see the module docstring).

    `replicas_field` is the `spec` field holding the replica count (`parallelism` for
    Jobs), `default_replicas` what the API server defaults it to; `owner_chain` the kinds
    between a pod and the workload, nearest the pod first; `version`/`plural` the REST
    resource that serves it; `optional` kinds (OpenKruise's) are served only where their
    CRDs are installed.
    """

    group: str
    kind: str
    version: str
    plural: str
    replicas_field: str = "replicas"
    default_replicas: int = 1
    ordinal_placement: bool = False
    deletion_cost: bool = False
    owner_chain: tuple[GroupKind, ...] = ()
    optional: bool = False

    @property
    def key(self) -> GroupKind:
        return (self.group, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


REPLICASET = WorkloadKind("apps", "ReplicaSet", "v1", "replicasets", deletion_cost=True)
DEPLOYMENT = WorkloadKind(
    "apps", "Deployment", "v1", "deployments", deletion_cost=True, owner_chain=(REPLICASET.key,)
)
STATEFULSET = WorkloadKind("apps", "StatefulSet", "v1", "statefulsets", ordinal_placement=True)
JOB = WorkloadKind("batch", "Job", "v1", "jobs", replicas_field="parallelism")
CLONESET = WorkloadKind(
    "apps.kruise.io", "CloneSet", "v1alpha1", "clonesets", deletion_cost=True, optional=True
)
KRUISE_STATEFULSET = WorkloadKind(
    "apps.kruise.io", "StatefulSet", "v1beta1", "statefulsets", ordinal_placement=True, optional=True
)

BUILTIN: tuple[WorkloadKind, ...] = (DEPLOYMENT, REPLICASET, STATEFULSET, JOB, CLONESET, KRUISE_STATEFULSET)
_BY_KEY: dict[GroupKind, WorkloadKind] = {k.key: k for k in BUILTIN}
BUILTIN_KEYS: frozenset[GroupKind] = frozenset(_BY_KEY)
# The kinds on a built-in kind's owner chain (a Deployment's ReplicaSets): an object one of them
# owns belongs, through it, to that object's own owner too (the controller's triggers follow it).
OWNER_CHAIN_KINDS: frozenset[GroupKind] = frozenset(
    key for workload in BUILTIN for key in workload.owner_chain
)


def builtin(group: str, kind: str) -> WorkloadKind | None:
    """The built-in kind (group and kind compared, the version ignored), or None."""
    return _BY_KEY.get((group, kind))


def builtin_kind_groups() -> dict[str, frozenset[str]]:
    """kind -> the API groups it is built in for: the shape of the validation policy's
    `builtin_kind_groups` (policies/validation/validation.rego), which must equal it."""
    groups: dict[str, set[str]] = {}
    for workload in BUILTIN:
        groups.setdefault(workload.kind, set()).add(workload.group)
    return {kind: frozenset(found) for kind, found in groups.items()}


def group_kind_of(obj: Mapping[str, Any]) -> GroupKind:
    """(group, kind) of an object, an ownerReference or a targetRef-like mapping."""
    return (api_group(str(obj.get("apiVersion") or "")), str(obj.get("kind") or ""))


def target_key(spread: WorkloadSpread) -> GroupKind:
    return (spread.target_ref.group, spread.target_ref.kind)


def target_kind(spread: WorkloadSpread) -> WorkloadKind | None:
    """The built-in kind of the spread's target, None for a custom kind."""
    return builtin(*target_key(spread))


# ----------------------------------------------------------------------------- custom kinds


class WhitelistError(ValueError):
    """A whitelist or `--custom-workload` value that cannot be read; the message is one line."""


@dataclass(frozen=True)
class CustomWorkload:
    """One custom kind: where its replicas are and the kinds between it and its pods.

    `replicas_path` is None when none was given (the controller then asks the kind's
    `/scale`, else the count is unknown; the webhook counts 0), "" when given empty (0).
    """

    group: str
    kind: str
    replicas_path: str | None = None
    sub_resources: tuple[GroupKind, ...] = ()

    @property
    def key(self) -> GroupKind:
        return (self.group, self.kind)

    def entry(self) -> dict[str, Any]:
        """The JSON form the admission service and the validation policy read (`group`/`kind`)."""
        out: dict[str, Any] = {"group": self.group, "kind": self.kind}
        if self.replicas_path is not None:
            out["replicasPath"] = self.replicas_path
        out["subResources"] = [{"group": g, "kind": k} for g, k in self.sub_resources]
        return out


@dataclass(frozen=True)
class Whitelist:
    """The custom kinds allowed besides the built-in ones (empty by default)."""

    workloads: tuple[CustomWorkload, ...] = ()

    def find(self, group: str, kind: str) -> CustomWorkload | None:
        """The first entry for (group, kind): flags come before the ConfigMap when both are given."""
        return next((w for w in self.workloads if w.group == group and w.kind == kind), None)

    def allows(self, group: str, kind: str) -> bool:
        """A kind a spread may target and the controller reads: built in or listed."""
        return (group, kind) in BUILTIN_KEYS or self.find(group, kind) is not None

    @cached_property
    def owner_kinds(self) -> frozenset[GroupKind]:
        """Kinds that may sit on a pod's owner chain: built in, listed, and the listed kinds'
        sub-resources (GameServerSet -> GameServer -> Pod)."""
        kinds = set(BUILTIN_KEYS)
        for workload in self.workloads:
            kinds.add(workload.key)
            kinds.update(workload.sub_resources)
        return frozenset(kinds)

    def entries(self) -> tuple[dict[str, Any], ...]:
        return tuple(w.entry() for w in self.workloads)

    def targets(self) -> list[dict[str, str]]:
        """`{group, kind}` per kind: the validation policy's `customWorkloads` (`validate`, Gatekeeper)."""
        return [{"group": w.group, "kind": w.kind} for w in self.workloads]

    def __add__(self, other: Whitelist) -> Whitelist:
        return Whitelist(self.workloads + other.workloads)


EMPTY_WHITELIST = Whitelist()


def _folded(entry: Mapping[Any, Any]) -> dict[str, Any]:
    """Keys lower-cased: Kruise writes `Group`/`Kind`, the flags' JSON form `group`/`kind`;
    Go's JSON decoder (Kruise's reader) matches field names case-insensitively too."""
    return {str(k).lower(): v for k, v in entry.items()}


def _custom_workload(raw: Any, where: str) -> CustomWorkload:
    if not isinstance(raw, JSON_OBJECT):
        raise WhitelistError(f"{where} must be an object, not {type(raw).__name__}")
    entry = _folded(raw)
    kind = entry.get("kind")
    if not isinstance(kind, str):
        raise WhitelistError(f"{where} needs a string Kind")
    if not kind:
        raise WhitelistError(f"{where} needs a non-empty Kind")
    path = entry.get("replicaspath")
    if path is not None and not isinstance(path, str):
        raise WhitelistError(f"{where}.replicasPath must be a string")
    subs = entry.get("subresources") or []
    if not isinstance(subs, list):
        raise WhitelistError(f"{where}.subResources must be a list")
    sub_resources: list[GroupKind] = []
    for sub in subs:
        if isinstance(sub, JSON_OBJECT):  # an entry without a Kind names nothing: skipped, as before
            folded = _folded(sub)
            if isinstance(folded.get("kind"), str) and folded["kind"]:
                sub_resources.append((str(folded.get("group") or ""), folded["kind"]))
    return CustomWorkload(str(entry.get("group") or ""), kind, path, tuple(sub_resources))


def whitelist_from_entries(entries: Sequence[Any] | None, where: str = "workloads") -> Whitelist:
    """Whitelist entries (Kruise's `{Group, Version, Kind, replicasPath, subResources}` or
    their `entry()` form) -> Whitelist; raises WhitelistError naming the bad entry."""
    if not entries:
        return EMPTY_WHITELIST
    return Whitelist(tuple(_custom_workload(raw, f"{where}[{i}]") for i, raw in enumerate(entries)))


def parse_whitelist(raw: Any) -> Whitelist:
    """The ConfigMap value (JSON text) or its parsed form -> Whitelist.

    None or "" is the empty whitelist, and so is an object without `workloads`
    (Kruise's decoder reads it so). Raises WhitelistError, prefixed with the key.
    """
    if raw is None or raw == "":
        return EMPTY_WHITELIST
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise WhitelistError(f"{WHITELIST_KEY}: not JSON: {exc}") from None
    workloads = raw.get("workloads") if isinstance(raw, JSON_OBJECT) else None
    if not isinstance(raw, JSON_OBJECT) or not isinstance(workloads or [], list):
        raise WhitelistError(f"{WHITELIST_KEY}: expected an object with a 'workloads' list")
    try:
        return whitelist_from_entries(workloads)
    except WhitelistError as exc:
        raise WhitelistError(f"{WHITELIST_KEY}: {exc}") from None


def whitelist_in_objects(objects: Iterable[Mapping[str, Any]]) -> Whitelist:
    """Every `kruise-configuration` ConfigMap's whitelist among `objects` (a snapshot), merged
    in order; raises WhitelistError naming the ConfigMap."""
    found = EMPTY_WHITELIST
    for obj in objects:
        meta = obj.get("metadata")
        if (
            obj.get("kind") != "ConfigMap"
            or not isinstance(meta, JSON_OBJECT)
            or meta.get("name") != KRUISE_CONFIGMAP
        ):
            continue
        data = obj.get("data")
        try:
            found = found + parse_whitelist(
                data.get(WHITELIST_KEY) if isinstance(data, JSON_OBJECT) else None
            )
        except WhitelistError as exc:
            raise WhitelistError(f"ConfigMap {KRUISE_CONFIGMAP}: {exc}") from None
    return found


def parse_custom_workload_flag(value: str) -> CustomWorkload:
    """`--custom-workload GROUP/KIND[=REPLICAS_PATH]` (webhook, controller, admit, reconcile)."""
    group_kind, has_path, path = value.partition("=")
    group, sep, kind = group_kind.rpartition("/")
    if not sep or not kind:
        raise WhitelistError(f"--custom-workload {value!r} must look like {FLAG_FORMAT}")
    return CustomWorkload(group, kind, path if has_path else None)


def whitelist_from_flags(values: Sequence[str]) -> Whitelist:
    """Every `--custom-workload` value, in order; raises WhitelistError at the first bad one."""
    if not values:
        return EMPTY_WHITELIST
    return Whitelist(tuple(parse_custom_workload_flag(v) for v in values))


# ----------------------------------------------------------------------------- replica counts


class PathError(ValueError):
    """A dot path that leads nowhere, or to something that is not an integer."""


def resolve_path(obj: Any, path: str) -> Any:
    """Follow a dot path (`spec.tfReplicaSpecs.Worker.replicas`; a numeric segment indexes a
    list); None when it leads nowhere (a missing key, a null on the way, an index out of range)."""
    value = obj
    for segment in path.split("."):
        if isinstance(value, JSON_OBJECT):
            value = value.get(segment)
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
        if value is None:
            return None
    return value


def _integer(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise PathError(f"path {path!r} holds {value!r}, not an integer")
    return int(value)


def integer_at(obj: Any, path: str) -> int | None:
    """The integer at `path`; None when the path leads nowhere; PathError when not an integer."""
    value = resolve_path(obj, path)
    return None if value is None else _integer(value, path)


def sum_paths(obj: Any, paths: Sequence[str]) -> int:
    """`targetFilter.replicasPathList`: the sum of the integers at these paths; a missing path
    or a non-integer is a PathError (§1.4: both the webhook and the controller refuse it)."""
    total = 0
    for path in paths:
        value = integer_at(obj, path)
        if value is None:
            raise PathError(f"path {path!r} not found in the workload")
        total += value
    return total


def declared_replicas(kind: WorkloadKind, workload: Mapping[str, Any]) -> int:
    """`spec.<replicas_field>` of a built-in kind, its default when absent; PathError when not an integer."""
    value = integer_at(workload, f"spec.{kind.replicas_field}")
    return kind.default_replicas if value is None else value


def controller_replicas(
    spread: WorkloadSpread,
    workload: Mapping[str, Any] | None,
    whitelist: Whitelist,
    scale_replicas: int | None = None,
) -> int:
    """The replica count as the controller reads it (§1.4, right column); raises PathError.

    A missing workload counts 0. A custom kind uses its `replicasPath` when one was given
    (empty or leading nowhere: 0), else `scale_replicas` (its `/scale` `spec.replicas`, when
    the caller could read one), else UNKNOWN_REPLICAS.
    """
    if workload is None:
        return 0
    tf = spread.target_filter
    if tf is not None and tf.replicas_path_list:
        return sum_paths(workload, tf.replicas_path_list)
    kind = target_kind(spread)
    if kind is not None:
        return declared_replicas(kind, workload)
    custom = whitelist.find(*target_key(spread))
    if custom is not None and custom.replicas_path is not None:
        return (integer_at(workload, custom.replicas_path) or 0) if custom.replicas_path else 0
    return scale_replicas if scale_replicas is not None else UNKNOWN_REPLICAS


def webhook_replicas(spread: WorkloadSpread, workload: Mapping[str, Any], whitelist: Whitelist) -> int:
    """The replica count as the webhook reads it (§1.4, left column); raises PathError only for
    `targetFilter.replicasPathList` (Kruise denies the pod then).

    A built-in kind's malformed replica field counts as its default and a custom kind's
    unreadable `replicasPath` as 0: the API server validates the one, and a pod must not be
    denied for the other (the reference reads 0).
    """
    tf = spread.target_filter
    if tf is not None and tf.replicas_path_list:
        return sum_paths(workload, tf.replicas_path_list)
    kind = target_kind(spread)
    if kind is not None:
        try:
            return declared_replicas(kind, workload)
        except PathError:
            return kind.default_replicas
    custom = whitelist.find(*target_key(spread))
    if custom is None or not custom.replicas_path:
        return 0
    try:
        return integer_at(workload, custom.replicas_path) or 0
    except PathError:
        return 0


def listing_replicas(
    spread: WorkloadSpread, workload: Mapping[str, Any], scale_replicas: int | None = None
) -> int:
    """The workload's own replica count, which decides "0 replicas lists no pods" (§1.4).

    Unlike `controller_replicas` no path overrides it: Kruise's pod finder reads the scale
    of the workload itself. A custom kind without a `/scale` answer falls back to its
    `spec.replicas`, else UNKNOWN_REPLICAS (pods are listed). Raises PathError.
    """
    kind = target_kind(spread)
    if kind is not None:
        return declared_replicas(kind, workload)
    if scale_replicas is not None:
        return scale_replicas
    value = resolve_path(workload, "spec.replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN_REPLICAS
