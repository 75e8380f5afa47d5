"""Every field `read_pod` reads and every fault it reports, pinned literally (issue 29).

Each malformed pod names itself and its input position (`pod 'p' (item 3): ...`)
and the offending field path; the expected strings below are written out by hand,
not produced by the reader. Accepted pods are checked field by field against
`PodFacts` built from literals. Mappings that are not dicts (read-only views) must
be accepted wherever an object is expected, as JSON decoders other than `json`
may produce them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from py_engine.scaledown import PodFacts, PodFormatError, pod_list_items, read_pod, read_pods
from py_engine.scaledown.pods import describe_item
from py_engine.scaledown.timekeys import TimeReader

COST = "controller.kubernetes.io/pod-deletion-cost"
LIFECYCLE = "lifecycle.apps.kruise.io/state"
SPECIFIED = "apps.kruise.io/specified-delete"
REVISION = "controller-revision-hash"
T2024 = "2024-01-01T00:00:00Z"
T2024_NS = 1_704_067_200_000_000_000
LTT = "pod 'p' (item 3): status.conditions"


def pod(**parts: Any) -> dict[str, Any]:
    """A pod named `p` with extra metadata fields and top-level parts merged in."""
    meta = {"name": "p", **parts.pop("meta", {})}
    return {"metadata": meta, **parts}


def ready_pod(when: object) -> dict[str, Any]:
    """Pod `p` whose one condition is Ready=True, last changed at `when` (any JSON value)."""
    return pod(status={"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": when}]})


def faults(position: int, document: object) -> str:
    with pytest.raises(PodFormatError) as caught:
        read_pod(document, position)
    return str(caught.value)


MALFORMED: list[tuple[str, object, str]] = [
    ("not-an-object", ["x"], "item 3: expected a pod object, got list"),
    ("no-metadata", {"spec": {}}, "item 3: missing metadata (is this a pod?)"),
    ("metadata-list", {"metadata": []}, "item 3: missing metadata (is this a pod?)"),
    (
        "kind-node",
        {"kind": "Node", "metadata": {"name": "p"}},
        "pod 'p' (item 3): kind is 'Node', expected a Pod",
    ),
    (
        "kind-lower",
        {"kind": "pod", "metadata": {"name": "p"}},
        "pod 'p' (item 3): kind is 'pod', expected a Pod",
    ),
    ("kind-no-name", {"kind": "Service", "metadata": {}}, "item 3: kind is 'Service', expected a Pod"),
    ("name-missing", {"metadata": {}}, "item 3: metadata.name is missing or not a string"),
    ("name-int", {"metadata": {"name": 1}}, "item 3: metadata.name is missing or not a string"),
    (
        "namespace-int",
        pod(meta={"namespace": 7}),
        "pod 'p' (item 3): metadata.namespace must be a string, got int",
    ),
    ("uid-list", pod(meta={"uid": []}), "pod 'p' (item 3): metadata.uid must be a string, got list"),
    (
        "created-bad",
        pod(meta={"creationTimestamp": "2024-13-01T00:00:00Z"}),
        "pod 'p' (item 3): metadata.creationTimestamp: not an RFC 3339 timestamp: '2024-13-01T00:00:00Z'",
    ),
    (
        "created-int",
        pod(meta={"creationTimestamp": 5}),
        "pod 'p' (item 3): metadata.creationTimestamp: timestamp must be an RFC 3339 string or null, got 5",
    ),
    (
        "created-long-bad",
        pod(meta={"creationTimestamp": "yesterday at noon"}),
        "pod 'p' (item 3): metadata.creationTimestamp: not an RFC 3339 timestamp: 'yesterday at noon'",
    ),
    (
        "deleted-bad",
        pod(meta={"deletionTimestamp": "soon"}),
        "pod 'p' (item 3): metadata.deletionTimestamp: not an RFC 3339 timestamp: 'soon'",
    ),
    (
        "deleted-int",
        pod(meta={"deletionTimestamp": 9}),
        "pod 'p' (item 3): metadata.deletionTimestamp: timestamp must be an RFC 3339 string or null, got 9",
    ),
    (
        "annotations-list",
        pod(meta={"annotations": []}),
        "pod 'p' (item 3): metadata.annotations must be an object",
    ),
    (
        "cost-int",
        pod(meta={"annotations": {COST: 5}}),
        f"pod 'p' (item 3): annotation {COST} must be a string",
    ),
    ("labels-list", pod(meta={"labels": ["a"]}), "pod 'p' (item 3): metadata.labels must be an object"),
    (
        "lifecycle-int",
        pod(meta={"labels": {LIFECYCLE: 1}}),
        f"pod 'p' (item 3): label {LIFECYCLE} must be a string, got int",
    ),
    (
        "revision-int",
        pod(meta={"labels": {REVISION: 2}}),
        f"pod 'p' (item 3): label {REVISION} must be a string",
    ),
    ("spec-list", pod(spec=[]), "pod 'p' (item 3): spec must be an object"),
    ("node-int", pod(spec={"nodeName": 4}), "pod 'p' (item 3): spec.nodeName must be a string, got int"),
    ("status-str", pod(status="Running"), "pod 'p' (item 3): status must be an object"),
    ("phase-int", pod(status={"phase": 1}), "pod 'p' (item 3): status.phase must be a string, got int"),
    ("conditions-dict", pod(status={"conditions": {}}), "pod 'p' (item 3): status.conditions must be a list"),
    (
        "condition-str",
        pod(status={"conditions": [{"type": "PodScheduled"}, "Ready"]}),
        "pod 'p' (item 3): status.conditions[1] must be an object",
    ),
    (
        "ready-time-bad",
        pod(
            status={
                "conditions": [
                    {"type": "A"},
                    {"type": "Ready", "status": "True", "lastTransitionTime": T2024[:-1] + "X"},
                ]
            }
        ),
        LTT + "[1].lastTransitionTime: not an RFC 3339 timestamp: '2024-01-01T00:00:00X'",
    ),
    (
        "ready-time-canonical-bad",
        pod(
            status={
                "conditions": [
                    {"type": "A"},
                    {"type": "Ready", "status": "True", "lastTransitionTime": "2024-02-30T00:00:00Z"},
                ]
            }
        ),
        LTT + "[1].lastTransitionTime: not an RFC 3339 timestamp: '2024-02-30T00:00:00Z'",
    ),
    (
        "ready-time-int",
        ready_pod(1),
        LTT + "[0].lastTransitionTime: timestamp must be an RFC 3339 string or null, got 1",
    ),
    (
        "in-place-status-int",
        pod(status={"conditions": [{"type": "Ready"}, {"type": "InPlaceUpdateReady", "status": 1}]}),
        "pod 'p' (item 3): status.conditions[1].status must be a string, got int",
    ),
    (
        "containers-dict",
        pod(status={"containerStatuses": {}}),
        "pod 'p' (item 3): status.containerStatuses must be a list",
    ),
    (
        "container-str",
        pod(status={"containerStatuses": [{"restartCount": 1}, "c"]}),
        "pod 'p' (item 3): status.containerStatuses[1] must be an object",
    ),
    (
        "restart-str",
        pod(status={"containerStatuses": [{"restartCount": 1}, {"restartCount": "2"}]}),
        "pod 'p' (item 3): status.containerStatuses[1].restartCount must be an integer",
    ),
]


@pytest.mark.parametrize(
    ("document", "message"), [(d, m) for _, d, m in MALFORMED], ids=[i for i, _, _ in MALFORMED]
)
def test_read_pod_fault_names_item_and_field(document: object, message: str) -> None:
    assert faults(3, document) == message


def facts(**changed: Any) -> PodFacts:
    """PodFacts of the bare pod `p`, with some fields changed."""
    base = PodFacts(
        name="p",
        namespace="",
        uid="",
        node_name="",
        phase="",
        terminating=False,
        ready=False,
        ready_time=None,
        restarts=0,
        created=None,
        cost=0,
        lifecycle_state="",
        specified_delete=False,
        revision=None,
        in_place_update_ready=None,
    )
    return base._replace(**changed)


ACCEPTED: list[tuple[str, object, PodFacts]] = [
    ("bare", pod(), facts()),
    ("kind-pod", {"kind": "Pod", "metadata": {"name": "p"}}, facts()),
    (
        "metadata-strings",
        pod(meta={"namespace": "ns", "uid": "u-1", "creationTimestamp": T2024}),
        facts(namespace="ns", uid="u-1", created=T2024_NS),
    ),
    ("null-strings", pod(meta={"namespace": None, "uid": None}), facts()),
    ("created-null", pod(meta={"creationTimestamp": None}), facts()),
    # Go's zero time in every RFC 3339 spelling is the zero time (None), never year 1.
    ("created-zero", pod(meta={"creationTimestamp": "0001-01-01T00:00:00Z"}), facts()),
    ("created-zero-lower-t", pod(meta={"creationTimestamp": "0001-01-01t00:00:00Z"}), facts()),
    ("created-zero-space", pod(meta={"creationTimestamp": "0001-01-01 00:00:00Z"}), facts()),
    ("created-zero-lower-z", pod(meta={"creationTimestamp": "0001-01-01T00:00:00z"}), facts()),
    (
        "created-fraction",
        pod(meta={"creationTimestamp": "2024-01-01T00:00:00.5Z"}),
        facts(created=T2024_NS + 500_000_000),
    ),
    ("created-offset", pod(meta={"creationTimestamp": "2024-01-01T01:00:00+01:00"}), facts(created=T2024_NS)),
    ("deleting", pod(meta={"deletionTimestamp": T2024}), facts(terminating=True)),
    ("annotations-empty", pod(meta={"annotations": {"other": "x"}}), facts()),
    ("cost", pod(meta={"annotations": {COST: "-7"}}), facts(cost=-7)),
    ("cost-null", pod(meta={"annotations": {COST: None}}), facts()),
    (
        "labels",
        pod(meta={"labels": {LIFECYCLE: "PreparingDelete", SPECIFIED: "", REVISION: "rev-1"}}),
        facts(lifecycle_state="PreparingDelete", specified_delete=True, revision="rev-1"),
    ),
    ("labels-null-lifecycle", pod(meta={"labels": {LIFECYCLE: None}}), facts()),
    ("labels-other", pod(meta={"labels": {"app": "x"}}), facts()),
    ("node", pod(spec={"nodeName": "n1"}), facts(node_name="n1")),
    ("node-null", pod(spec={"nodeName": None}), facts()),
    ("phase", pod(status={"phase": "Running"}), facts(phase="Running")),
    ("phase-null", pod(status={"phase": None}), facts()),
    ("ready", ready_pod(T2024), facts(ready=True, ready_time=T2024_NS)),
    ("ready-zero-time", ready_pod("0001-01-01T00:00:00Z"), facts(ready=True)),
    ("ready-zero-time-lower", ready_pod("0001-01-01t00:00:00z"), facts(ready=True)),
    ("ready-zero-time-lower-t", ready_pod("0001-01-01t00:00:00Z"), facts(ready=True)),
    ("ready-zero-time-lower-z", ready_pod("0001-01-01T00:00:00z"), facts(ready=True)),
    ("ready-zero-time-space", ready_pod("0001-01-01 00:00:00Z"), facts(ready=True)),
    ("ready-null-time", ready_pod(None), facts(ready=True)),
    ("ready-offset-time", ready_pod("2024-01-01T02:00:00+02:00"), facts(ready=True, ready_time=T2024_NS)),
    # The first Ready condition decides (podutil.IsPodReady); later ones are not even read.
    (
        "first-ready-decides",
        pod(
            status={
                "conditions": [
                    {"type": "Ready", "status": "False"},
                    {"type": "Ready", "status": "True", "lastTransitionTime": "bad"},
                ]
            }
        ),
        facts(),
    ),
    (
        "not-ready-time-unread",
        pod(status={"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": 5}]}),
        facts(),
    ),
    (
        "in-place",
        pod(
            status={
                "conditions": [
                    {"type": "InPlaceUpdateReady", "status": "False"},
                    {"type": "InPlaceUpdateReady", "status": 1},
                ]
            }
        ),
        facts(in_place_update_ready="False"),
    ),
    (
        "in-place-null",
        pod(status={"conditions": [{"type": "InPlaceUpdateReady"}]}),
        facts(in_place_update_ready=""),
    ),
    ("other-condition", pod(status={"conditions": [{"type": "PodScheduled", "status": "True"}]}), facts()),
    (
        "restarts-max",
        pod(
            status={
                "containerStatuses": [
                    {"restartCount": 2},
                    {"restartCount": None},
                    {},
                    {"restartCount": 5},
                    {"restartCount": 3},
                ]
            }
        ),
        facts(restarts=5),
    ),
    (
        "restarts-init-ignored",
        pod(status={"containerStatuses": [], "initContainerStatuses": [{"restartCount": 9}]}),
        facts(),
    ),
]


@pytest.mark.parametrize(
    ("document", "expected"), [(d, f) for _, d, f in ACCEPTED], ids=[i for i, _, _ in ACCEPTED]
)
def test_read_pod_fields(document: object, expected: PodFacts) -> None:
    assert read_pod(document) == expected


def test_read_pod_accepts_read_only_mappings_everywhere() -> None:
    frozen = MappingProxyType
    document = frozen(
        {
            "metadata": frozen(
                {
                    "name": "p",
                    "annotations": frozen({COST: "3"}),
                    "labels": frozen({REVISION: "r"}),
                }
            ),
            "spec": frozen({"nodeName": "n"}),
            "status": frozen(
                {
                    "phase": "Running",
                    "conditions": [frozen({"type": "Ready", "status": "True", "lastTransitionTime": T2024})],
                    "containerStatuses": [frozen({"restartCount": 1})],
                }
            ),
        }
    )
    assert read_pod(document) == facts(
        cost=3, revision="r", node_name="n", phase="Running", ready=True, ready_time=T2024_NS, restarts=1
    )


def test_read_pod_uses_the_given_time_reader() -> None:
    reader = TimeReader()
    reader.cache["2000-01-01T00:00:00Z"] = 42  # a value only the cache can return
    reader.cache["yesterday"] = 43
    document = pod(
        meta={"creationTimestamp": "2000-01-01T00:00:00Z"},
        status={"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"}]},
    )
    assert read_pod(document, 0, reader) == facts(created=42, ready=True, ready_time=43)
    read_pod(pod(meta={"creationTimestamp": T2024, "deletionTimestamp": "2024-01-01T00:00:00.5Z"}), 0, reader)
    assert reader.cache[T2024] == T2024_NS
    assert reader.cache["2024-01-01T00:00:00.5Z"] == T2024_NS + 500_000_000


def test_read_pods_labels_each_position() -> None:
    pods = [pod(), {"metadata": {"name": "q"}, "status": []}]
    with pytest.raises(PodFormatError) as caught:
        read_pods(pods)
    assert str(caught.value) == "pod 'q' (item 1): status must be an object"
    assert [f.name for f in read_pods([pod(), {"metadata": {"name": "q"}}])] == ["p", "q"]


@pytest.mark.parametrize(
    ("position", "obj", "expected"),
    [
        (4, {"metadata": {"name": "a"}}, "pod 'a' (item 4)"),
        (4, {"metadata": {}}, "item 4"),
        (2, ["metadata"], "item 2"),
        (0, "pod", "item 0"),
    ],
)
def test_describe_item(position: int, obj: object, expected: str) -> None:
    assert describe_item(position, obj) == expected


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([1, 2], [1, 2]),
        ({"kind": "PodList", "items": [{"a": 1}]}, [{"a": 1}]),
        ({"items": None}, []),
        ({"kind": "Pod"}, [{"kind": "Pod"}]),
        ({"metadata": {"name": "p"}}, [{"metadata": {"name": "p"}}]),
    ],
)
def test_pod_list_items_shapes(document: object, expected: list[object]) -> None:
    assert pod_list_items(document) == expected


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"items": {}}, "items must be a list of pods"),
        ({"kind": "Deployment"}, "expected a PodList or a JSON array of pods, got Deployment without items"),
        ({"kind": "pod"}, "expected a PodList or a JSON array of pods, got pod without items"),
        ({"kind": ""}, "expected a PodList or a JSON array of pods, got an object without items"),
        ({}, "expected a PodList or a JSON array of pods, got an object without items"),
        ("pods", "expected a PodList or a JSON array of pods, got str"),
        (None, "expected a PodList or a JSON array of pods, got NoneType"),
    ],
)
def test_pod_list_items_rejects(document: object, message: str) -> None:
    with pytest.raises(PodFormatError) as caught:
        pod_list_items(document)
    assert str(caught.value) == message
