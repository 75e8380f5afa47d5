"""Kubernetes objects as their owners write them: a workload (Deployment, ReplicaSet,
StatefulSet, ...) with a one-container template, a WorkloadSpread over it, a pod owned by a
ReplicaSet, and the pod CREATE admission request the API server sends for it.

Shared by the benchmarks and the tests (the tests import it as `benchmarks.kube_objects`), so
that each builds these objects in one way. Plain dictionaries, no I/O.
"""

from __future__ import annotations

import json
from typing import Any, Protocol


def container_spec(container: str = "c", image: str = "i") -> dict[str, Any]:
    """A pod spec with one container."""
    return {"containers": [{"name": container, "image": image}]}


def workload(
    kind: str,
    name: str,
    *,
    replicas: int = 1,
    app: str | None = None,
    namespace: str | None = None,
    container: str = "c",
    image: str = "i",
    api_version: str = "apps/v1",
    **metadata: Any,
) -> dict[str, Any]:
    """A workload of `kind` whose selector and template label are `app=<app>` (default: the name).

    `namespace` and any other keyword go into its metadata."""
    app = app or name
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(metadata)
    template = {"metadata": {"labels": {"app": app}}, "spec": container_spec(container, image)}
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": app}}, "template": template}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def workload_spread(
    name: str,
    subsets: list[dict[str, Any]],
    target: str = "web",
    namespace: str | None = "default",
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    **metadata: Any,
) -> dict[str, Any]:
    """A WorkloadSpread over the workload `kind`/`target` with `subsets` (no namespace in its
    metadata when `namespace` is None); other keywords go into its metadata."""
    meta: dict[str, Any] = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {**meta, **metadata},
        "spec": {"targetRef": {"apiVersion": api_version, "kind": kind, "name": target}, "subsets": subsets},
    }


