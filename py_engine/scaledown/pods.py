"""The facts about a pod that scale-down ordering looks at, read once from pod JSON.

Pods stay plain Kubernetes JSON dicts everywhere in Spreadgate. Sorting 100,000 of
them by a comparator that re-reads nested dicts, re-parses timestamps and
re-parses the deletion-cost annotation at every comparison would be slow and
would bury the rules in dict plumbing, so every field the rules use is
extracted (and validated) exactly once into a `PodFacts` tuple.

Readiness follows `podutil.IsPodReady`: the *first* condition of type `Ready`
decides, and the phase is not consulted. The ready time is that condition's
`lastTransitionTime` when it is `True`. Restarts are the maximum `restartCount`
over `status.containerStatuses` only (init and ephemeral containers are not
counted by the controllers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from py_engine.scaledown.costs import parse_deletion_cost
from py_engine.scaledown.errors import PodFormatError
from py_engine.scaledown.timekeys import TimeReader
from py_engine.semantics import objects
from py_engine.semantics.timeutil import TimestampError
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION

# Pod phases as the comparators order them: Pending < Unknown < Running; every
# other value (Succeeded, Failed, the empty string) ties with Pending, because Go
# looks the phase up in a map and a missing key reads as 0.
PHASE_ORDINAL: Mapping[str, int] = {"Pending": 0, "Unknown": 1, "Running": 2}
INACTIVE_PHASES = frozenset({"Succeeded", "Failed"})

# OpenKruise labels read by the CloneSet model.
LIFECYCLE_STATE_LABEL = "lifecycle.apps.kruise.io/state"
SPECIFIED_DELETE_LABEL = "apps.kruise.io/specified-delete"
REVISION_HASH_LABEL = "controller-revision-hash"
IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"


class PodFacts(NamedTuple):
    """Everything the ReplicaSet and CloneSet scale-down rules read from one pod."""

    name: str
    namespace: str
    uid: str
    node_name: str
    phase: str
    terminating: bool
    ready: bool
    # ns since the Unix epoch; None = Go's zero time (absent or null).
    ready_time: int | None
    restarts: int
    created: int | None
    # Parsed pod-deletion-cost (0 when absent or invalid, as upstream).
    cost: int
    # Kruise specifics; harmless for plain ReplicaSet pods.
    lifecycle_state: str
    specified_delete: bool
    revision: str | None
    # Status of the first InPlaceUpdateReady condition; None when the pod has none.
    in_place_update_ready: str | None

    @property
    def active(self) -> bool:
        """`controller.IsPodActive`: not Succeeded/Failed and not being deleted."""
        return self.phase not in INACTIVE_PHASES and not self.terminating

    @property
    def phase_ordinal(self) -> int:
        """Phase rank used by rule 2 of both comparators."""
        return PHASE_ORDINAL.get(self.phase, 0)


def describe_item(position: int, obj: object) -> str:
    """How an error message names an input item: its name when it has one, always its index."""
    name = objects.name(obj) if isinstance(obj, Mapping) else ""
    return f"pod {name!r} (item {position})" if name else f"item {position}"


def _fail(name: str, position: int, message: str) -> PodFormatError:
    return PodFormatError(f"pod {name!r} (item {position}): {message}")


def _optional_string(container: Mapping[str, Any], key: str, name: str, position: int, field: str) -> str:
    """A string field that may be absent or null (reads as ""); anything else is an error."""
    value = container.get(key)
    if value is None:
        return ""
    if type(value) is not str:
        raise _fail(name, position, f"{field} must be a string, got {type(value).__name__}")
    return value


def _timestamp(reader: TimeReader, value: object, name: str, position: int, field: str) -> int | None:
    """A timestamp not found in the reader's cache: parse it, naming the field on failure."""
    try:
        return reader.parse(value) if type(value) is str else reader(value)
    except TimestampError as exc:
        raise _fail(name, position, f"{field}: {exc}") from None


_new_facts = tuple.__new__
_fromisoformat = datetime.fromisoformat
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)
_GO_ZERO_TEXT = "0001-01-01T00:00:00Z"


