"""In-process semantics of ApiServer (what controllers rely on)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.kube_objects import custom_resource_definition, scale_subresource
from py_engine.semantics.clock import VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.interface import ApiError

START = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


def pod(name: str = "p", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **spec},
    }


def deployment(name: str = "d", replicas: int = 2) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "x:1"}]},
            },
        },
    }


@pytest.fixture
def vapi() -> Any:
    api = ApiServer(VirtualClock(START), history_size=50, bookmark_interval=0.05)
    yield api
    api.close()


def code_of(fn: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn()
    return info.value


def test_bootstrap_namespaces_have_metadata_name_label(vapi: ApiServer) -> None:
    names = {n["metadata"]["name"]: n for n in vapi.list("v1/namespaces")["items"]}
    assert set(names) == {"default", "kube-system", "kube-node-lease", "kube-public"}
    for name, ns in names.items():
        assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == name
        assert ns["status"]["phase"] == "Active"


def test_create_sets_metadata_from_clock_and_global_rv(vapi: ApiServer) -> None:
    a = vapi.create("v1/pods", "default", pod("a"))
    b = vapi.create("v1/pods", "default", {**pod(), "metadata": {"generateName": "web-"}})
    assert a["metadata"]["creationTimestamp"] == "2030-01-02T03:04:05Z"
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    assert b["metadata"]["name"].startswith("web-") and len(b["metadata"]["name"]) == len("web-") + 5
    assert a["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert a["spec"]["terminationGracePeriodSeconds"] == 30
    assert code_of(lambda: vapi.create("v1/pods", "default", pod("a"))).reason == "AlreadyExists"


def test_create_errors(vapi: ApiServer) -> None:
    assert code_of(lambda: vapi.create("v1/pods", "nope", pod())).code == 404
    err = code_of(lambda: vapi.create("v1/pods", "default", {"metadata": {"name": "x"}, "spec": {}}))
    assert err.code == 422 and err.status["details"]["causes"][0]["field"] == "spec.containers"
    assert code_of(lambda: vapi.create("v1/pods", "default", {"spec": {}})).code == 422
    assert code_of(lambda: vapi.create("v1/pods", "default", pod("Bad_Name"))).code == 422
    assert code_of(lambda: vapi.create("v1/pods", "default", {**pod(), "kind": "Node"})).code == 400
    assert code_of(lambda: vapi.create("v1/widgets", "default", pod())).code == 404
    bad_sel = deployment()
    bad_sel["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    err = code_of(lambda: vapi.create("apps/v1/deployments", "default", bad_sel))
    assert err.code == 422 and "does not match template" in err.status["message"]


def test_update_conflict_noop_and_generation(vapi: ApiServer) -> None:
    d = vapi.create("apps/v1/deployments", "default", deployment())
    assert d["metadata"]["generation"] == 1
    same = vapi.update("apps/v1/deployments", "default", "d", d)
    assert same["metadata"]["resourceVersion"] == d["metadata"]["resourceVersion"]  # no-op writes nothing
    d["metadata"]["labels"] = {"x": "y"}
    d2 = vapi.update("apps/v1/deployments", "default", "d", d)
    assert d2["metadata"]["generation"] == 1  # metadata only
    d2["spec"]["replicas"] = 5
    d3 = vapi.update("apps/v1/deployments", "default", "d", d2)
    assert d3["metadata"]["generation"] == 2
    stale = vapi.update  # using d2's (old) resourceVersion now conflicts
    err = code_of(lambda: stale("apps/v1/deployments", "default", "d", d2))
    assert err.code == 409 and err.reason == "Conflict"
    assert "the object has been modified" in err.status["message"]
    d3["spec"]["selector"] = {"matchLabels": {"app": "d", "x": "y"}}
    assert code_of(lambda: vapi.update("apps/v1/deployments", "default", "d", d3)).code == 422


def test_status_subresource_isolation(vapi: ApiServer) -> None:
    d = vapi.create("apps/v1/deployments", "default", deployment())
    d["status"] = {"replicas": 7}
    d["spec"]["replicas"] = 3
    main = vapi.update("apps/v1/deployments", "default", "d", d)
    assert main["spec"]["replicas"] == 3 and main["status"] == {}
    main["status"] = {"replicas": 9}
    main["spec"]["replicas"] = 100
    st = vapi.update("apps/v1/deployments", "default", "d", main, subresource="status")
    assert st["status"] == {"replicas": 9} and st["spec"]["replicas"] == 3
    assert st["metadata"]["generation"] == main["metadata"]["generation"]
    patched = vapi.patch(
        "apps/v1/deployments",
        "default",
        "d",
        {"status": {"readyReplicas": 1}, "spec": {"replicas": 50}},
        "merge",
        subresource="status",
    )
    assert patched["status"] == {"replicas": 9, "readyReplicas": 1} and patched["spec"]["replicas"] == 3
    assert code_of(lambda: vapi.update("v1/configmaps", "default", "x", {}, subresource="status")).code == 404


def test_patch_types(vapi: ApiServer) -> None:
    vapi.create("v1/pods", "default", pod("p"))
    out = vapi.patch("v1/pods", "default", "p", {"metadata": {"labels": {"a": "b"}}}, "merge")
    assert out["metadata"]["labels"] == {"app": "web", "a": "b"}
    out = vapi.patch(
        "v1/pods",
        "default",
        "p",
        [{"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}}],
        "json",
    )
    assert out["metadata"]["annotations"] == {"k": "v"}
    out = vapi.patch("v1/pods", "default", "p", {"metadata": {"finalizers": ["x/y"]}}, "strategic")
    assert out["metadata"]["finalizers"] == ["x/y"]
    assert (
        code_of(
            lambda: vapi.patch(
                "v1/pods", "default", "p", [{"op": "test", "path": "/metadata/name", "value": "q"}], "json"
            )
        ).code
        == 422
    )
    assert code_of(lambda: vapi.patch("v1/pods", "default", "p", [{"op": "bogus"}], "json")).code == 400
    stale = {"metadata": {"resourceVersion": "1", "labels": {"z": "z"}}}
    assert code_of(lambda: vapi.patch("v1/pods", "default", "p", stale, "merge")).code == 409
    # pod spec is immutable apart from images and a few fields
    err = code_of(
        lambda: vapi.patch("v1/pods", "default", "p", {"spec": {"restartPolicy": "Never"}}, "merge")
    )
    assert err.code == 422
    out = vapi.patch(
        "v1/pods", "default", "p", {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}, "strategic"
    )
    assert out["spec"]["containers"][0]["image"] == "nginx:2"


def test_dry_run_stores_nothing(vapi: ApiServer) -> None:
    rv = vapi.resource_version()
    out = vapi.create("v1/pods", "default", pod("dry"), dry_run=True)
    assert out["metadata"]["name"] == "dry" and out["metadata"]["uid"]
    assert code_of(lambda: vapi.get("v1/pods", "default", "dry")).code == 404
    vapi.create("v1/pods", "default", pod("real"))
    rv = vapi.resource_version()
    vapi.patch("v1/pods", "default", "real", {"metadata": {"labels": {"q": "1"}}}, "merge", dry_run=True)
    vapi.delete("v1/pods", "default", "real", dry_run=True)
    assert vapi.resource_version() == rv
    assert "q" not in vapi.get("v1/pods", "default", "real")["metadata"]["labels"]


def test_graceful_pod_deletion(vapi: ApiServer) -> None:
    vapi.create("v1/pods", "default", pod("unscheduled"))
    gone = vapi.delete("v1/pods", "default", "unscheduled")
    assert gone["metadata"]["name"] == "unscheduled"
    assert code_of(lambda: vapi.get("v1/pods", "default", "unscheduled")).code == 404

    vapi.create("v1/pods", "default", pod("bound"))
    vapi.create(
        "v1/pods", "default", {"target": {"kind": "Node", "name": "n1"}}, subresource="binding", name="bound"
    )
    term = vapi.delete("v1/pods", "default", "bound")
    assert term["metadata"]["deletionTimestamp"] == "2030-01-02T03:04:35Z"  # now + 30s grace
    assert term["metadata"]["deletionGracePeriodSeconds"] == 30
    assert vapi.get("v1/pods", "default", "bound")["metadata"]["deletionTimestamp"]
    shorter = vapi.delete("v1/pods", "default", "bound", grace_period_seconds=5)
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 5
    vapi.delete("v1/pods", "default", "bound", grace_period_seconds=0)  # the kubelet confirms
    assert code_of(lambda: vapi.get("v1/pods", "default", "bound")).code == 404


def test_finalizers_hold_objects_until_removed(vapi: ApiServer) -> None:
    vapi.create("v1/configmaps", "default", {"metadata": {"name": "cm", "finalizers": ["example.com/hold"]}})
    held = vapi.delete("v1/configmaps", "default", "cm")
    assert held["metadata"]["deletionTimestamp"]
    obj = vapi.get("v1/configmaps", "default", "cm")
    obj["metadata"]["finalizers"].append("example.com/new")
    err = code_of(lambda: vapi.update("v1/configmaps", "default", "cm", obj))
    assert err.code == 422 and "no new finalizers" in err.status["message"]
    vapi.patch("v1/configmaps", "default", "cm", {"metadata": {"finalizers": None}}, "merge")
    assert code_of(lambda: vapi.get("v1/configmaps", "default", "cm")).code == 404


@pytest.mark.parametrize(
    ("policy", "finalizer"), [("Foreground", "foregroundDeletion"), ("Orphan", "orphan")]
)
def test_propagation_policies_add_gc_finalizers(vapi: ApiServer, policy: str, finalizer: str) -> None:
    vapi.create("apps/v1/deployments", "default", deployment())
    out = vapi.delete("apps/v1/deployments", "default", "d", propagation_policy=policy)
    assert out["metadata"]["finalizers"] == [finalizer] and out["metadata"]["deletionTimestamp"]
    vapi.patch("apps/v1/deployments", "default", "d", {"metadata": {"finalizers": []}}, "merge")
    assert code_of(lambda: vapi.get("apps/v1/deployments", "default", "d")).code == 404


def test_background_deletes_owner_immediately_and_preconditions(vapi: ApiServer) -> None:
    d = vapi.create("apps/v1/deployments", "default", deployment())
    err = code_of(lambda: vapi.delete("apps/v1/deployments", "default", "d", preconditions={"uid": "other"}))
    assert err.code == 409 and "Precondition failed" in err.status["message"]
    vapi.delete(
        "apps/v1/deployments",
        "default",
        "d",
        propagation_policy="Background",
        preconditions={"uid": d["metadata"]["uid"]},
    )
    assert code_of(lambda: vapi.get("apps/v1/deployments", "default", "d")).code == 404
    assert code_of(lambda: vapi.delete("apps/v1/deployments", "default", "d")).code == 404
    vapi.create("apps/v1/deployments", "default", deployment())
    assert (
        code_of(
            lambda: vapi.delete("apps/v1/deployments", "default", "d", propagation_policy="Sideways")
        ).code
        == 422
    )


def test_namespace_deletion_removes_contents(vapi: ApiServer) -> None:
    vapi.create("v1/namespaces", None, {"metadata": {"name": "team"}})
    vapi.create("v1/pods", "team", pod("a"))
    vapi.create("v1/configmaps", "team", {"metadata": {"name": "held", "finalizers": ["x.io/y"]}})
    out = vapi.delete("v1/namespaces", None, "team")
    assert out["status"]["phase"] == "Terminating"
    assert code_of(lambda: vapi.create("v1/pods", "team", pod("b"))).code == 403
    assert vapi.list("v1/pods", "team")["items"] == []
    vapi.patch("v1/configmaps", "team", "held", {"metadata": {"finalizers": None}}, "merge")
    assert code_of(lambda: vapi.get("v1/namespaces", None, "team")).code == 404
    assert code_of(lambda: vapi.delete("v1/namespaces", None, "default")).code == 403


def test_binding_eviction_and_scale(vapi: ApiServer) -> None:
    vapi.create("v1/pods", "default", pod("p"))
    vapi.create("v1/pods", "default", {"target": {"name": "n1"}}, subresource="binding", name="p")
    bound = vapi.get("v1/pods", "default", "p")
    assert bound["spec"]["nodeName"] == "n1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in bound["status"]["conditions"])
    err = code_of(
        lambda: vapi.create("v1/pods", "default", {"target": {"name": "n2"}}, subresource="binding", name="p")
    )
    assert err.code == 409 and "already assigned" in err.status["message"]
    ev = vapi.create(
        "v1/pods",
        "default",
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "p"},
            "deleteOptions": {"gracePeriodSeconds": 0},
        },
        subresource="eviction",
        name="p",
    )
    assert ev["status"] == "Success" and ev["code"] == 201
    assert code_of(lambda: vapi.get("v1/pods", "default", "p")).code == 404
    assert (
        code_of(
            lambda: vapi.create("v1/pods", "default", {"kind": "Eviction"}, subresource="eviction", name="p")
        ).code
        == 404
    )

    vapi.create("apps/v1/statefulsets", "default", {**deployment("s", 1)})
    scale = vapi.get("apps/v1/statefulsets", "default", "s", subresource="scale")
    assert (
        scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=s"
    )
    scale["spec"]["replicas"] = 4
    out = vapi.update("apps/v1/statefulsets", "default", "s", scale, subresource="scale")
    assert out["spec"]["replicas"] == 4
    assert vapi.get("apps/v1/statefulsets", "default", "s")["spec"]["replicas"] == 4
    assert (
        code_of(lambda: vapi.update("apps/v1/statefulsets", "default", "s", scale, subresource="scale")).code
        == 409
    )
    out = vapi.patch(
        "apps/v1/statefulsets", "default", "s", {"spec": {"replicas": 2}}, "merge", subresource="scale"
    )
    assert out["spec"]["replicas"] == 2
    bad = {"spec": {"replicas": -1}}
    assert (
        code_of(
            lambda: vapi.patch("apps/v1/statefulsets", "default", "s", bad, "merge", subresource="scale")
        ).code
        == 422
    )


def test_list_selectors(vapi: ApiServer) -> None:
    for i, (app, node) in enumerate([("web", "n1"), ("web", ""), ("db", "n1")]):
        vapi.create("v1/pods", "default", pod(f"p{i}", {"app": app, "i": str(i)}))
        if node:
            vapi.create("v1/pods", "default", {"target": {"name": node}}, subresource="binding", name=f"p{i}")
    names = lambda out: [p["metadata"]["name"] for p in out["items"]]  # noqa: E731
    assert names(vapi.list("v1/pods", "default", label_selector="app=web")) == ["p0", "p1"]
    assert names(vapi.list("v1/pods", "default", label_selector="app notin (web),i")) == ["p2"]
    assert names(vapi.list("v1/pods", None, field_selector="spec.nodeName=n1")) == ["p0", "p2"]
    assert names(vapi.list("v1/pods", None, field_selector="spec.nodeName=")) == ["p1"]
    assert names(vapi.list("v1/pods", None, field_selector="status.phase!=Running,metadata.name=p1")) == [
        "p1"
    ]
    out = vapi.list("v1/pods", "kube-system")
    assert out["items"] == [] and out["metadata"]["resourceVersion"] == vapi.resource_version()
    assert code_of(lambda: vapi.list("v1/pods", label_selector="app in (web")).code == 400
    assert code_of(lambda: vapi.list("v1/pods", field_selector="spec.image=x")).code == 400


def test_watch_resume_transitions_and_410(vapi: ApiServer) -> None:
    base = vapi.resource_version()
    vapi.create("v1/pods", "default", pod("a", {"app": "web"}))
    vapi.patch("v1/pods", "default", "a", {"metadata": {"labels": {"app": "db"}}}, "merge")
    vapi.patch("v1/pods", "default", "a", {"metadata": {"labels": {"app": "web"}}}, "merge")
    vapi.delete("v1/pods", "default", "a")
    w = vapi.watch("v1/pods", "default", resource_version=base, label_selector="app=web", timeout_seconds=0.5)
    types = [ev["type"] for ev in w]
    assert types == ["ADDED", "DELETED", "ADDED", "DELETED"]  # moving out of / into the selection
    for _ in range(60):  # history holds 50 events
        vapi.create("v1/configmaps", "default", {"metadata": {"generateName": "c-"}})
    err = code_of(lambda: vapi.watch("v1/pods", resource_version=base))
    assert err.code == 410 and err.reason == "Expired"


def test_watch_without_rv_starts_with_current_state_then_live(vapi: ApiServer, deadline_poll: Any) -> None:
    vapi.create("v1/pods", "default", pod("old"))
    w = vapi.watch("v1/pods", "default", allow_bookmarks=True, timeout_seconds=5)
    seen: list[tuple[str, str]] = []

    def consume() -> None:
        for ev in w:
            seen.append((ev["type"], ev["object"]["metadata"].get("name", "")))

    t = threading.Thread(target=consume)
    t.start()
    try:
        deadline_poll(lambda: ("ADDED", "old") in seen, what="synthetic ADDED")
        vapi.create("v1/pods", "default", pod("new"))
        deadline_poll(lambda: ("ADDED", "new") in seen, what="live ADDED")
        deadline_poll(lambda: any(t == "BOOKMARK" for t, _ in seen), what="a bookmark")
    finally:
        w.close()
        t.join(5)
    assert not t.is_alive()
    assert seen[0] == ("ADDED", "old")


def test_crd_served_workloadspread_with_status_and_scale(vapi: ApiServer) -> None:
    crd = custom_resource_definition(
        "apps.kruise.io",
        "CloneSet",
        versions=("v1alpha1",),
        subresources={"status": {}, "scale": scale_subresource(".status.labelSelector")},
    )
    out = vapi.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, crd)
    assert any(c["type"] == "Established" and c["status"] == "True" for c in out["status"]["conditions"])
    cs = vapi.create(
        "apps.kruise.io/v1alpha1/clonesets",
        "default",
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "c"},
            "spec": {"replicas": 3},
            "status": {"ignored": True},
        },
    )
    assert "status" not in cs and cs["metadata"]["generation"] == 1
    vapi.patch(
        "apps.kruise.io/v1alpha1/clonesets",
        "default",
        "c",
        {"status": {"replicas": 2, "labelSelector": "app=c"}},
        "merge",
        subresource="status",
    )
    scale = vapi.get("apps.kruise.io/v1alpha1/clonesets", "default", "c", subresource="scale")
    assert scale["spec"]["replicas"] == 3 and scale["status"] == {"replicas": 2, "selector": "app=c"}
    scale["spec"]["replicas"] = 6
    vapi.update("apps.kruise.io/v1alpha1/clonesets", "default", "c", scale, subresource="scale")
    got = vapi.get("apps.kruise.io/v1alpha1/clonesets", "default", "c")
    assert got["spec"]["replicas"] == 6 and got["metadata"]["generation"] == 2
    err = code_of(
        lambda: vapi.patch("apps.kruise.io/v1alpha1/clonesets", "default", "c", {"spec": {}}, "strategic")
    )
    assert err.code == 415
    vapi.delete("apiextensions.k8s.io/v1/customresourcedefinitions", None, "clonesets.apps.kruise.io")
    assert code_of(lambda: vapi.list("apps.kruise.io/v1alpha1/clonesets")).code == 404


def test_job_selector_is_generated(vapi: ApiServer) -> None:
    job = {
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            }
        },
    }
    out = vapi.create("batch/v1/jobs", "default", job)
    uid = out["metadata"]["uid"]
    assert out["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert out["spec"]["template"]["metadata"]["labels"]["job-name"] == "j"
    del job["spec"]["template"]["spec"]["restartPolicy"]
    job["metadata"]["name"] = "j2"
    assert code_of(lambda: vapi.create("batch/v1/jobs", "default", job)).code == 422


def test_concurrent_unconditional_patches_all_apply(vapi: ApiServer) -> None:
    vapi.create("v1/configmaps", "default", {"metadata": {"name": "c"}, "data": {}})

    def worker(i: int) -> None:
        for j in range(20):
            vapi.patch("v1/configmaps", "default", "c", {"data": {f"k{i}-{j}": "v"}}, "merge")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(vapi.get("v1/configmaps", "default", "c")["data"]) == 80


def test_user_scoped_view_and_in_process_faults(vapi: ApiServer) -> None:
    scoped = vapi.as_user("system:serviceaccount:kube-system:replicaset-controller")
    scoped.create("v1/pods", "default", pod("x"))
    assert scoped.get("v1/pods", "default", "x")["metadata"]["name"] == "x"
    vapi.faults.set_spec("pods:get:error500=1")
    assert (
        vapi.get("v1/pods", "default", "x")["metadata"]["name"] == "x"
    )  # in-process calls are exempt by default
    vapi.faults.in_process = True
    assert code_of(lambda: vapi.get("v1/pods", "default", "x")).code == 500
    vapi.faults.clear()
    assert vapi.get("v1/pods", "default", "x")


def test_leases_events_and_nodes(vapi: ApiServer) -> None:
    lease = vapi.create(
        "coordination.k8s.io/v1/leases",
        "kube-node-lease",
        {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40}},
    )
    lease["spec"]["renewTime"] = "2030-01-02T03:04:05.000000Z"
    assert vapi.update("coordination.k8s.io/v1/leases", "kube-node-lease", "n1", lease)["spec"]["renewTime"]
    vapi.create(
        "v1/events",
        "default",
        {
            "metadata": {"name": "p.1"},
            "reason": "Scheduled",
            "type": "Normal",
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        },
    )
    vapi.create(
        "v1/events",
        "default",
        {
            "metadata": {"name": "q.1"},
            "reason": "Killing",
            "type": "Normal",
            "involvedObject": {"kind": "Pod", "name": "q", "namespace": "default"},
        },
    )
    hits = vapi.list("v1/events", "default", field_selector="involvedObject.name=q,reason=Killing")["items"]
    assert [e["metadata"]["name"] for e in hits] == ["q.1"]
    node = vapi.create(
        "v1/nodes",
        None,
        {"metadata": {"name": "n1", "labels": {"zone": "a"}}, "status": {"capacity": {"cpu": "4"}}},
    )
    assert node["status"] == {"capacity": {"cpu": "4"}}  # node status is kept on create (the kubelet's)
    assert node["metadata"].get("namespace") is None
    assert [n["metadata"]["name"] for n in vapi.list("v1/nodes", label_selector="zone=a")["items"]] == ["n1"]


def test_generated_name_collisions_are_retried(vapi: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    picks = iter("bbbbb" + "bbbbb" + "ccccc")
    monkeypatch.setattr(vapi._name_chars, "choice", lambda chars: next(picks))
    first = vapi.create("v1/configmaps", "default", {"metadata": {"generateName": "x-"}})
    second = vapi.create("v1/configmaps", "default", {"metadata": {"generateName": "x-"}})
    assert (first["metadata"]["name"], second["metadata"]["name"]) == ("x-bbbbb", "x-ccccc")
    err = code_of(lambda: vapi.create("v1/configmaps", "default", {"metadata": {"name": "x-bbbbb"}}))
    assert err.reason == "AlreadyExists"


def test_seeded_generated_names_repeat_and_unseeded_ones_do_not() -> None:
    def names(server: ApiServer) -> list[str]:
        return [
            server.create("v1/configmaps", "default", {"metadata": {"generateName": "x-"}})["metadata"][
                "name"
            ]
            for _ in range(3)
        ]

    assert names(ApiServer(name_seed=3)) == names(ApiServer(name_seed=3))
    assert names(ApiServer(name_seed=3)) != names(ApiServer(name_seed=4))
    assert names(ApiServer()) != names(ApiServer())


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (None, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
        ({}, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
        (
            {"rollingUpdate": {"maxSurge": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
        ),
        ({"type": "Recreate"}, {"type": "Recreate"}),
    ],
)
def test_deployment_strategy_is_defaulted_field_by_field(
    vapi: ApiServer, strategy: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    # `kubectl create deployment` sends `strategy: {}`; `kubectl describe` then read a blank StrategyType.
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "x"}},
        "template": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
    }
    if strategy is not None:
        spec["strategy"] = strategy
    created = vapi.create("apps/v1/deployments", "default", {"metadata": {"name": "d"}, "spec": spec})
    assert created["spec"]["strategy"] == expected


def test_horizontal_pod_autoscalers_are_served_and_stored(vapi: ApiServer) -> None:
    # ud-ecs-then-serverless.yaml ships one: `kubectl apply -f` of the example must not fail here.
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "spreadgate.dev/v1beta1",
                "kind": "UnitedDeployment",
                "name": "web",
            },
            "minReplicas": 2,
            "maxReplicas": 30,
        },
    }
    created = vapi.create("autoscaling/v2/horizontalpodautoscalers", "default", hpa)
    assert created["metadata"]["generation"] == 1
    stored = vapi.get("autoscaling/v2/horizontalpodautoscalers", "default", "web")
    assert stored["spec"]["maxReplicas"] == 30
