"""Hypothesis strategies for UnitedDeployments, their snapshots and their AdmissionReviews.

Valid UnitedDeployments start from the examples in `manifests/examples/ud-*.yaml`
and `manifests/examples/united/`, then vary what the planner and the policy
branch on: the group and version (Spreadgate's and Kruise's, v1alpha1 and
v1beta1), the template kind (the four, sometimes two at once), replica values
(counts and percentages, min/max), Fixed or Adaptive scheduling with or without
reservation, partitions, and a stored status in either version's shape.

A snapshot is what `spreadgate united plan --state` reads: the UnitedDeployment,
its subset workloads as the planner itself would build them (then given names,
sizes and statuses, sometimes orphaned, relabelled, duplicated or switched to
another kind), their pods in every scheduling state, ControllerRevisions and
nodes. Hostile versions break one or two places of an object with the junk of
`fuzz_strategies` plus what a UnitedDeployment is sensitive to: huge and negative
numbers, malformed percentages, odd unicode keys, nulls and deep nesting.

The case budget follows `fuzz_strategies.examples` (weights out of `TOTAL_WEIGHT`).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from fuzz_strategies import _nested, _paths, examples, json_values, junk, nodes, unicode
from hypothesis import strategies as st

from py_engine.model.ud_constants import (
    KRUISE_REVISION_LABEL,
    KRUISE_SUBSET_NAME_LABEL,
    RESERVED_POD_LABEL,
    REVISION_LABEL,
    SUBSET_NAME_LABEL,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"
NOW = "2026-06-01T12:00:00Z"
NOW_TIME = datetime(2026, 6, 1, 12, tzinfo=UTC)
UD_UID = "ud-uid-fuzz"
UD_API_VERSIONS = (
    "spreadgate.dev/v1beta1",
    "spreadgate.dev/v1alpha1",
    "apps.kruise.io/v1beta1",
    "apps.kruise.io/v1alpha1",
)
TEMPLATE_KEYS = (
    "statefulSetTemplate",
    "advancedStatefulSetTemplate",
    "cloneSetTemplate",
    "deploymentTemplate",
)
WORKLOAD_TYPES = (
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps.kruise.io/v1beta1", "StatefulSet"),
    ("apps.kruise.io/v1beta1", "CloneSet"),
    ("apps.kruise.io/v1alpha1", "CloneSet"),
)


def timeout_for(weight: float, per_case: float = 2.0) -> float:
    """A test's timeout: generous per case, so a larger `SPREADGATE_FUZZ_EXAMPLES` run is
    not cut short, yet a hang is still caught."""
    return max(120.0, examples(weight) * per_case)


def _objects(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if isinstance(doc, dict):
            out.extend(doc.get("items") or [] if doc.get("kind") == "List" else [doc])
    return out


_FILES = sorted(EXAMPLES.glob("ud-*.yaml")) + sorted((EXAMPLES / "united").glob("*.yaml"))
_ALL = [obj for path in _FILES for obj in _objects(path)]
BASE_UDS = [o for o in _ALL if o.get("kind") == "UnitedDeployment"]
"""The example UnitedDeployments (five: two case studies and three plan snapshots)."""
EXAMPLE_OTHERS = [o for o in _ALL if o.get("kind") in ("Deployment", "Pod", "Node")]
"""The example snapshots' workloads, pods and nodes (their own UnitedDeployments' labels)."""


def _time(seconds_before_now: int) -> str:
    return (NOW_TIME - timedelta(seconds=seconds_before_now)).strftime("%Y-%m-%dT%H:%M:%SZ")


times = st.one_of(st.integers(-60, 4000).map(_time), st.sampled_from(["", "bad", "2026-13-01T00:00:00Z"]))
replica_values = st.one_of(st.integers(0, 12), st.sampled_from(["0%", "25%", "50%", "100%", "33%"]))


# ---------------------------------------------------------------- valid UDs


def _subset_numbers(draw: st.DrawFn, subset: dict[str, Any]) -> None:
    """Specified (`replicas`) or capacity (`minReplicas`/`maxReplicas`) values, or none."""
    for key in ("replicas", "minReplicas", "maxReplicas"):
        subset.pop(key, None)
    mode = draw(st.sampled_from(["none", "replicas", "capacity"]))
    if mode == "replicas" and draw(st.booleans()):
        subset["replicas"] = draw(replica_values)
    elif mode == "capacity":
        for key in ("minReplicas", "maxReplicas"):
            if draw(st.booleans()):
                subset[key] = draw(replica_values)


def _status(draw: st.DrawFn, ud: dict[str, Any]) -> dict[str, Any]:
    """A stored status in the object's version shape: subset entries, Schedulable conditions,
    revisions and conditions as an earlier sync left them (or close to it)."""
    names = [s.get("name") for s in ud["spec"]["topology"].get("subsets") or []] + ["gone"]
    entries = []
    for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)):
        entry: dict[str, Any] = {
            "name": name,
            "replicas": draw(st.integers(0, 6)),
            "readyReplicas": draw(st.integers(0, 6)),
            "partition": draw(st.integers(0, 3)),
        }
        if draw(st.booleans()):
            entry["conditions"] = [
                {
                    "type": "Schedulable",
                    "status": draw(st.sampled_from(["True", "False"])),
                    "reason": draw(st.sampled_from(["reschedule", "recover", "created", ""])),
                    "lastTransitionTime": draw(times),
                }
            ]
        entries.append(entry)
    revision = draw(st.sampled_from([f"{ud['metadata']['name']}-old", "", "x"]))
    status: dict[str, Any] = {
        "observedGeneration": draw(st.integers(0, 3)),
        "currentRevision": revision,
        "collisionCount": draw(st.integers(0, 2)),
        "conditions": [
            {
                "type": "UnitedDeploymentUpdated",
                "status": draw(st.sampled_from(["True", "False"])),
                "lastTransitionTime": draw(times),
            }
        ],
    }
    if ud["apiVersion"].endswith("/v1alpha1"):
        status["subsetReplicas"] = {e["name"]: e["replicas"] for e in entries}
        status["updateStatus"] = {
            "updatedRevision": revision,
            "currentPartitions": {e["name"]: e["partition"] for e in entries},
        }
    else:
        status["updatedRevision"] = revision
        status["subsetStatuses"] = entries
    return status


@st.composite
def uniteddeployments(draw: st.DrawFn) -> dict[str, Any]:
    """A valid UnitedDeployment: an example varied where the planner and the policy branch."""
    ud = copy.deepcopy(draw(st.sampled_from(BASE_UDS)))
    ud["apiVersion"] = draw(st.sampled_from(UD_API_VERSIONS))
    ud["metadata"] = {
        **ud["metadata"],
        "namespace": "default",
        "uid": UD_UID,
        "generation": draw(st.integers(1, 4)),
    }
    ud.pop("status", None)
    spec = ud["spec"]
    template = spec["template"]
    if draw(st.booleans()):  # another template kind (the body stays: a pod template with a selector)
        body = template.pop(next(iter(template)))
        template[draw(st.sampled_from(TEMPLATE_KEYS))] = body
        if (
            draw(st.integers(0, 4)) == 0
        ):  # a stored object with two templates: the first in Kruise's order wins
            template[draw(st.sampled_from(TEMPLATE_KEYS))] = copy.deepcopy(body)
    if draw(st.booleans()):
        spec["replicas"] = draw(st.integers(0, 12))
    elif draw(st.integers(0, 4)) == 0:
        spec.pop("replicas", None)
    subsets = spec["topology"]["subsets"]
    if draw(st.booleans()):
        for subset in subsets:
            _subset_numbers(draw, subset)
    if subsets and draw(st.integers(0, 5)) == 0:
        del subsets[draw(st.integers(0, len(subsets) - 1))]
    if draw(st.booleans()):
        strategy: dict[str, Any] = {"type": draw(st.sampled_from(["Fixed", "Adaptive", "Adaptive", ""]))}
        if draw(st.booleans()):
            strategy["adaptive"] = {
                "rescheduleCriticalSeconds": draw(st.integers(0, 120)),
                "unschedulableDuration": draw(st.integers(0, 600)),
                "reserveUnschedulablePods": draw(st.booleans()),
            }
        spec["topology"]["scheduleStrategy"] = strategy
    if draw(st.booleans()):
        names = [s["name"] for s in subsets]
        spec["updateStrategy"] = {
            "type": "Manual",
            "manualUpdate": {
                "partitions": {
                    n: draw(st.integers(0, 6)) for n in draw(st.lists(st.sampled_from(names), unique=True))
                }
                if names
                else {}
            },
        }
    if draw(st.booleans()):
        spec["revisionHistoryLimit"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        ud["status"] = _status(draw, ud)
    return ud


# ------------------------------------------------------------- hostility

huge_numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from(
        [
            -1,
            -(2**31),
            2**31,
            2**63,
            1e308,
            -1e308,
            0.5,
            3.0,
            -0.0,
            5e-324,
            10**400,
            -(10**309),
            float("nan"),
            float("inf"),
            float("-inf"),
        ]
    ),
)  # json.dumps writes NaN, Infinity
"""Numbers at and beyond every limit: int32, int64, float64, and what JSON has no spelling for."""
odd_strings = st.sampled_from(
    [
        "",
        "-1%",
        "101%",
        "1e3",
        "50 %",
        "%",
        "+5%",
        "٣%",
        "NaN",
        "Infinity",
        "null",
        "\u0000",
        "a" * 64,
        "ünïcødé",
        "\U0001f600",
        "-",
        "A",
        "replace",
        "delete",
        "\ud800",
        "a\udfffb",
    ]
)  # lone surrogates: json.dumps escapes them ("\ud800")
odd_keys = st.one_of(
    unicode,
    st.sampled_from(
        [
            "",
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$deleteFromPrimitiveList/finalizers",
            "\u0000",
            "\U0001f600",
            "\udc80",
            "a" * 300,
            "spec",
            "metadata",
            "subsets",
            "-1",
        ]
    ),
)
ud_junk = st.one_of(
    junk,
    huge_numbers,
    odd_strings,
    st.none(),
    st.dictionaries(odd_keys, json_values, min_size=1, max_size=4),
    st.integers(1, 60).map(_nested),
)
"""What replaces a field: fuzz_strategies' junk, extreme numbers, malformed percentages and
names, null, maps with odd keys, and nesting (shallow enough to pass the webhook's limit, or not)."""


@st.composite
def ud_corrupted(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A copy of a valid object with one place broken: a value replaced by `ud_junk` or
    deleted, an odd key added to a map, or a value wrapped in a list or a map.
    Every choice is a Hypothesis draw, so failures replay and shrink."""
    value = copy.deepcopy(draw(valid))
    paths = _paths(value, limit=5000)
    path = paths[draw(st.integers(0, len(paths) - 1))]
    if not path:
        return draw(ud_junk)
    parent: Any = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = draw(st.integers(0, 9))
    if action < 2:
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    elif action == 2 and isinstance(parent[key], dict):
        parent[key][draw(odd_keys)] = draw(st.one_of(json_values, ud_junk))
    elif action == 3:
        parent[key] = draw(st.sampled_from([lambda v: [v], lambda v: {"k": v}]))(parent[key])
    else:
        parent[key] = draw(ud_junk)
    return value


def ud_hostile(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Valid objects (two cases in five, so the deep paths are reached), the same broken at
    one or two places."""
    once = ud_corrupted(valid)
    return st.one_of(valid, valid, once, once, ud_corrupted(once))


hostile_uds = ud_hostile(uniteddeployments())


# -------------------------------------------------------------- snapshots


def _planned_workloads(ud: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects the planner would create for `ud` with nothing existing (revision and
    workloads); none when it cannot plan (the fuzz tests then find out why)."""
    from py_engine.uniteddeployment.controller.plan import plan
    from py_engine.uniteddeployment.controller.state import state_from_objects

    try:
        result = plan(state_from_objects([ud]), NOW_TIME)
    except Exception:  # a crash here is the tests' to report, not the strategy's
        return []
    return [copy.deepcopy(o) for o in result.create]


def _pod(draw: st.DrawFn, workload: dict[str, Any], index: int) -> dict[str, Any]:
    template = workload.get("spec", {}).get("template", {})
    labels = dict(template.get("metadata", {}).get("labels") or {})
    if draw(st.integers(0, 3)) == 0:
        labels[REVISION_LABEL] = draw(st.sampled_from(["web-old", "", "x"]))
    if draw(st.integers(0, 5)) == 0:  # a pod Kruise created
        for ours, kruise in (
            (SUBSET_NAME_LABEL, KRUISE_SUBSET_NAME_LABEL),
            (REVISION_LABEL, KRUISE_REVISION_LABEL),
        ):
            if ours in labels:
                labels[kruise] = labels.pop(ours)
    if draw(st.booleans()):
        labels[RESERVED_POD_LABEL] = draw(st.sampled_from(["true", "false", "x"]))
    meta: dict[str, Any] = {
        "name": f"{workload['metadata']['name']}-{index}",
        "namespace": "default",
        "labels": labels,
        "creationTimestamp": draw(times),
    }
    phase = draw(
        st.sampled_from(["Running", "Running", "Pending", "Pending", "Succeeded", "Failed", "Unknown"])
    )
    conditions: list[dict[str, Any]] = []
    if draw(st.booleans()):
        conditions.append(
            {
                "type": "Ready",
                "status": draw(st.sampled_from(["True", "False"])),
                "lastTransitionTime": draw(times),
            }
        )
    if phase == "Pending" and draw(st.booleans()):
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "lastTransitionTime": draw(times),
            }
        )
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
        "status": {"phase": phase, "conditions": conditions},
    }
    if phase != "Pending" and draw(st.booleans()):
        pod["spec"]["nodeName"] = draw(st.sampled_from(["n-a-1", "n-b-1", "ghost"]))
    if draw(st.integers(0, 9)) == 0:
        meta["deletionTimestamp"] = draw(times)
    return pod


def _existing(draw: st.DrawFn, planned: dict[str, Any], index: int) -> dict[str, Any]:
    """A planned workload as the cluster holds it after creation: named, sized, with a status;
    sometimes orphaned, of another kind, or on another subset."""
    obj = copy.deepcopy(planned)
    meta = obj["metadata"]
    meta["name"] = f"{meta.pop('generateName', 'w-')}{index}f"
    meta["uid"] = f"w-uid-{index}"
    spec = obj.setdefault("spec", {})
    spec["replicas"] = draw(st.integers(0, 8))
    replicas = spec["replicas"]
    ready = draw(st.integers(0, replicas))
    obj["status"] = {
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": draw(st.integers(0, replicas)),
    }
    change = draw(st.integers(0, 11))
    if change == 0:
        meta.pop("ownerReferences", None)  # an orphan: adopted
    elif change == 1:
        obj["apiVersion"], obj["kind"] = draw(st.sampled_from(WORKLOAD_TYPES))  # the template switched kind
    elif change == 2:
        meta["labels"][SUBSET_NAME_LABEL] = draw(st.sampled_from(["gone", "", "ON-PREM"]))
    elif change == 3:
        meta["labels"].pop(SUBSET_NAME_LABEL, None)
    elif change == 4:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps.kruise.io/v1beta1",
                "kind": "UnitedDeployment",
                "name": "other",
                "uid": "other-uid",
                "controller": True,
            }
        ]
    elif change == 5 and obj["kind"] == "StatefulSet":
        spec["updateStrategy"] = draw(
            st.sampled_from(
                [{"type": "OnDelete"}, {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}]
            )
        )
    elif change == 6 and obj["kind"] == "CloneSet":
        spec.setdefault("updateStrategy", {})["partition"] = draw(st.sampled_from(["50%", 1, "x%"]))
    return obj


@st.composite
def snapshots(draw: st.DrawFn, ud_objects: st.SearchStrategy[Any] | None = None) -> list[Any]:
    """A snapshot for `spreadgate united plan`: one UnitedDeployment (valid by default), its
    subset workloads and pods, ControllerRevisions, nodes, and sometimes unrelated objects."""
    valid = draw(uniteddeployments())
    ud = draw(ud_objects) if ud_objects is not None else valid
    planned = _planned_workloads(valid)
    revisions = [o for o in planned if o.get("kind") == "ControllerRevision"]
    workloads = [o for o in planned if o.get("kind") != "ControllerRevision"]
    out: list[Any] = [ud]
    for index, workload in enumerate(workloads):
        for copy_index in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):  # missing, present, duplicated
            existing = _existing(draw, workload, 10 * index + copy_index)
            out.append(existing)
            out.extend(_pod(draw, existing, k) for k in range(draw(st.integers(0, 4))))
    for revision in revisions:
        if draw(st.booleans()):
            out.append(revision)
        if draw(st.booleans()):  # an older revision, or the same name with other data (a collision)
            older = copy.deepcopy(revision)
            older["revision"] = draw(st.integers(0, 3))
            if draw(st.booleans()):
                older["metadata"]["name"] = f"{valid['metadata']['name']}-old"
            older["data"] = {
                "spec": {"template": {"deploymentTemplate": {"spec": {"replicas": 1}}, "$patch": "replace"}}
            }
            out.append(older)
    if draw(st.booleans()):
        out.extend(nodes())
    if draw(st.integers(0, 3)) == 0:
        out.extend(copy.deepcopy(draw(st.lists(st.sampled_from(EXAMPLE_OTHERS), max_size=4))))
    return out


@st.composite
def hostile_snapshots(draw: st.DrawFn) -> list[Any]:
    """A snapshot with a hostile UnitedDeployment and, each with chance one in four, its other
    objects broken too; sometimes arbitrary JSON among them."""
    objects = draw(snapshots(hostile_uds))
    out: list[Any] = [objects[0]]
    for obj in objects[1:]:
        out.append(draw(ud_corrupted(st.just(obj))) if draw(st.integers(0, 3)) == 0 else obj)
    if draw(st.integers(0, 5)) == 0:
        out.insert(draw(st.integers(0, len(out))), draw(json_values))
    return out


# ------------------------------------------------------- admission reviews


@st.composite
def ud_reviews(draw: st.DrawFn, objects: st.SearchStrategy[Any] = hostile_uds) -> dict[str, Any]:
    """A well-formed UnitedDeployment CREATE or UPDATE review (sometimes another operation)
    around `objects`; an UPDATE's old object is a variant of the new one or another draw."""
    operation = draw(st.sampled_from(["CREATE", "CREATE", "UPDATE", "UPDATE", "DELETE", "CONNECT"]))
    obj = draw(objects)
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    group, _, version = api_version.rpartition("/") if isinstance(api_version, str) else ("", "", "")
    request: dict[str, Any] = {
        "uid": draw(st.one_of(st.uuids().map(str), unicode.filter(bool))),
        "namespace": "default",
        "operation": operation,
        "dryRun": draw(st.booleans()),
        "kind": {"group": group, "version": version, "kind": "UnitedDeployment"},
        "resource": {"group": group, "version": version, "resource": "uniteddeployments"},
        "object": obj,
    }
    if operation == "UPDATE":
        request["oldObject"] = draw(
            st.one_of(ud_corrupted(st.just(obj)) if isinstance(obj, dict) else objects, objects, st.just(obj))
        )
    elif operation == "DELETE":
        request["oldObject"], request["object"] = obj, None
    return {
        "apiVersion": draw(st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])),
        "kind": "AdmissionReview",
        "request": request,
    }
