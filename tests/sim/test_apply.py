"""The pure server-side apply core (py_engine/sim/apply.py): field sets, merges, ownership."""

from __future__ import annotations

import json
from typing import Any

import pytest

from py_engine.sim import apply as ssa
from py_engine.sim import managed_fields
from py_engine.sim.apply_schema import BUILTIN, object_schema
from py_engine.sim.fieldsets import difference, intersection, members, path_string, union

DEPLOY = BUILTIN["Deployment"]
NOW = "2026-01-01T00:00:00Z"


def dep(
    replicas: int | None = 2, containers: list[dict[str, Any]] | None = None, **meta: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {"spec": {"containers": containers or [{"name": "web", "image": "a"}]}}
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", **meta}, "spec": spec}


def run(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    managers: list[ssa.Manager],
    who: str,
    force: bool = False,
    schema: Any = DEPLOY,
) -> ssa.Applied:
    return ssa.apply(live, config, schema, managers, who, "apps/v1", scope="main", force=force, now=NOW)


def owned(result: ssa.Applied, who: str) -> list[str]:
    (m,) = [m for m in result.managers if m.name == who]
    return [path_string(p) for p in members(m.fields)]


def test_field_set_of_a_deployment_in_fieldsv1_form() -> None:
    obj = dep(
        3,
        [
            {
                "name": "web",
                "image": "a",
                "ports": [{"containerPort": 80}],
                "env": [{"name": "X", "value": "1"}],
            }
        ],
        labels={"app": "d"},
    )
    obj["spec"]["selector"] = {"matchLabels": {"app": "d"}}
    fields = ssa.field_set(ssa.tracked(obj, "main"), DEPLOY)
    assert fields == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"web"}': {
                            ".": {},
                            "f:env": {'k:{"name":"X"}': {".": {}, "f:name": {}, "f:value": {}}},
                            "f:image": {},
                            "f:name": {},
                            # protocol is a key with a default: the item is keyed by both
                            "f:ports": {
                                'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                            },
                        }
                    }
                }
            },
        },
    }


def test_set_operations_keep_members_and_their_markers() -> None:
    a = {"f:spec": {"f:replicas": {}, "f:template": {".": {}, "f:x": {}}}}
    b = {"f:spec": {"f:template": {}, "f:paused": {}}}
    assert union(a, b) == {"f:spec": {"f:replicas": {}, "f:template": {".": {}, "f:x": {}}, "f:paused": {}}}
    assert difference(a, b) == {"f:spec": {"f:replicas": {}, "f:template": {"f:x": {}}}}
    assert difference(a, {"f:spec": {"f:template": {"f:x": {}}}}) == {
        "f:spec": {"f:replicas": {}, "f:template": {}}
    }
    assert difference(a, {"f:other": {}}) is a  # nothing removed: the same set back
    assert intersection(a, b) == {"f:spec": {"f:template": {}}}
    assert [path_string(p) for p in members(a)] == [".spec.replicas", ".spec.template", ".spec.template.x"]


def test_paths_print_as_kube_apiserver_prints_them() -> None:
    fields = ssa.field_set(
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "web", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]
                    }
                }
            },
            "metadata": {"finalizers": ["a/b"]},
        },
        DEPLOY,
    )
    assert sorted(path_string(p) for p in members(fields)) == [
        '.metadata.finalizers[="a/b"]',
        '.spec.template.spec.containers[name="web"]',
        '.spec.template.spec.containers[name="web"].name',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="UDP"]',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="UDP"].containerPort',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="UDP"].protocol',
    ]


def test_list_maps_merge_by_key_and_atomic_lists_are_replaced() -> None:
    live = dep(containers=[{"name": "web", "image": "a", "args": ["x", "y"]}, {"name": "side", "image": "s"}])
    live["spec"]["template"]["spec"]["tolerations"] = [{"key": "a"}, {"key": "b"}]
    config = dep(containers=[{"name": "web", "image": "b", "args": ["z"]}])
    config["spec"]["template"]["spec"]["tolerations"] = [{"key": "c"}]
    merged = ssa.merge(live, config, DEPLOY)
    pod = merged["spec"]["template"]["spec"]
    assert pod["containers"] == [{"name": "web", "image": "b", "args": ["z"]}, {"name": "side", "image": "s"}]
    assert pod["tolerations"] == [{"key": "c"}]
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "a"  # inputs untouched


