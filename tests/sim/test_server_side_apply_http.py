"""Server-side apply over HTTPS with the official client: field managers, conflicts, force.

The 409 bodies are compared whole with what kube-apiserver answers (its message, reason and
`FieldManagerConflict` causes are what kubectl prints to the user).
"""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from kubernetes.client import ApiException

from benchmarks.common import loopback_pool
from benchmarks.kube_objects import workload_spread
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer

APPLY = "application/apply-patch+yaml"
NS = "default"


def deployment(
    replicas: int | None = 2, *, labels: dict[str, str] | None = None, env: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.27"}
    if env is not None:
        container["env"] = env
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    meta: dict[str, Any] = {"name": "web"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def apply(apps_v1: kubernetes.client.AppsV1Api, body: dict[str, Any], manager: str | None, **kw: Any) -> Any:
    resp = apps_v1.patch_namespaced_deployment(
        "web", NS, body, field_manager=manager, _content_type=APPLY, _preload_content=False, **kw
    )
    try:
        return resp.status, json.loads(resp.data)
    finally:
        resp.release_conn()


def refused(
    apps_v1: kubernetes.client.AppsV1Api, body: dict[str, Any], manager: str | None, **kw: Any
) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        apply(apps_v1, body, manager, **kw)
    out: dict[str, Any] = json.loads(info.value.body)
    assert out["code"] == info.value.status
    return out


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{e['manager']}/{e['operation']}{'/' + e['subresource'] if e.get('subresource') else ''}": e
        for e in obj["metadata"].get("managedFields") or []
    }


def test_apply_creates_the_object_and_records_the_applier(
    apps_v1: kubernetes.client.AppsV1Api, apiserver: ApiServer
) -> None:
    code, created = apply(apps_v1, deployment(), "alice")
    assert code == 201
    assert created["spec"]["replicas"] == 2
    (entry,) = created["metadata"]["managedFields"]
    assert entry["manager"] == "alice" and entry["operation"] == "Apply" and entry["apiVersion"] == "apps/v1"
    assert entry["fieldsType"] == "FieldsV1" and entry["time"]
    spec = entry["fieldsV1"]["f:spec"]
    assert spec["f:replicas"] == {} and spec["f:selector"] == {}  # a LabelSelector is atomic
    container = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container == {".": {}, "f:image": {}, "f:name": {}}
    # Defaults the server filled in are nobody's: the applier owns what it sent.
    assert "f:strategy" not in spec
    assert apiserver.get("apps/v1/deployments", NS, "web")["metadata"]["managedFields"] == [entry]


def test_two_appliers_conflict_on_replicas_with_kube_apiservers_409(
    apps_v1: kubernetes.client.AppsV1Api,
) -> None:
    apply(apps_v1, deployment(2), "alice")
    body = refused(apps_v1, deployment(5), "bob")
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas',
        "reason": "Conflict",
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "alice"',
                    "field": ".spec.replicas",
                }
            ]
        },
        "code": 409,
    }
    # The same value is no conflict: both own it.
    code, shared = apply(apps_v1, deployment(2), "bob")
    assert code == 200
    owners = managers(shared)
    assert "f:replicas" in owners["alice/Apply"]["fieldsV1"]["f:spec"]
    assert "f:replicas" in owners["bob/Apply"]["fieldsV1"]["f:spec"]


def test_conflicts_with_an_updater_name_its_version_and_are_counted(
    apps_v1: kubernetes.client.AppsV1Api,
) -> None:
    apps_v1.create_namespaced_deployment(
        NS, deployment(2, labels={"tier": "front"}), field_manager="kubectl-client-side-apply"
    )
    body = refused(apps_v1, deployment(3, labels={"tier": "back"}), "kubectl")
    assert body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using '
        "apps/v1:\n- .metadata.labels.tier\n- .spec.replicas"
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".metadata.labels.tier",
        },
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".spec.replicas",
        },
    ]


