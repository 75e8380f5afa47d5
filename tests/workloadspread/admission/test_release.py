"""Pod DELETE / eviction bookkeeping (docs/design-workloadspread.md §2.4)."""

from __future__ import annotations

import copy
from typing import Any

import admission_builders as build
import pytest

from py_engine.model import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.workloadspread.admission.context import AdmissionError
from py_engine.workloadspread.admission.offline import OfflineAdmission
from py_engine.workloadspread.admission.release import find_annotated_spread, release_delete


def _annotated(
    subset_name: str = "a", spread_name: str = "ws", key: str = MATCHED_ANNOTATION, **kwargs: Any
) -> dict[str, Any]:
    return build.pod(annotations={key: f'{{"name":"{spread_name}","subset":"{subset_name}"}}'}, **kwargs)


def _ws(missing: int = 0, **entry: Any) -> dict[str, Any]:
    return build.spread(
        [build.subset("a", 3), build.subset("b")],
        status=build.versioned(
            "abc123",
            {"name": "a", "replicas": 3, "missingReplicas": missing, **entry},
            {"name": "b", "replicas": 1, "missingReplicas": -1},
        ),
    )


def test_delete_records_the_pod_and_returns_the_slot() -> None:
    ws = _ws(0)
    before = copy.deepcopy(ws)
    release = release_delete(ws, _annotated(), build.make_ctx())
    assert ws == before
    assert release.subset == "a" and release.spread is not None
    entry = release.spread["status"]["versionedSubsetStatuses"]["abc123"][0]
    assert entry == {
        "name": "a",
        "replicas": 3,
        "missingReplicas": 1,
        "deletingPods": {"web-abc123-x1": build.NOW_TEXT},
    }
    assert release_delete(release.spread, _annotated(), build.make_ctx()).spread is None, (
        "second delete is idempotent"
    )


def test_a_handed_over_status_is_extended_in_place_with_the_same_outcome() -> None:
    ws = _ws(0, deletingPods={"earlier": build.NOW_TEXT})
    copied = release_delete(copy.deepcopy(ws), _annotated(), build.make_ctx())
    owned = copy.deepcopy(ws)
    held = owned["status"]["versionedSubsetStatuses"]["abc123"][0]["deletingPods"]
    in_place = release_delete(owned, _annotated(), build.make_ctx(), status_owned=True)
    assert in_place == copied and in_place.spread is not None
    assert in_place.spread["status"]["versionedSubsetStatuses"]["abc123"][0]["deletingPods"] is held
    assert held == {"earlier": build.NOW_TEXT, "web-abc123-x1": build.NOW_TEXT}


def test_no_upper_clamp_in_the_webhook() -> None:
    release = release_delete(_ws(3), _annotated(), build.make_ctx())
    assert release.spread is not None
    assert release.spread["status"]["versionedSubsetStatuses"]["abc123"][0]["missingReplicas"] == 4


def test_kruise_annotation_is_read_too() -> None:
    assert (
        release_delete(_ws(0), _annotated(key=KRUISE_MATCHED_ANNOTATION), build.make_ctx()).spread is not None
    )


@pytest.mark.parametrize(
    "case",
    [
        "unannotated",
        "other-build.spread",
        "unknown-build.subset",
        "unlimited",
        "creating",
        "deleting",
        "statefulset",
    ],
)
def test_cases_without_change(case: str) -> None:
    ws = _ws(0)
    the_pod = _annotated()
    if case == "unannotated":
        the_pod = build.pod()
    elif case == "other-build.spread":
        the_pod = _annotated(spread_name="other")
    elif case == "unknown-build.subset":
        the_pod = _annotated("zz")
    elif case == "unlimited":
        the_pod = _annotated("b")
    elif case == "creating":  # deleted before the controller saw it: nothing given back
        ws = _ws(0, creatingPods={"web-abc123-x1": "2024-06-01T11:59:50Z"})
    elif case == "deleting":
        ws["status"]["versionedSubsetStatuses"]["abc123"][1]["deletingPods"] = {
            "web-abc123-x1": build.NOW_TEXT
        }
    elif case == "statefulset":
        ws["spec"]["targetRef"] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}
        the_pod = _annotated(owner=build.owner_ref("apps/v1", "StatefulSet", "db"))
    assert release_delete(ws, the_pod, build.make_ctx()).spread is None


@pytest.mark.parametrize("case", ["terminating", "finished", "no-owner"])
def test_the_services_guards_release_nothing(case: str) -> None:
    """Pods the service's guards stop (`py_engine.workloadspread.admission.service`), run offline."""
    the_pod = _annotated()
    if case == "terminating":
        the_pod["metadata"]["deletionTimestamp"] = "2024-06-01T11:59:00Z"
    elif case == "finished":
        the_pod["status"] = {"phase": "Failed"}
    else:
        the_pod["metadata"]["ownerReferences"] = []
    outcome = OfflineAdmission([*build.deployment_chain(), _ws(0)], build.NOW, generated_uid="u").delete(
        the_pod
    )
    assert outcome.allowed and not outcome.status_written


def test_empty_version_is_initialised_from_spec() -> None:
    ws = build.spread([build.subset("a", 3), build.subset("b")])
    release = release_delete(ws, _annotated(), build.make_ctx())
    assert release.spread is not None
    assert release.spread["status"]["versionedSubsetStatuses"]["abc123"] == [
        {"name": "a", "replicas": 0, "missingReplicas": 4, "deletingPods": {"web-abc123-x1": build.NOW_TEXT}},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
    ]


def test_unreadable_spread_is_an_error() -> None:
    ws = _ws(0)
    ws["spec"]["subsets"] = []
    with pytest.raises(AdmissionError):
        release_delete(ws, _annotated(), build.make_ctx())


def test_find_annotated_spread() -> None:
    mine, other = build.spread([build.subset("a")]), build.spread([build.subset("a")], name="other")
    elsewhere = build.spread([build.subset("a")], namespace="prod")
    assert find_annotated_spread(_annotated(), [other, elsewhere, mine]) is mine
    assert find_annotated_spread(_annotated(spread_name="gone"), [mine]) is None
    assert find_annotated_spread(build.pod(), [mine]) is None
    broken = build.pod(annotations={MATCHED_ANNOTATION: "{not json"})
    assert find_annotated_spread(broken, [mine]) is None
