"""What is injected into an admitted pod (docs/design-workloadspread.md §2.2) and the JSON patch."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import pytest
from admission_builders import pod, spread, subset

from py_engine.model import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.workloadspread.admission.context import AdmissionError
from py_engine.workloadspread.admission.inject import apply_subset_patch, inject, make_patch

ZONE_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
TOLERATION = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}


def _required(p: dict[str, Any]) -> list[dict[str, Any]]:
    terms: list[dict[str, Any]] = p["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    return terms


def test_bare_subset_still_creates_affinity_objects() -> None:
    ws = spread([subset("a")])
    mutated = inject(pod(), ws, "a", None)
    assert mutated["spec"]["affinity"] == {"nodeAffinity": {}}
    assert "tolerations" not in mutated["spec"]
    assert mutated["metadata"]["annotations"] == {MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'}


def test_required_term_is_anded_into_every_existing_term() -> None:
    the_pod = pod(
        spec={
            "containers": [{"name": "main"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]},
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                        ]
                    }
                }
            },
        }
    )
    mutated = inject(the_pod, spread([subset("a", requiredNodeSelectorTerm=ZONE_TERM)]), "a", None)
    assert _required(mutated) == [
        {
            "matchExpressions": [
                {"key": "arch", "operator": "In", "values": ["arm64"]},
                *ZONE_TERM["matchExpressions"],
            ]
        },
        {
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
            "matchExpressions": ZONE_TERM["matchExpressions"],
        },
    ]


def test_empty_required_terms_get_the_subset_term_alone() -> None:
    the_pod = pod(
        spec={
            "containers": [{"name": "main"}],
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
            },
        }
    )
    ws = spread([subset("a", requiredNodeSelectorTerm=ZONE_TERM)])
    mutated = inject(the_pod, ws, "a", None)
    assert _required(mutated) == [ZONE_TERM]
    _required(mutated)[0]["matchExpressions"].append({"key": "x", "operator": "Exists"})
    assert ws["spec"]["subsets"][0]["requiredNodeSelectorTerm"] == ZONE_TERM, "the spread's term is copied"


def test_tolerations_and_preferred_terms_are_appended_without_dedup() -> None:
    preferred = [{"weight": 10, "preference": ZONE_TERM}]
    the_pod = pod(
        spec={
            "containers": [{"name": "main"}],
            "tolerations": [TOLERATION],
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": []}}
                    ]
                }
            },
        }
    )
    ws = spread([subset("a", tolerations=[TOLERATION], preferredNodeSelectorTerms=preferred)])
    mutated = inject(the_pod, ws, "a", None)
    assert mutated["spec"]["tolerations"] == [TOLERATION, TOLERATION]
    assert mutated["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 1, "preference": {"matchExpressions": []}},
        *preferred,
    ]


def test_patch_runs_last_and_replaces_injected_lists() -> None:
    patch = {"spec": {"tolerations": [{"key": "only", "operator": "Exists"}]}}
    mutated = inject(pod(), spread([subset("a", tolerations=[TOLERATION], patch=patch)]), "a", None)
    assert mutated["spec"]["tolerations"] == [{"key": "only", "operator": "Exists"}]


def test_patch_merges_containers_by_name_and_honours_directives() -> None:
    the_pod = pod(
        spec={
            "containers": [
                {"name": "main", "image": "app", "env": [{"name": "A", "value": "1"}]},
                {"name": "side", "image": "proxy"},
            ]
        }
    )
    patch = {
        "spec": {
            "containers": [
                {"name": "main", "env": [{"name": "ZONE", "value": "z1"}]},
                {"name": "side", "$patch": "delete"},
            ]
        },
        "metadata": {"labels": {"zone": "z1"}},
    }
    mutated = inject(the_pod, spread([subset("a", patch=patch)]), "a", None)
    assert mutated["spec"]["containers"] == [
        {
            "name": "main",
            "image": "app",
            "env": [{"name": "A", "value": "1"}, {"name": "ZONE", "value": "z1"}],
        }
    ]
    assert mutated["metadata"]["labels"] == {"app": "web", "pod-template-hash": "abc123", "zone": "z1"}


@pytest.mark.parametrize(("new_class", "priority_kept"), [("high", False), ("low", True)])
def test_priority_cleared_only_when_the_class_changes(new_class: str, priority_kept: bool) -> None:
    the_pod = pod(spec={"containers": [{"name": "main"}], "priorityClassName": "low", "priority": 100})
    mutated = apply_subset_patch(the_pod, {"spec": {"priorityClassName": new_class}})
    assert ("priority" in mutated["spec"]) is priority_kept
    assert the_pod["spec"]["priority"] == 100


def test_bad_patch_or_unknown_subset_is_an_admission_error() -> None:
    bad = spread([subset("a", patch={"spec": {"containers": [{"image": "no-name"}]}})])
    with pytest.raises(AdmissionError, match="patch"):
        inject(pod(), bad, "a", None)
    with pytest.raises(AdmissionError, match="not in the WorkloadSpread"):
        inject(pod(), spread([subset("a")]), "zz", None)


def test_inputs_untouched_and_uid_only_for_nameless_pods() -> None:
    named, nameless = pod(), pod(None)
    ws = spread([subset("a", tolerations=[TOLERATION], requiredNodeSelectorTerm=ZONE_TERM)])
    snapshot = copy.deepcopy((named, nameless, ws))
    assert json.loads(inject(named, ws, "a", "u1")["metadata"]["annotations"][MATCHED_ANNOTATION]) == {
        "name": "ws",
        "subset": "a",
    }
    assert json.loads(inject(nameless, ws, "a", "u1")["metadata"]["annotations"][MATCHED_ANNOTATION]) == {
        "name": "ws",
        "subset": "a",
        "uid": "u1",
    }
    assert (named, nameless, ws) == snapshot


def test_kruise_annotation_on_the_pod_is_kept_and_ours_added() -> None:
    kruise = '{"name":"ws","subset":"old"}'
    mutated = inject(pod(annotations={KRUISE_MATCHED_ANNOTATION: kruise}), spread([subset("a")]), "a", None)
    assert mutated["metadata"]["annotations"][KRUISE_MATCHED_ANNOTATION] == kruise
    assert mutated["metadata"]["annotations"][MATCHED_ANNOTATION] == '{"name":"ws","subset":"a"}'


def test_make_patch_round_trips_and_escapes_slashes() -> None:
    the_pod = pod(
        annotations={"existing/key": "v"},
        spec={"containers": [{"name": "main"}], "tolerations": [TOLERATION]},
    )
    ws = spread(
        [
            subset(
                "a",
                tolerations=[TOLERATION],
                requiredNodeSelectorTerm=ZONE_TERM,
                patch={"metadata": {"labels": {"tier": "x"}}, "spec": {"priorityClassName": "p"}},
            )
        ]
    )
    mutated = inject(the_pod, ws, "a", None)
    ops = make_patch(the_pod, mutated)
    assert jsonpatch.apply_patch(the_pod, ops) == mutated
    assert {
        "op": "add",
        "path": "/metadata/annotations/spreadgate.dev~1matched-workloadspread",
        "value": '{"name":"ws","subset":"a"}',
    } in ops
    assert make_patch(the_pod, copy.deepcopy(the_pod)) == []


@pytest.mark.parametrize("with_patch", [False, True])
def test_shared_members_leave_the_pod_untouched_and_the_patch_the_same(with_patch: bool) -> None:
    """`inject` shares what it does not change with the pod (so the patch diff skips it by
    identity): the pod, existing terms, tolerations and annotations included, is left as it
    was, and the patch equals the one against an independent copy of the admitted pod."""
    the_pod = pod(
        annotations={"keep": "v"},
        labels={"app": "web"},
        spec={
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}],
            "tolerations": [TOLERATION],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]}
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": ZONE_TERM}
                    ],
                }
            },
        },
    )
    patch = (
        {"metadata": {"labels": {"tier": "x"}}, "spec": {"priorityClassName": "p"}} if with_patch else None
    )
    ws = spread(
        [
            subset(
                "a",
                tolerations=[TOLERATION],
                requiredNodeSelectorTerm=ZONE_TERM,
                preferredNodeSelectorTerms=[{"weight": 5, "preference": ZONE_TERM}],
                **({"patch": patch} if patch else {}),
            )
        ]
    )
    before = copy.deepcopy(the_pod)
    mutated = inject(the_pod, ws, "a", "u")
    assert the_pod == before
    ops = make_patch(the_pod, mutated)
    assert ops == make_patch(the_pod, copy.deepcopy(mutated))
    assert jsonpatch.apply_patch(before, ops) == mutated