def controller_ref(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> dict[str, Any]:
    """The `ownerReferences` entry of the controlling owner."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}


def replicaset_of(deployment: dict[str, Any], template_hash: str = "h") -> dict[str, Any]:
    """The ReplicaSet `<deployment>-<hash>` the Deployment controller makes for `deployment` (stored)."""
    name = deployment["metadata"]["name"]
    app = deployment["spec"]["selector"]["matchLabels"]["app"]
    rs = workload(
        "ReplicaSet",
        f"{name}-{template_hash}",
        replicas=deployment["spec"]["replicas"],
        app=app,
        labels={"app": app, "pod-template-hash": template_hash},
        ownerReferences=[controller_ref("Deployment", name, deployment["metadata"]["uid"])],
    )
    rs["spec"]["template"] = deployment["spec"]["template"]
    return rs


class Creates(Protocol):
    """`KubeClient.create`, or anything that stores an object under a resource and namespace."""

    def create(self, resource: Any, namespace: str | None, body: dict[str, Any]) -> Any: ...


def create_deployment_and_replicaset(
    client: Creates,
    deployments: Any,
    replicasets: Any,
    app: str = "web",
    *,
    replicas: int = 3,
    template_hash: str = "h",
    namespace: str = "default",
) -> dict[str, Any]:
    """Stores Deployment `app` and its ReplicaSet `<app>-<hash>` through `client`; returns the
    stored ReplicaSet (`deployments`/`replicasets`: the client's names for the two resources)."""
    dep = client.create(deployments, namespace, workload("Deployment", app, replicas=replicas))
    stored: dict[str, Any] = client.create(replicasets, namespace, replicaset_of(dep, template_hash))
    return stored


def replicaset_pod(
    rs_uid: str,
    *,
    app: str = "web",
    template_hash: str = "h",
    name: str | None = None,
    namespace: str | None = "default",
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A pod of ReplicaSet `<app>-<hash>` (uid `rs_uid`): named `name`, or with only a
    generateName as the ReplicaSet controller sends it."""
    meta: dict[str, Any] = {"name": name} if name else {"generateName": f"{app}-{template_hash}-"}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {"app": app, "pod-template-hash": template_hash}
    meta["ownerReferences"] = [controller_ref("ReplicaSet", f"{app}-{template_hash}", rs_uid)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": container_spec() if spec is None else spec,
    }


def pod_create_request(pod: Any, uid: str = "u", *, dry_run: bool = False) -> dict[str, Any]:
    """The AdmissionRequest of a pod CREATE in `default` (with the pod's name when it has one;
    `pod` may be anything, for the tests that send malformed objects)."""
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": "CREATE",
        "namespace": "default",
        "object": pod,
        "dryRun": dry_run,
    }
    metadata = pod.get("metadata") if isinstance(pod, dict) else None
    if isinstance(metadata, dict) and "name" in metadata:
        request["name"] = metadata["name"]
    return request


def admission_review(request: dict[str, Any]) -> dict[str, Any]:
    """`request` in the AdmissionReview envelope the API server posts."""
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def scale_subresource(selector_path: str = ".status.selector") -> dict[str, Any]:
    """The CRD `scale` subresource over `.spec.replicas`/`.status.replicas`."""
    return {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": selector_path,
    }


def custom_resource_definition(
    group: str,
    kind: str,
    *,
    versions: tuple[str, ...] = ("v1",),
    storage: str | None = None,
    schema: dict[str, Any] | None = None,
    subresources: dict[str, Any] | None = None,
    short_names: list[str] | None = None,
) -> dict[str, Any]:
    """A namespaced CRD of `kind` (plural: lower-case kind + "s") served at every one of
    `versions`, stored at `storage` (default: the first), each with the `schema` (an
    openAPIV3Schema; none when None) and `subresources` (default: status; `{}`: none)."""
    singular = kind.lower()
    names: dict[str, Any] = {"plural": f"{singular}s", "singular": singular, "kind": kind}
    if short_names:
        names["shortNames"] = short_names
    stored = storage or versions[0]
    served = []
    for version in versions:
        entry: dict[str, Any] = {"name": version, "served": True, "storage": version == stored}
        if schema is not None:
            entry["schema"] = {"openAPIV3Schema": schema}
        chosen = {"status": {}} if subresources is None else subresources
        if chosen:
            entry["subresources"] = chosen
        served.append(entry)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{singular}s.{group}"},
        "spec": {"group": group, "scope": "Namespaced", "names": names, "versions": served},
    }


def united_deployment(
    name: str,
    subsets: list[dict[str, Any]],
    *,
    replicas: int | None = 2,
    app: str | None = None,
    namespace: str = "default",
    pod_spec: dict[str, Any] | None = None,
    workload_selector: bool = True,
    **metadata: Any,
) -> dict[str, Any]:
    """A UnitedDeployment `name` of Deployments (label `app=<app>`, default: the name) over
    `subsets`; `replicas` None leaves them out, `workload_selector` False leaves the
    Deployment template's own selector out. Other keywords go into its metadata."""
    app = app or name
    labels = {"app": app}
    deployment_spec: dict[str, Any] = {}
    if workload_selector:
        deployment_spec["selector"] = {"matchLabels": labels}
    deployment_spec["template"] = {
        "metadata": {"labels": labels},
        "spec": container_spec() if pod_spec is None else pod_spec,
    }
    spec: dict[str, Any] = {}
    if replicas is not None:
        spec["replicas"] = replicas
    spec["selector"] = {"matchLabels": labels}
    spec["template"] = {"deploymentTemplate": {"metadata": {"labels": labels}, "spec": deployment_spec}}
    spec["topology"] = {"subsets": subsets}
    return {
        "apiVersion": "spreadgate.dev/v1beta1",
        "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "spec": spec,
    }


def placed_pod(
    name: str,
    owner: dict[str, Any],
    subset: str,
    *,
    spread: str = "ws",
    namespace: str = "default",
    **fields: Any,
) -> dict[str, Any]:
    """A pod controlled by `owner` (an ownerReferences entry) that the webhook placed in
    `subset` of `spread`; `fields` are its other top-level fields (spec, status)."""
    matched = json.dumps({"name": spread, "subset": subset})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "ownerReferences": [owner],
            "annotations": {"spreadgate.dev/matched-workloadspread": matched},
        },
        **fields,
    }


def role_binding(
    name: str,
    role: str,
    subject: str,
    *,
    role_kind: str = "ClusterRole",
    subject_kind: str = "User",
    **subject_fields: Any,
) -> dict[str, Any]:
    """An RBAC (Cluster)RoleBinding body, named `name`, granting `role_kind` `role` to one
    subject (`subject_fields`: e.g. a ServiceAccount's namespace)."""
    return {
        "metadata": {"name": name},
        "subjects": [{"kind": subject_kind, "name": subject, **subject_fields}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
    }