def test_force_takes_ownership(apps_v1: kubernetes.client.AppsV1Api) -> None:
    apply(apps_v1, deployment(2), "alice")
    code, forced = apply(apps_v1, deployment(5), "bob", force=True)
    assert code == 200 and forced["spec"]["replicas"] == 5
    owners = managers(forced)
    assert "f:replicas" not in owners["alice/Apply"]["fieldsV1"]["f:spec"]
    assert owners["bob/Apply"]["fieldsV1"]["f:spec"]["f:replicas"] == {}
    # alice no longer owns replicas: leaving it out of her next apply removes nothing.
    code, again = apply(apps_v1, deployment(None), "alice")
    assert code == 200 and again["spec"]["replicas"] == 5


def test_fields_an_applier_drops_are_removed_unless_someone_else_owns_them(
    apps_v1: kubernetes.client.AppsV1Api,
) -> None:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    apply(apps_v1, deployment(labels={"x": "1", "y": "2"}, env=env), "alice")
    apply(
        apps_v1,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"y": "2"}}},
        "bob",
    )
    code, after = apply(apps_v1, deployment(labels={}, env=env[:1]), "alice")
    assert code == 200
    assert after["metadata"]["labels"] == {"y": "2"}  # x removed; y kept: bob owns it too
    (container,) = after["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "A", "value": "1"}]  # env is a list-map keyed by name


def test_apply_needs_a_field_manager(apps_v1: kubernetes.client.AppsV1Api) -> None:
    body = refused(apps_v1, deployment(), None)
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
        "apply patch",
        "reason": "Invalid",
        "details": {
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: is required for apply patch",
                    "field": "fieldManager",
                }
            ],
        },
        "code": 422,
    }


def test_dry_run_apply_stores_nothing(apps_v1: kubernetes.client.AppsV1Api, apiserver: ApiServer) -> None:
    code, created = apply(apps_v1, deployment(), "alice", dry_run="All")
    assert code == 201 and created["metadata"]["managedFields"][0]["manager"] == "alice"
    assert apiserver.list("apps/v1/deployments", NS)["items"] == []
    apply(apps_v1, deployment(2), "alice")
    code, changed = apply(apps_v1, deployment(7), "alice", dry_run="All")
    assert changed["spec"]["replicas"] == 7
    assert apiserver.get("apps/v1/deployments", NS, "web")["spec"]["replicas"] == 2


def test_the_first_apply_to_an_unmanaged_object_meets_before_first_apply(
    apps_v1: kubernetes.client.AppsV1Api, apiserver: ApiServer
) -> None:
    apps_v1.create_namespaced_deployment(NS, deployment(2))
    # Clearing managedFields (an object from before field tracking looks like this).
    cleared = apps_v1.patch_namespaced_deployment("web", NS, {"metadata": {"managedFields": [{}]}})
    assert cleared.metadata.managed_fields is None
    body = refused(apps_v1, deployment(4), "kubectl")
    assert body["message"] == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas'
    )
    code, applied = apply(apps_v1, deployment(2), "kubectl")
    assert code == 200
    assert set(managers(applied)) == {"kubectl/Apply", "before-first-apply/Update"}


def test_updates_are_recorded_under_the_writers_name(apps_v1: kubernetes.client.AppsV1Api) -> None:
    created = apps_v1.create_namespaced_deployment(NS, deployment(2), field_manager="creator")
    (entry,) = created.metadata.managed_fields
    assert (entry.manager, entry.operation) == ("creator", "Update")
    # Without fieldManager, the User-Agent's product names the writer (the client's is OpenAPI-Generator).
    patched = apps_v1.patch_namespaced_deployment("web", NS, {"spec": {"replicas": 3}})
    owners = {e.manager: e for e in patched.metadata.managed_fields}
    assert set(owners) == {"creator", "OpenAPI-Generator"}
    assert owners["OpenAPI-Generator"].fields_v1 == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owners["creator"].fields_v1["f:spec"]


def test_scale_records_a_scale_subresource_manager_that_apply_conflicts_with(
    apps_v1: kubernetes.client.AppsV1Api,
) -> None:
    apply(apps_v1, deployment(2), "alice")
    apps_v1.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 6}}, field_manager="scaler")
    body = refused(apps_v1, deployment(2), "alice")
    assert body["message"] == (
        'Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" '
        "using apps/v1: .spec.replicas"
    )


