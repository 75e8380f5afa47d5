"""Hypothesis strategies for AdmissionReviews, Pods and WorkloadSpreads, valid and hostile.

Valid objects are built the way the product meets them (a ReplicaSet-owned
pod, a spread of ordered subsets with caps, selectors, tolerations and
patches). Hostile ones start from a valid object and break it: a field
replaced by a wrong type, deleted, made huge, nested thousands of levels
deep, or filled with arbitrary unicode; or they are arbitrary JSON outright.
Everything stays JSON-encodable (the webhook fuzz also sends raw bytes).

`examples(weight)` is the number of cases per test: `SPREADGATE_FUZZ_EXAMPLES`
is the total for the whole fuzz run (default 390, quick enough for CI; the
full run sets 100000), shared between the tests by their weights. Without the
variable the cases are derandomized (a fixed sequence); with it, random.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from benchmarks.kube_objects import controller_ref, workload

F = TypeVar("F", bound=Callable[..., Any])
TOTAL_WEIGHT = 17.0
"""Sum of the weights passed to `examples` by the fuzz tests (11.5 for the WorkloadSpread paths, 1 for
the stored objects of test_stored_object_types.py, 4.5 for the UnitedDeployment ones in
test_fuzz_uniteddeployment.py)."""


DERANDOMIZE = "SPREADGATE_FUZZ_EXAMPLES" not in os.environ
"""The default (CI) run replays a fixed sequence of cases, so it is reproducible and never fails
by chance; a run with SPREADGATE_FUZZ_EXAMPLES set draws new cases every time."""


def examples(weight: float) -> int:
    total = int(os.environ.get("SPREADGATE_FUZZ_EXAMPLES", "390"))
    return max(10, int(total * weight / TOTAL_WEIGHT))


def fuzz_settings(weight: float) -> Callable[[F], F]:
    """Per-test settings: no deadline (shared CI machines), slow/large inputs allowed."""
    chosen: Callable[[F], F] = settings(
        max_examples=examples(weight),
        deadline=None,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )
    return chosen


# ------------------------------------------------------------------ scalars

names = st.sampled_from(["web", "a", "b", "c", "zone-a", "web-h", "default", "x" * 63, "ä", ""])
label_values = st.one_of(names, st.text(max_size=20))
unicode = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)  # JSON-encodable
huge_text = st.integers(1_000, 200_000).map(lambda n: "\U0001d501" * n)  # 4-byte UTF-8 code points
numbers = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False))
scalars = st.one_of(st.none(), st.booleans(), numbers, unicode)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(unicode, inner, max_size=5)),
    max_leaves=20,
)
junk = st.one_of(
    json_values,
    huge_text,
    st.integers(1, 250).map(lambda d: _nested(d)),
    st.lists(st.integers(), min_size=1000, max_size=5000),
)


def _nested(depth: int) -> Any:
    """Alternating dicts and lists `depth` levels deep (kept within what deepcopy can walk;
    the raw-body test sends far deeper documents as bytes)."""
    value: Any = "bottom"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


# ------------------------------------------------------------ valid objects

RS_UID = "rs-uid-1"
DEP_UID = "dep-uid-1"
ZONE = "topology.kubernetes.io/zone"

caps = st.one_of(st.none(), st.integers(0, 50), st.sampled_from(["10%", "50%", "100%", "0%", "33%"]))
node_term = st.fixed_dictionaries(
    {
        "matchExpressions": st.lists(
            st.fixed_dictionaries(
                {
                    "key": st.sampled_from([ZONE, "kubernetes.io/arch", "pool"]),
                    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt"]),
                    "values": st.lists(st.sampled_from(["a", "b", "c", "amd64", "1"]), max_size=3),
                }
            ),
            max_size=3,
        )
    }
)
tolerations = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["spot", "gpu"]),
            "operator": st.sampled_from(["Exists", "Equal"]),
            "effect": st.sampled_from(["NoSchedule", "NoExecute", ""]),
        }
    ),
    max_size=2,
)


@st.composite
def subsets(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 5))):
        subset: dict[str, Any] = {
            "name": draw(st.sampled_from(["a", "b", "c", "d", "e"])) if draw(st.booleans()) else f"s{i}"
        }
        cap = draw(caps)
        if cap is not None:
            subset["maxReplicas"] = cap
        if draw(st.booleans()):
            subset["requiredNodeSelectorTerm"] = draw(node_term)
        if draw(st.booleans()):
            subset["preferredNodeSelectorTerms"] = [
                {"weight": draw(st.integers(-5, 120)), "preference": draw(node_term)}
            ]
        if draw(st.booleans()):
            subset["tolerations"] = draw(tolerations)
        if draw(st.booleans()):
            subset["patch"] = {
                "metadata": {"labels": {"subset": subset["name"]}, "annotations": {"x": draw(label_values)}}
            }
        out.append(subset)
    return out


@st.composite
def workload_spreads(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "targetRef": {
            "apiVersion": "apps/v1",
            "kind": draw(
                st.sampled_from(["Deployment"] * 6 + ["ReplicaSet", "StatefulSet", "Job", "CloneSet"])
            ),
            "name": "web",
        },
        "subsets": draw(subsets()),
    }
    if draw(st.booleans()):
        strategy: dict[str, Any] = {"type": draw(st.sampled_from(["Fixed", "Adaptive", "Other"]))}
        if draw(st.booleans()):
            strategy["adaptive"] = {
                "rescheduleCriticalSeconds": draw(st.integers(-10, 600)),
                "disableSimulationSchedule": draw(st.booleans()),
            }
        spec["scheduleStrategy"] = strategy
    if draw(st.booleans()):
        spec["targetFilter"] = {"selector": {"matchLabels": {"app": "web"}}}
    obj: dict[str, Any] = {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "default", "generation": draw(st.integers(1, 5))},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["status"] = {
            "observedGeneration": 1,
            "versionedSubsetStatuses": {
                "h": [
                    {
                        "name": s["name"],
                        "replicas": draw(st.integers(0, 5)),
                        "missingReplicas": draw(st.integers(-1, 5)),
                        "creatingPods": {"p-1": "2024-06-01T11:59:00Z"} if draw(st.booleans()) else {},
                    }
                    for s in spec["subsets"]
                ]
            },
        }
    return obj


@st.composite
def pods(draw: st.DrawFn, index: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "namespace": "default",
        "labels": {"app": "web", "pod-template-hash": "h"},
        "ownerReferences": [controller_ref("ReplicaSet", "web-h", RS_UID)],
    }
    if draw(st.booleans()):
        meta["name"] = f"web-h-{index}{draw(st.sampled_from(['', 'x', '0']))}"
    else:
        meta["generateName"] = "web-h-"
    if draw(st.booleans()):
        meta["uid"] = f"pod-uid-{index}"
        meta["creationTimestamp"] = draw(
            st.sampled_from(["2024-06-01T11:00:00Z", "2024-05-01T00:00:00Z", "bad"])
        )
    if draw(st.booleans()):
        subset = draw(st.sampled_from(["a", "b", "s0", "zz"]))
        meta["annotations"] = {
            "spreadgate.dev/matched-workloadspread": f'{{"name":"ws","subset":"{subset}"}}',
            "controller.kubernetes.io/pod-deletion-cost": draw(st.sampled_from(["0", "7", "-3", "x"])),
        }
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "resources": {
                    "requests": {"cpu": draw(st.sampled_from(["100m", "1", "x"])), "memory": "64Mi"}
                },
            }
        ]
    }
    if draw(st.booleans()):
        spec["nodeName"] = draw(st.sampled_from(["n-a-1", "n-b-1", "n-c-1", "ghost"]))
    if draw(st.booleans()):
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [draw(node_term)]}
            }
        }
    if draw(st.booleans()):
        spec["tolerations"] = draw(tolerations)
    status: dict[str, Any] = {
        "phase": draw(st.sampled_from(["Running", "Pending"] * 3 + ["Succeeded", "Failed", "Unknown"]))
    }
    if draw(st.booleans()):
        status["conditions"] = [
            {
                "type": "Ready",
                "status": draw(st.sampled_from(["True", "False"])),
                "lastTransitionTime": "2024-06-01T11:00:00Z",
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def nodes() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n-{z}-1", "labels": {ZONE: z, "kubernetes.io/hostname": f"n-{z}-1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for z in "abc"
    ]


def owners(replicas: int) -> list[dict[str, Any]]:
    dep = workload("Deployment", "web", replicas=replicas, namespace="default", uid=DEP_UID, generation=1)
    dep["status"] = {"observedGeneration": 1}
    rs = workload(
        "ReplicaSet",
        "web-h",
        replicas=replicas,
        app="web",
        namespace="default",
        uid=RS_UID,
        labels={"app": "web", "pod-template-hash": "h"},
        ownerReferences=[controller_ref("Deployment", "web", DEP_UID)],
    )
    rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = "h"
    return [dep, rs]


# ----------------------------------------------------------------- hostility


def _paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 400) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (bounded), the root included."""
    out = [prefix]
    stack = [(prefix, value)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        children = (
            node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        )
        for key, child in children:
            out.append((*path, key))
            stack.append(((*path, key), child))
    return out


@st.composite
def corrupted(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A copy of a valid object with one field replaced by junk or deleted, or the whole replaced.

    Every choice is a Hypothesis draw (no side random generator), so failures replay and shrink.
    """
    value = copy.deepcopy(draw(valid))
    paths = _paths(value)
    path = paths[draw(st.integers(0, len(paths) - 1))]
    replacement = draw(junk)
    if not path:
        return replacement
    parent: Any = value
    for key in path[:-1]:
        parent = parent[key]
    if draw(st.integers(0, 9)) < 3:
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    else:
        parent[path[-1]] = replacement
    return value


def hostile(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Valid objects (half the cases, so the deep paths are reached), the same broken at one
    or two places, or arbitrary JSON."""
    once = corrupted(valid)
    twice = corrupted(once)
    return st.one_of(valid, valid, valid, once, twice, json_values)


@st.composite
def admission_reviews(
    draw: st.DrawFn,
    pod_objects: st.SearchStrategy[Any] | None = None,
    spread_objects: st.SearchStrategy[Any] | None = None,
) -> dict[str, Any]:
    """A well-formed pod CREATE/DELETE/eviction or WorkloadSpread review around the objects drawn
    (valid ones by default)."""
    pods_ = pod_objects if pod_objects is not None else pods()
    spreads_ = spread_objects if spread_objects is not None else workload_spreads()
    kind = draw(st.sampled_from(["pod-create"] * 3 + ["pod-delete", "eviction", "spread"]))
    request: dict[str, Any] = {
        "uid": draw(st.one_of(st.uuids().map(str), unicode.filter(bool))),
        "namespace": "default",
        "dryRun": draw(st.booleans()),
    }
    if kind == "pod-create":
        request |= {
            "operation": "CREATE",
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": draw(pods_),
        }
    elif kind == "pod-delete":
        request |= {
            "operation": "DELETE",
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "web-h-0",
            "oldObject": draw(pods_),
        }
    elif kind == "eviction":
        request |= {
            "operation": "CREATE",
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": "eviction",
            "name": "web-h-0",
            "object": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-h-0"}},
        }
    else:
        request |= {
            "operation": draw(st.sampled_from(["CREATE", "UPDATE"])),
            "resource": {"group": "spreadgate.dev", "version": "v1alpha1", "resource": "workloadspreads"},
            "object": draw(spreads_),
        }
        if request["operation"] == "UPDATE":
            request["oldObject"] = draw(spreads_)
    return {
        "apiVersion": draw(st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])),
        "kind": "AdmissionReview",
        "request": request,
    }


hostile_pods = hostile(pods())
hostile_spreads = hostile(workload_spreads())
hostile_reviews = st.one_of(admission_reviews(hostile_pods, hostile_spreads), hostile(admission_reviews()))
"""Well-formed envelopes around hostile objects (the service's paths), or envelopes broken anywhere."""
