"""Strategic merge patch with the Pod merge-key schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.semantics.strategic_merge import (
    POD_TEMPLATE_SCHEMA,
    StrategicMergeError,
    json_merge_patch,
    strategic_merge,
)

POD: dict[str, Any] = {
    "metadata": {
        "name": "p",
        "labels": {"app": "web", "old": "x"},
        "finalizers": ["a"],
        "ownerReferences": [{"uid": "u1", "name": "rs", "kind": "ReplicaSet"}],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "args": ["--a", "--b"],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "name": "http"}],
                "volumeMounts": [{"mountPath": "/data", "name": "data"}],
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "k1", "operator": "Exists"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        },
        "nodeSelector": {"disk": "ssd"},
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}]},
}


def test_inputs_are_never_mutated() -> None:
    original = copy.deepcopy(POD)
    patch = {
        "metadata": {"labels": {"new": "y"}},
        "spec": {"containers": [{"name": "app", "image": "app:2"}]},
    }
    frozen_patch = copy.deepcopy(patch)
    out = strategic_merge(POD, patch)
    assert original == POD and patch == frozen_patch
    out["spec"]["containers"][0]["env"].append({"name": "C"})
    assert original == POD


def test_containers_merge_by_name_and_append_new() -> None:
    out = strategic_merge(
        POD,
        {
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "app:2",
                        "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                    },
                    {"name": "new", "image": "n:1"},
                ]
            }
        },
    )
    cs = out["spec"]["containers"]
    assert [c["name"] for c in cs] == ["app", "sidecar", "new"]
    assert cs[0]["image"] == "app:2"
    assert cs[0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "20"},
        {"name": "C", "value": "3"},
    ]
    assert cs[0]["args"] == ["--a", "--b"]  # untouched fields survive
    assert cs[0]["ports"] == [{"containerPort": 80, "name": "http"}]


def test_ports_merge_by_container_port_and_mounts_by_path() -> None:
    out = strategic_merge(
        POD,
        {
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 9090}],
                        "volumeMounts": [{"mountPath": "/data", "readOnly": True}],
                    }
                ]
            }
        },
    )
    app = out["spec"]["containers"][0]
    assert app["ports"] == [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 9090}]
    assert app["volumeMounts"] == [{"mountPath": "/data", "name": "data", "readOnly": True}]


def test_atomic_lists_replace() -> None:
    out = strategic_merge(
        POD,
        {
            "spec": {
                "tolerations": [{"key": "k2", "operator": "Exists"}],
                "containers": [{"name": "app", "args": ["--c"]}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
                            ]
                        }
                    }
                },
            }
        },
    )
    assert out["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    assert out["spec"]["containers"][0]["args"] == ["--c"]
    terms = out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]


def test_null_deletes_and_maps_merge() -> None:
    out = strategic_merge(
        POD, {"metadata": {"labels": {"old": None, "new": "y"}}, "spec": {"nodeSelector": None}}
    )
    assert out["metadata"]["labels"] == {"app": "web", "new": "y"}
    assert "nodeSelector" not in out["spec"]


def test_patch_delete_directive_on_list_element_and_map() -> None:
    out = strategic_merge(
        POD,
        {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}], "affinity": {"$patch": "delete"}}},
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["app"]
    assert "affinity" not in out["spec"]


def test_patch_replace_directive() -> None:
    out = strategic_merge(
        POD,
        {
            "spec": {
                "containers": [{"name": "only", "image": "o:1"}, {"$patch": "replace"}],
                "nodeSelector": {"zone": "b", "$patch": "replace"},
            }
        },
    )
    assert out["spec"]["containers"] == [{"name": "only", "image": "o:1"}]
    assert out["spec"]["nodeSelector"] == {"zone": "b"}


def test_finalizers_merge_as_set_and_delete_from_primitive_list() -> None:
    out = strategic_merge(POD, {"metadata": {"finalizers": ["b", "a"]}})
    assert out["metadata"]["finalizers"] == ["a", "b"]
    out2 = strategic_merge(out, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out2["metadata"]["finalizers"] == ["b"]


def test_owner_references_merge_by_uid_and_conditions_by_type() -> None:
    out = strategic_merge(
        POD,
        {
            "metadata": {"ownerReferences": [{"uid": "u2", "name": "other"}]},
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "PodScheduled", "status": "True"},
                ]
            },
        },
    )
    assert [o["uid"] for o in out["metadata"]["ownerReferences"]] == ["u1", "u2"]
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


def test_set_element_order_and_retain_keys() -> None:
    out = strategic_merge(
        POD,
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
                "containers": [{"name": "app", "image": "app:3"}],
            }
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["sidecar", "app"]
    out2 = strategic_merge(
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        None,
    )
    assert out2 == {"spec": {"strategy": {"type": "Recreate"}}}


def test_new_subtree_is_cleaned_of_directives() -> None:
    out = strategic_merge(
        {"metadata": {"name": "x"}},
        {
            "spec": {
                "containers": [
                    {"name": "a", "image": "i", "$patch": "merge"},
                    {"name": "gone", "$patch": "delete"},
                ],
                "x": None,
            }
        },
    )
    assert out["spec"] == {"containers": [{"name": "a", "image": "i"}]}


def test_template_schema_for_workload_spread_subset_patch() -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "a"}]},
    }
    subset_patch = {
        "metadata": {"labels": {"subset": "zone-a"}, "annotations": {"k": "v"}},
        "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1"}}}]},
    }
    out = strategic_merge(template, subset_patch, POD_TEMPLATE_SCHEMA)
    assert out["metadata"] == {"labels": {"app": "web", "subset": "zone-a"}, "annotations": {"k": "v"}}
    assert out["spec"]["containers"] == [{"name": "app", "image": "a", "resources": {"limits": {"cpu": "1"}}}]


@pytest.mark.parametrize(
    "bad",
    [
        {"spec": {"containers": [{"image": "no-name"}]}},
        {"spec": {"containers": ["not-a-map"]}},
        {"spec": {"$patch": "explode"}},
        {"metadata": {"$retainKeys": "name"}},
        {"spec": {"$unknown": 1}},
    ],
)
def test_invalid_patches_raise(bad: dict[str, Any]) -> None:
    with pytest.raises(StrategicMergeError):
        strategic_merge(POD, bad)


def test_non_object_patch_raises() -> None:
    with pytest.raises(StrategicMergeError):
        strategic_merge(POD, ["x"])  # type: ignore[arg-type]


def test_json_merge_patch_replaces_lists_and_keeps_dollar_keys() -> None:
    out = json_merge_patch(POD, {"spec": {"containers": [{"name": "x"}], "$patch": "v"}, "status": None})
    assert out["spec"]["containers"] == [{"name": "x"}]
    assert out["spec"]["$patch"] == "v"
    assert "status" not in out
    assert POD["spec"]["containers"][0]["name"] == "app"