def test_new_items_stand_where_the_applied_list_puts_them() -> None:
    live = dep(containers=[{"name": "a"}, {"name": "b"}])
    merged = ssa.merge(live, dep(containers=[{"name": "c"}, {"name": "a"}]), DEPLOY)
    assert [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]] == ["c", "a", "b"]


def test_omitted_fields_the_applier_owned_are_removed_shared_ones_stay() -> None:
    first = run(
        None,
        dep(2, [{"name": "web", "image": "a"}, {"name": "side", "image": "s"}], labels={"x": "1", "y": "2"}),
        [],
        "alice",
    )
    other = run(
        first.obj,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"y": "2"}}},
        first.managers,
        "bob",
    )
    assert ".metadata.labels.y" in owned(other, "alice") and ".metadata.labels.y" in owned(other, "bob")
    second = run(other.obj, dep(None, [{"name": "web", "image": "a"}]), other.managers, "alice")
    assert second.obj["metadata"]["labels"] == {"y": "2"}
    assert "replicas" not in second.obj["spec"]
    assert [c["name"] for c in second.obj["spec"]["template"]["spec"]["containers"]] == ["web"]
    assert second.changed


def test_fields_nobody_applied_survive_an_applier_dropping_its_own() -> None:
    live = dep(2)
    live["spec"]["strategy"] = {"type": "RollingUpdate"}  # a server default: nobody's
    first = run(live, dep(2), [ssa.Manager("x", "Update", "apps/v1", "", NOW, {})], "alice")
    second = run(first.obj, dep(None), first.managers, "alice")
    assert second.obj["spec"]["strategy"] == {"type": "RollingUpdate"}


def test_conflict_only_when_the_value_differs_and_force_takes_over() -> None:
    first = run(None, dep(2), [], "alice")
    same = run(first.obj, dep(2), first.managers, "bob")
    assert ".spec.replicas" in owned(same, "alice") and ".spec.replicas" in owned(same, "bob")
    with pytest.raises(ssa.ApplyConflicts) as info:
        run(same.obj, dep(3), same.managers, "carol")
    assert sorted((c.manager.name, path_string(c.path)) for c in info.value.conflicts) == [
        ("alice", ".spec.replicas"),
        ("bob", ".spec.replicas"),
    ]
    forced = run(same.obj, dep(3), same.managers, "carol", force=True)
    assert forced.obj["spec"]["replicas"] == 3
    assert ".spec.replicas" not in owned(forced, "alice") + owned(forced, "bob")
    assert ".spec.replicas" in owned(forced, "carol")


def test_conflict_error_is_kube_apiservers() -> None:
    first = run(None, dep(2, labels={"a": "1"}), [], "alice")
    updater = ssa.Manager(
        "kubectl-edit", "Update", "apps/v1", "", NOW, ssa.field_set({"spec": {"replicas": 2}}, DEPLOY)
    )
    with pytest.raises(ssa.ApplyConflicts) as info:
        run(first.obj, dep(5, labels={"a": "2"}), [*first.managers, updater], "bob")
    status = managed_fields.conflict_error(info.value.conflicts).status
    assert status["message"] == (
        'Apply failed with 3 conflicts: conflicts with "alice":\n- .metadata.labels.a\n'
        '- .spec.replicas\nconflicts with "kubectl-edit" using apps/v1:\n- .spec.replicas'
    )
    assert [c["field"] for c in status["details"]["causes"]] == [
        ".metadata.labels.a",
        ".spec.replicas",
        ".spec.replicas",
    ]


def test_before_first_apply_owns_what_an_untracked_object_holds() -> None:
    with pytest.raises(ssa.ApplyConflicts) as info:
        run(dep(2), dep(4), [], "kubectl")
    (conflict,) = info.value.conflicts
    assert (conflict.manager.name, conflict.manager.operation) == ("before-first-apply", "Update")


def test_kubectl_upgrades_from_client_side_apply_without_conflicts() -> None:
    live = dep(2, annotations={ssa.LAST_APPLIED: json.dumps(dep(2))})
    csa = ssa.update({}, live, DEPLOY, [], "kubectl-client-side-apply", "apps/v1", scope="main", now=NOW)
    with pytest.raises(ssa.ApplyConflicts):
        run(live, dep(3), csa, "someone-else")
    upgraded = run(live, dep(3), csa, "kubectl")
    assert upgraded.obj["spec"]["replicas"] == 3
    kept = json.loads(upgraded.obj["metadata"]["annotations"][ssa.LAST_APPLIED])
    assert kept["spec"]["replicas"] == 3  # the annotation follows what kubectl applied