def test_status_apply_touches_status_only(apps_v1: kubernetes.client.AppsV1Api, apiserver: ApiServer) -> None:
    apply(apps_v1, deployment(2), "alice")
    resp = apps_v1.patch_namespaced_deployment_status(
        "web",
        NS,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": 9},
            "status": {"observedGeneration": 1},
        },
        field_manager="status-writer",
        _content_type=APPLY,
    )
    assert resp.status.observed_generation == 1 and resp.spec.replicas == 2
    owners = {(e.manager, e.subresource): e for e in resp.metadata.managed_fields}
    assert owners[("status-writer", "status")].fields_v1 == {"f:status": {"f:observedGeneration": {}}}


def test_apply_body_is_checked_like_kube_apiserver(apps_v1: kubernetes.client.AppsV1Api) -> None:
    wrong_version = {**deployment(), "apiVersion": "apps/v1beta1"}
    assert refused(apps_v1, wrong_version, "alice")["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1"
    )
    managed = deployment()
    managed["metadata"]["managedFields"] = [{"manager": "x", "operation": "Apply"}]
    assert refused(apps_v1, managed, "alice")["message"] == "metadata.managedFields must be nil"
    duplicate = deployment(env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])
    assert refused(apps_v1, duplicate, "alice")["code"] == 400


MALFORMED = [
    b"null",
    b"[]",
    b"5",
    b"a: [",
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata: null\n",
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: [1, 2]\n",
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
    b"spec: {template: {spec: {containers: [5]}}}\n",
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: [x]}\nspec: {replicas: many}\n",
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n",
    b"apiVersion: apps/v1\nkind: Pod\nmetadata: {name: web}\n",
]


def test_a_malformed_apply_is_a_client_error_never_a_crash(
    https_server: RunningServer, apps_v1: kubernetes.client.AppsV1Api
) -> None:
    apply(apps_v1, deployment(2), "alice")
    pool = loopback_pool(https_server.port, https_server.ca_pem)
    try:
        for body in MALFORMED:
            resp = pool.request(
                "PATCH",
                f"/apis/apps/v1/namespaces/{NS}/deployments/web?fieldManager=bob",
                body=body,
                headers={"Content-Type": APPLY, "Authorization": f"Bearer {https_server.token}"},
            )
            assert 400 <= resp.status < 500, (body, resp.data)  # the fixture checks no exception was logged
        # A YAML body (what the content type names) is read as such.
        yaml_body = (
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2  # same\n"
        )
        resp = pool.request(
            "PATCH",
            f"/apis/apps/v1/namespaces/{NS}/deployments/web?fieldManager=bob",
            body=yaml_body,
            headers={"Content-Type": APPLY, "Authorization": f"Bearer {https_server.token}"},
        )
        assert resp.status == 200, resp.data
        assert "bob" in {e["manager"] for e in json.loads(resp.data)["metadata"]["managedFields"]}
    finally:
        pool.close()


def test_fields_a_crd_schema_prunes_are_not_owned(
    apiserver: ApiServer, custom_objects: kubernetes.client.CustomObjectsApi
) -> None:
    from py_engine.assembled_stack import load_crd

    apiserver.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, load_crd())
    spread = workload_spread("s", [{"name": "a", "maxReplicas": 1}], namespace=None)
    spread["spec"]["bogus"] = 1
    resp = custom_objects.patch_namespaced_custom_object(
        "spreadgate.dev",
        "v1alpha1",
        NS,
        "workloadspreads",
        "s",
        spread,
        field_manager="alice",
        _content_type=APPLY,
        _preload_content=False,
    )
    try:
        assert resp.status == 201
        out = json.loads(resp.data)
    finally:
        resp.release_conn()
    assert "bogus" not in out["spec"]
    (entry,) = out["metadata"]["managedFields"]
    assert set(entry["fieldsV1"]["f:spec"]) == {"f:targetRef", "f:subsets"}
    assert entry["fieldsV1"]["f:spec"]["f:subsets"]['k:{"name":"a"}'] == {
        ".": {},
        "f:maxReplicas": {},
        "f:name": {},
    }