def read_pod(pod: object, position: int = 0, times: TimeReader | None = None) -> PodFacts:
    """Validate one pod object and extract its `PodFacts`.

    `position` only labels error messages. Raises `PodFormatError` naming the
    item and the offending field for anything that is not pod JSON: no
    `metadata.name`, a wrong type, an unparseable timestamp. Fields the rules do
    not read are not inspected. (Written flat, with type checks inline and error
    messages built only on failure: it runs once per pod of a 100,000-pod
    ranking, where helper calls would cost more than the checks.)
    """
    reader = times if times is not None else TimeReader()
    cache = reader.cache
    if not (type(pod) is dict or isinstance(pod, Mapping)):
        raise PodFormatError(f"item {position}: expected a pod object, got {type(pod).__name__}")
    meta = pod.get("metadata")
    if not (type(meta) is dict or isinstance(meta, Mapping)):
        raise PodFormatError(f"item {position}: missing metadata (is this a pod?)")
    kind = pod.get("kind")
    if kind is not None and kind != "Pod":
        raise PodFormatError(f"{describe_item(position, pod)}: kind is {kind!r}, expected a Pod")
    name = meta.get("name")
    if type(name) is not str or not name:
        raise PodFormatError(f"item {position}: metadata.name is missing or not a string")

    namespace = meta.get("namespace")
    if type(namespace) is not str:
        namespace = _optional_string(meta, "namespace", name, position, "metadata.namespace")
    uid = meta.get("uid")
    if type(uid) is not str:
        uid = _optional_string(meta, "uid", name, position, "metadata.uid")
    raw = meta.get("creationTimestamp")
    if raw is None:
        created = None
    elif type(raw) is str and raw in cache:
        created = cache[raw]
    elif type(raw) is str and len(raw) == 20 and raw[10] == "T" and raw[19] == "Z" and raw != _GO_ZERO_TEXT:
        # TimeReader.parse's canonical-form path, inlined: most timestamps of a
        # large ranking are distinct, and two calls per timestamp cost more than this.
        try:
            created = ((_fromisoformat(raw) - _EPOCH) // _SECOND) * 1_000_000_000
        except ValueError:
            raise _fail(
                name, position, f"metadata.creationTimestamp: not an RFC 3339 timestamp: {raw!r}"
            ) from None
        cache[raw] = created
    else:
        created = _timestamp(reader, raw, name, position, "metadata.creationTimestamp")
    deletion = meta.get("deletionTimestamp")
    if deletion is not None:
        _timestamp(reader, deletion, name, position, "metadata.deletionTimestamp")  # only presence counts

    cost = 0
    annotations = meta.get("annotations")
    if annotations is not None:
        if not (type(annotations) is dict or isinstance(annotations, Mapping)):
            raise _fail(name, position, "metadata.annotations must be an object")
        raw_cost = annotations.get(DELETION_COST_ANNOTATION)
        if raw_cost is not None:
            if type(raw_cost) is not str:
                raise _fail(name, position, f"annotation {DELETION_COST_ANNOTATION} must be a string")
            cost = parse_deletion_cost(raw_cost)

    lifecycle_state = ""
    specified_delete = False
    revision = None
    labels = meta.get("labels")
    if labels is not None:
        if not (type(labels) is dict or isinstance(labels, Mapping)):
            raise _fail(name, position, "metadata.labels must be an object")
        lifecycle_state = labels.get(LIFECYCLE_STATE_LABEL, "")
        if type(lifecycle_state) is not str:
            lifecycle_state = _optional_string(
                labels, LIFECYCLE_STATE_LABEL, name, position, f"label {LIFECYCLE_STATE_LABEL}"
            )
        specified_delete = SPECIFIED_DELETE_LABEL in labels
        revision = labels.get(REVISION_HASH_LABEL)
        if revision is not None and type(revision) is not str:
            raise _fail(name, position, f"label {REVISION_HASH_LABEL} must be a string")

    spec = pod.get("spec")
    node_name = ""
    if spec is not None:
        if not (type(spec) is dict or isinstance(spec, Mapping)):
            raise _fail(name, position, "spec must be an object")
        raw = spec.get("nodeName")
        node_name = (
            raw if type(raw) is str else _optional_string(spec, "nodeName", name, position, "spec.nodeName")
        )

    phase = ""
    ready = False
    ready_time: int | None = None
    in_place: str | None = None
    restarts = 0
    status = pod.get("status")
    if status is not None:
        if not (type(status) is dict or isinstance(status, Mapping)):
            raise _fail(name, position, "status must be an object")
        raw = status.get("phase")
        phase = raw if type(raw) is str else _optional_string(status, "phase", name, position, "status.phase")

        conditions = status.get("conditions")
        if conditions is not None:
            if type(conditions) is not list:
                raise _fail(name, position, "status.conditions must be a list")
            seen_ready = False
            for condition in conditions:
                if not (type(condition) is dict or isinstance(condition, Mapping)):
                    index = conditions.index(condition)
                    raise _fail(name, position, f"status.conditions[{index}] must be an object")
                ctype = condition.get("type")
                if ctype == "Ready":
                    if seen_ready:
                        continue
                    seen_ready = True
                    ready = condition.get("status") == "True"
                    if ready:
                        raw = condition.get("lastTransitionTime")
                        if raw is None:
                            ready_time = None
                        elif type(raw) is str and raw in cache:
                            ready_time = cache[raw]
                        elif (
                            type(raw) is str
                            and len(raw) == 20
                            and raw[10] == "T"
                            and raw[19] == "Z"
                            and raw != _GO_ZERO_TEXT
                        ):
                            try:
                                ready_time = ((_fromisoformat(raw) - _EPOCH) // _SECOND) * 1_000_000_000
                            except ValueError:
                                index = conditions.index(condition)
                                field = f"status.conditions[{index}].lastTransitionTime"
                                raise _fail(
                                    name, position, f"{field}: not an RFC 3339 timestamp: {raw!r}"
                                ) from None
                            cache[raw] = ready_time
                        else:
                            field = f"status.conditions[{conditions.index(condition)}].lastTransitionTime"
                            ready_time = _timestamp(reader, raw, name, position, field)
                elif ctype == IN_PLACE_UPDATE_READY and in_place is None:
                    field = f"status.conditions[{conditions.index(condition)}].status"
                    in_place = _optional_string(condition, "status", name, position, field)

        container_statuses = status.get("containerStatuses")
        if container_statuses is not None:
            if type(container_statuses) is not list:
                raise _fail(name, position, "status.containerStatuses must be a list")
            for container in container_statuses:
                if not (type(container) is dict or isinstance(container, Mapping)):
                    index = container_statuses.index(container)
                    raise _fail(name, position, f"status.containerStatuses[{index}] must be an object")
                count = container.get("restartCount")
                if type(count) is not int:
                    if count is None:
                        continue
                    index = container_statuses.index(container)
                    raise _fail(
                        name, position, f"status.containerStatuses[{index}].restartCount must be an integer"
                    )
                if count > restarts:
                    restarts = count

    return _new_facts(
        PodFacts,
        (
            name,
            namespace,
            uid,
            node_name,
            phase,
            deletion is not None,
            ready,
            ready_time,
            restarts,
            created,
            cost,
            lifecycle_state,
            specified_delete,
            revision,
            in_place,
        ),
    )


def read_pods(pods: Iterable[object]) -> list[PodFacts]:
    """`read_pod` over a sequence, sharing one timestamp cache."""
    reader = TimeReader()
    return [read_pod(pod, position, reader) for position, pod in enumerate(pods)]


def pod_list_items(document: object) -> list[object]:
    """The pods of a `PodList`/`List` object or of a bare JSON array.

    This is what `kubectl get pods -o json` prints (a `List` whose items are
    pods) and what people write by hand (an array), so both are accepted; a
    single pod object is accepted too.
    """
    if isinstance(document, list):
        return list(document)
    if isinstance(document, Mapping):
        if "items" in document:
            items = document["items"]
            if items is None:
                return []
            if not isinstance(items, list):
                raise PodFormatError("items must be a list of pods")
            return list(items)
        if document.get("kind") == "Pod" or "metadata" in document:
            return [document]
        kind = document.get("kind")
        raise PodFormatError(
            f"expected a PodList or a JSON array of pods, got {kind or 'an object'} without items"
        )
    raise PodFormatError(f"expected a PodList or a JSON array of pods, got {type(document).__name__}")