def test_update_gives_the_writer_what_it_changed_and_takes_it_from_others() -> None:
    created = ssa.update({}, dep(2), DEPLOY, [], "creator", "apps/v1", scope="main", now=NOW)
    assert ".spec.replicas" in [path_string(p) for p in members(created[0].fields)]
    scaled = dep(5)
    after = ssa.update(
        dep(2),
        scaled,
        DEPLOY,
        created,
        "scaler",
        "apps/v1",
        subresource="scale",
        scope="main",
        now="2026-01-02T00:00:00Z",
    )
    by = {m.name: m for m in after}
    assert [path_string(p) for p in members(by["scaler"].fields)] == [".spec.replicas"]
    assert by["scaler"].subresource == "scale"
    assert ".spec.replicas" not in [path_string(p) for p in members(by["creator"].fields)]
    assert ssa.update(scaled, scaled, DEPLOY, after, "noop", "apps/v1", scope="main", now=NOW) == after


def test_status_is_the_status_writers_and_not_the_appliers() -> None:
    obj = dep(2)
    obj["status"] = {"replicas": 2}
    assert "f:status" not in ssa.field_set(ssa.tracked(obj, "main"), DEPLOY)
    assert set(ssa.field_set(ssa.tracked(obj, "status"), DEPLOY)) == {"f:status"}


def test_crd_schema_list_types_and_atomic_maps() -> None:
    schema = object_schema(
        "Thing",
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "subsets": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                        "tags": {
                            "type": "array",
                            "x-kubernetes-list-type": "set",
                            "items": {"type": "string"},
                        },
                        "plain": {"type": "array", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
                    },
                }
            },
        },
        True,
    )
    live = {
        "spec": {
            "subsets": [{"name": "a", "max": 1}, {"name": "b"}],
            "tags": ["x"],
            "plain": ["1", "2"],
            "selector": {"a": "1", "b": "2"},
        }
    }
    config = {
        "spec": {"subsets": [{"name": "a", "max": 2}], "tags": ["y"], "plain": ["3"], "selector": {"c": "3"}}
    }
    merged = ssa.merge(live, config, schema)
    assert merged["spec"] == {
        "subsets": [{"name": "a", "max": 2}, {"name": "b"}],
        "tags": ["x", "y"],
        "plain": ["3"],
        "selector": {"c": "3"},
    }
    fields = ssa.field_set(config, schema)
    assert fields["f:spec"]["f:tags"] == {'v:"y"': {}}
    assert fields["f:spec"]["f:plain"] == {} and fields["f:spec"]["f:selector"] == {}


def test_an_unreadable_configuration_is_an_apply_error() -> None:
    with pytest.raises(ssa.ApplyError, match="duplicate entries"):
        run(None, dep(containers=[{"name": "a"}, {"name": "a"}]), [], "alice")
    with pytest.raises(ssa.ApplyError, match='omits key field "name"'):
        run(None, dep(containers=[{"image": "a"}]), [], "alice")


def test_managed_fields_entries_round_trip_in_kube_apiservers_order() -> None:
    created = ssa.update(
        {}, dep(2), DEPLOY, [], "creator", "apps/v1", scope="main", now="2026-01-02T00:00:00Z"
    )
    applied = run(dep(2), dep(2), created, "alice").managers
    entries = managed_fields.entries(applied)
    assert [(e["manager"], e["operation"]) for e in entries] == [("alice", "Apply"), ("creator", "Update")]
    assert managed_fields.read({"metadata": {"managedFields": entries}}) == sorted(
        applied, key=lambda m: m.operation
    )


def test_update_entries_are_capped() -> None:
    managers = [
        ssa.Manager(f"m{i:02}", "Update", "apps/v1", "", f"2026-01-01T00:00:{i:02}Z", {f"f:x{i}": {".": {}}})
        for i in range(12)
    ]
    entries = managed_fields.entries(managers)
    names = [e["manager"] for e in entries]
    assert len(entries) == managed_fields.MAX_UPDATE_MANAGERS and "ancient-changes" in names
    assert "m00" not in names and "m11" in names
    bucket = next(e for e in entries if e["manager"] == "ancient-changes")
    assert set(bucket["fieldsV1"]) == {"f:x0", "f:x1", "f:x2"}


def test_dropping_the_only_label_keeps_the_metadata_the_configuration_names() -> None:
    first = run(None, dep(2, labels={"changed": "yes"}), [], "alice")
    second = run(first.obj, dep(2), first.managers, "alice")
    assert second.obj["metadata"] == {"name": "d"}  # labels gone, metadata (its name) kept
