"""Subset workloads built whole and compared literally, at the edges mutation testing (run U1)
found unpinned: a StatefulSet whose strategy says RollingUpdate, a Deployment that recreates,
the pod template's own labels, a patch merged by the pod template's merge keys, an adopted
workload with an empty selector, an adopted Kruise workload's metadata, a CloneSet stored at
v1alpha1, the 253-character limit of a generateName.

Rules: docs/uniteddeployment.md, "Subset workloads", "Partitions" and "Reservation mode"
(maxUnavailable only on a rolling update).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_ud_construction import build, ud_with
from ud_testkit import OWNER, ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.construct import (
    SubsetTarget,
    build_workload,
    name_prefix,
    workload_metadata,
)

pytestmark = pytest.mark.timeout(30)

KEYS_NOTE = '{"labels":["app","tier"],"annotations":["note"]}'
ANNOTATIONS = {
    "note": "x",
    "spreadgate.dev/subset-patch": "",
    "spreadgate.dev/united-deployment": "web",
    "spreadgate.dev/template-metadata-keys": KEYS_NOTE,
}
"""The annotations the template and the controller write on every subset workload here."""
POD_LABELS = {
    "app": "web",
    "spreadgate.dev/subset-name": "zone-a",
    "spreadgate.dev/controller-revision-hash": "web-abc",
}


def _metadata(**extra: Any) -> dict[str, Any]:
    return {
        "generateName": "web-zone-a-",
        "namespace": "default",
        "labels": {"app": "web", "tier": "front", **POD_LABELS},
        "annotations": dict(ANNOTATIONS),
        "ownerReferences": [OWNER],
        **extra,
    }


def _pod_template() -> dict[str, Any]:
    return {"metadata": {"labels": POD_LABELS}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}}


SELECTOR = {"matchLabels": {"app": "web", "spreadgate.dev/subset-name": "zone-a"}}


def test_a_statefulset_rolling_update_gets_the_partition() -> None:
    ud = ud_with("statefulSetTemplate", {"updateStrategy": {"type": "RollingUpdate"}})
    assert build(ud, replicas=3, partition=2) == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(),
        "spec": {
            "selector": SELECTOR,
            "template": _pod_template(),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
            "replicas": 3,
        },
    }


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ({"type": "Recreate"}, {"type": "Recreate"}),
        ({"type": "RollingUpdate"}, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}),
        (None, {"rollingUpdate": {"maxUnavailable": 2}}),
    ],
)
def test_max_unavailable_is_set_only_on_a_rolling_update(strategy: Any, expected: dict[str, Any]) -> None:
    ud = ud_with(spec={} if strategy is None else {"strategy": strategy})
    obj = build_workload(ud, ud.subsets[0], "web-abc", SubsetTarget(3, 0, max_unavailable=2))
    assert obj == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(),
        "spec": {"selector": SELECTOR, "template": _pod_template(), "strategy": expected, "replicas": 3},
    }


def test_a_patch_merges_containers_by_name_and_keeps_the_template_labels() -> None:
    patch = {"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "1"}}}]}}
    ud = ud_with(subset={"patch": patch})
    spec = build(ud)["spec"]
    assert spec["template"] == {
        "metadata": {"labels": POD_LABELS},
        "spec": {"containers": [{"name": "main", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]},
    }


def test_an_adopted_workload_with_an_empty_selector_gets_the_unitedeployments() -> None:
    existing = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-zone-a-k", "namespace": "default"},
        "spec": {"selector": {}, "replicas": 9},
    }
    obj = build(ud_with(), existing=existing)
    assert obj["spec"]["selector"] == SELECTOR
    assert existing["spec"] == {"selector": {}, "replicas": 9}


KRUISE_EXISTING = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web-zone-a-k",
        "namespace": "default",
        "labels": {"apps.kruise.io/subset-name": "zone-a", "team": "x"},
        "annotations": {"kept": "yes"},
    },
    "spec": {"selector": {"matchLabels": {"app": "web", "apps.kruise.io/subset-name": "zone-a"}}},
}
KRUISE_LABELS = {
    "apps.kruise.io/subset-name": "zone-a",
    "apps.kruise.io/controller-revision-hash": "web-abc",
}


def test_an_adopted_kruise_workload_carries_both_label_keys_in_its_metadata() -> None:
    expected = {
        "name": "web-zone-a-k",
        "namespace": "default",
        "labels": {"team": "x", "app": "web", "tier": "front", **POD_LABELS, **KRUISE_LABELS},
        "annotations": {
            "kept": "yes",
            **ANNOTATIONS,
        },
        "ownerReferences": [OWNER],
    }
    ud = ud_with()
    assert workload_metadata(ud, ud.subsets[0], "web-abc", KRUISE_EXISTING) == expected
    built = build(ud, existing=KRUISE_EXISTING)
    assert built["metadata"] == expected
    assert built["spec"]["template"]["metadata"]["labels"] == {**POD_LABELS, **KRUISE_LABELS}


def test_workload_metadata_of_a_spreadgate_workload() -> None:
    ud = ud_with()
    existing = {"metadata": {"name": "web-zone-a-x", "labels": {"team": "x"}}, "spec": {"replicas": 1}}
    assert workload_metadata(ud, ud.subsets[0], "web-abc", existing) == {
        "name": "web-zone-a-x",
        "namespace": "default",
        "labels": {"team": "x", "app": "web", "tier": "front", **POD_LABELS},
        "annotations": dict(ANNOTATIONS),
        "ownerReferences": [OWNER],
    }
    assert existing == {
        "metadata": {"name": "web-zone-a-x", "labels": {"team": "x"}},
        "spec": {"replicas": 1},
    }


def test_a_cloneset_is_written_in_the_layout_of_its_stored_version() -> None:
    ud = ud_with("cloneSetTemplate", {"scaleStrategy": {"disablePVCReuse": True}})
    fresh = build(ud, partition=2)
    assert fresh["apiVersion"] == "apps.kruise.io/v1beta1"
    assert fresh["spec"]["updateStrategy"] == {"rollingUpdate": {"partition": 2}}
    assert fresh["spec"]["scaleStrategy"] == {"enablePVCReuse": False}
    existing = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web-zone-a-c", "namespace": "default"},
        "spec": {"selector": SELECTOR},
    }
    alpha = build(ud, existing=existing, partition=2)
    assert alpha["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert alpha["spec"]["updateStrategy"] == {"partition": 2}
    assert alpha["spec"]["scaleStrategy"] == {"disablePVCReuse": True}


def test_a_generate_name_prefix_leaves_room_for_one_character_within_253() -> None:
    # "<ud>-<subset>-" plus at least one generated character must be a DNS subdomain (<= 253).
    assert name_prefix("w" * 200, "s" * 50) == "w" * 200 + "-" + "s" * 50 + "-"  # 252 characters
    assert name_prefix("w" * 200, "s" * 51) == "w" * 200 + "-"  # 253 would leave no room
    assert name_prefix("web", "Zone") == "web-"  # not a DNS subdomain


def test_owner_references_of_others_are_kept_and_ours_replaced() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-1"}
    old_ours = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "name": "web",
        "controller": True,
    }
    ours_not_controller = {
        "apiVersion": "x/v1",
        "kind": "UnitedDeployment",
        "name": "web",
        "controller": False,
    }
    existing = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web-zone-a-x",
            "ownerReferences": [other, "junk", old_ours, ours_not_controller],
        },
        "spec": {"selector": SELECTOR},
    }
    ud = ud_with()
    expected = [other, ours_not_controller, OWNER]
    assert workload_metadata(ud, ud.subsets[0], "web-abc", existing)["ownerReferences"] == expected
    assert build(ud, existing=existing)["metadata"]["ownerReferences"] == expected


def test_recorded_template_keys_are_removed_only_from_a_list_and_only_when_present() -> None:
    ud = ud_with()
    # recorded "tier"/"gone" no longer present on the object: nothing to remove, no error
    recorded = '{"labels":["tier","gone"],"annotations":["gone"]}'
    existing = {
        "metadata": {
            "name": "w",
            "labels": {"team": "x"},
            "annotations": {"spreadgate.dev/template-metadata-keys": recorded},
        }
    }
    metadata = workload_metadata(ud, ud.subsets[0], "web-abc", existing)
    assert metadata["labels"] == {"team": "x", "app": "web", "tier": "front", **POD_LABELS}
    assert set(metadata["annotations"]) == {
        "note",
        "spreadgate.dev/subset-patch",
        "spreadgate.dev/united-deployment",
        "spreadgate.dev/template-metadata-keys",
    }
    # a record that is not lists removes nothing
    odd = '{"labels":{"team":true},"annotations":{"kept":true}}'
    existing = {
        "metadata": {
            "name": "w",
            "labels": {"team": "x"},
            "annotations": {"kept": "yes", "spreadgate.dev/template-metadata-keys": odd},
        }
    }
    metadata = workload_metadata(ud, ud.subsets[0], "web-abc", existing)
    assert metadata["labels"]["team"] == "x" and metadata["annotations"]["kept"] == "yes"
    nulls = '{"labels":null,"annotations":null}'
    existing["metadata"]["annotations"]["spreadgate.dev/template-metadata-keys"] = nulls
    assert workload_metadata(ud, ud.subsets[0], "web-abc", existing)["labels"]["team"] == "x"


def test_the_selectors_match_labels_label_the_workload() -> None:
    ud_raw = ud_object(2, [{"name": "zone-a"}])
    ud_raw["spec"]["template"]["deploymentTemplate"]["metadata"] = {}
    ud = UnitedDeployment.from_object(ud_raw)
    labels = build_workload(ud, ud.subsets[0], "web-abc", SubsetTarget(1, 0))["metadata"]["labels"]
    assert labels == POD_LABELS
