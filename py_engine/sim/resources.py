"""What the emulated API serves: resource definitions and the registry of them.

A `ResourceDef` says everything the server needs to know about one resource:
its group/version/plural/kind, scope, subresources, whether objects carry a
`metadata.generation` (objects with a spec), where a `scale` subresource reads
and writes replicas, which strategic-merge schema applies, and which field
selectors are allowed. Built-in resources are declared here; CRDs are turned
into definitions by `defs_from_crd` when a CustomResourceDefinition is stored.

Storage is keyed by *group resource* (`deployments.apps`), not by version, so a
CRD served at several versions keeps one set of objects (conversion is the
identity apart from `apiVersion`, which is all the emulator needs).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine.semantics import strategic_merge as smp
from py_engine.sim.interface import JSON


@dataclass(frozen=True)
class ScalePaths:
    """JSON paths (`.spec.replicas` style) of a scale subresource."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = None
    selector_is_label_selector_dict: bool = False
    """Built-ins keep a `LabelSelector` dict at `.spec.selector`; CRDs keep the
    already-serialised string at `labelSelectorPath`."""


COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


@dataclass(frozen=True)
class ResourceDef:
    """One served resource at one version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    subresources: frozenset[str] = frozenset()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    has_generation: bool = False
    scale: ScalePaths | None = None
    merge_schema: smp.Schema | None = field(
        default_factory=lambda: smp.GENERIC_SCHEMA, repr=False, compare=False, hash=False
    )
    """None: strategic merge patch is unsupported (CRDs answer 415, like Kubernetes)."""
    field_selectors: frozenset[str] = COMMON_FIELDS
    reset_status_on_create: bool = True
    verbs: tuple[str, ...] = (
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    )
    crd: bool = False
    storage_version: str = ""
    printer_columns: tuple[JSON, ...] = field(default=(), compare=False, hash=False, repr=False)
    """CRDs: the version's `additionalPrinterColumns`, as declared."""
    schema: JSON | None = field(default=None, compare=False, hash=False, repr=False)
    """CRDs: the version's `schema.openAPIV3Schema` (served as OpenAPI; objects are pruned,
    defaulted and validated against it: `py_engine.sim.pruning`, `defaulting`, `structural`)."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """The `ClusterAPI` name, e.g. `v1/pods`, `apps/v1/deployments`."""
        return f"{self.api_version}/{self.plural}"

    @property
    def group_resource(self) -> str:
        """`pods`, `deployments.apps`: how Kubernetes names it in messages and storage."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


_POD_FIELDS = COMMON_FIELDS | {
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
}
_EVENT_FIELDS = COMMON_FIELDS | {
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
}


def _scalable_workload(plural: str, kind: str, short_name: str) -> ResourceDef:
    """An `apps/v1` workload with status and scale subresources (Deployment, ReplicaSet,
    StatefulSet): they differ only in their names."""
    return ResourceDef(
        "apps",
        "v1",
        plural,
        kind,
        True,
        kind.lower(),
        frozenset({"status", "scale"}),
        (short_name,),
        ("all",),
        has_generation=True,
        scale=ScalePaths(label_selector=".spec.selector", selector_is_label_selector_dict=True),
        merge_schema=smp.WORKLOAD_SCHEMA,
    )


def builtin_defs() -> list[ResourceDef]:
    """The built-in resources, registered when an `ApiServer` is constructed."""
    return [
        ResourceDef(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            "namespace",
            frozenset({"status"}),
            ("ns",),
            field_selectors=COMMON_FIELDS | {"status.phase"},
        ),
        ResourceDef(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            "pod",
            frozenset({"status", "eviction", "binding"}),
            ("po",),
            ("all",),
            merge_schema=smp.POD_SCHEMA,
            field_selectors=_POD_FIELDS,
        ),
        ResourceDef("", "v1", "bindings", "Binding", True, "binding", verbs=("create",)),
        ResourceDef(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            "node",
            frozenset({"status"}),
            ("no",),
            merge_schema=smp.NODE_SCHEMA,
            reset_status_on_create=False,
            field_selectors=COMMON_FIELDS | {"spec.unschedulable"},
        ),
        ResourceDef(
            "", "v1", "events", "Event", True, "event", short_names=("ev",), field_selectors=_EVENT_FIELDS
        ),
        ResourceDef("", "v1", "configmaps", "ConfigMap", True, "configmap", short_names=("cm",)),
        ResourceDef("", "v1", "secrets", "Secret", True, "secret", field_selectors=COMMON_FIELDS | {"type"}),
        ResourceDef(
            "", "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount", short_names=("sa",)
        ),
        ResourceDef(
            "",
            "v1",
            "services",
            "Service",
            True,
            "service",
            frozenset({"status"}),
            ("svc",),
            ("all",),
            reset_status_on_create=False,
        ),
        ResourceDef("coordination.k8s.io", "v1", "leases", "Lease", True, "lease"),
        # Served and stored so manifests that carry one apply as on a cluster; nothing acts on it
        # (no metrics pipeline): docs/embedded-cluster.md says so.
        ResourceDef(
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            "HorizontalPodAutoscaler",
            True,
            "horizontalpodautoscaler",
            frozenset({"status"}),
            ("hpa",),
            has_generation=True,
        ),
        _scalable_workload("deployments", "Deployment", "deploy"),
        _scalable_workload("replicasets", "ReplicaSet", "rs"),
        _scalable_workload("statefulsets", "StatefulSet", "sts"),
        ResourceDef("apps", "v1", "controllerrevisions", "ControllerRevision", True, "controllerrevision"),
        ResourceDef(
            "batch",
            "v1",
            "jobs",
            "Job",
            True,
            "job",
            frozenset({"status"}),
            (),
            ("all",),
            has_generation=True,
            merge_schema=smp.WORKLOAD_SCHEMA,
            field_selectors=COMMON_FIELDS | {"status.successful"},
        ),
        ResourceDef(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
            "mutatingwebhookconfiguration",
            has_generation=True,
        ),
        ResourceDef(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
            "validatingwebhookconfiguration",
            has_generation=True,
        ),
        ResourceDef(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            "customresourcedefinition",
            frozenset({"status"}),
            ("crd", "crds"),
            has_generation=True,
        ),
        *rbac_defs(),
        *review_defs(),
    ]


def rbac_defs() -> list[ResourceDef]:
    """`rbac.authorization.k8s.io/v1`, stored like any object and read by the authorizer."""
    group = "rbac.authorization.k8s.io"
    return [
        ResourceDef(group, "v1", "roles", "Role", True, "role"),
        ResourceDef(group, "v1", "rolebindings", "RoleBinding", True, "rolebinding"),
        ResourceDef(group, "v1", "clusterroles", "ClusterRole", False, "clusterrole"),
        ResourceDef(group, "v1", "clusterrolebindings", "ClusterRoleBinding", False, "clusterrolebinding"),
    ]


def review_defs() -> list[ResourceDef]:
    """The access-review kinds (py_engine/sim/access_reviews.py): create only, never stored."""
    authz, authn, create = "authorization.k8s.io", "authentication.k8s.io", ("create",)
    return [
        ResourceDef(
            authz,
            "v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
            False,
            "subjectaccessreview",
            verbs=create,
        ),
        ResourceDef(
            authz,
            "v1",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            False,
            "selfsubjectaccessreview",
            verbs=create,
        ),
        ResourceDef(
            authz,
            "v1",
            "localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            True,
            "localsubjectaccessreview",
            verbs=create,
        ),
        ResourceDef(
            authz,
            "v1",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            False,
            "selfsubjectrulesreview",
            verbs=create,
        ),
        ResourceDef(
            authn, "v1", "selfsubjectreviews", "SelfSubjectReview", False, "selfsubjectreview", verbs=create
        ),
    ]


def defs_from_crd(crd: Mapping[str, Any]) -> list[ResourceDef]:
    """One `ResourceDef` per served version of a CRD (identity conversion)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = str(spec.get("group", ""))
    plural = str(names.get("plural", ""))
    kind = str(names.get("kind", ""))
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
    storage = next(
        (str(v["name"]) for v in spec.get("versions") or [] if v.get("storage")),
        str(versions[0]["name"]) if versions else "",
    )
    out: list[ResourceDef] = []
    for ver in versions:
        subs = ver.get("subresources") or {}
        subresources = set()
        scale: ScalePaths | None = None
        if "status" in subs:
            subresources.add("status")
        if "scale" in subs:
            subresources.add("scale")
            sc = subs.get("scale") or {}
            scale = ScalePaths(
                str(sc.get("specReplicasPath", ".spec.replicas")),
                str(sc.get("statusReplicasPath", ".status.replicas")),
                sc.get("labelSelectorPath"),
            )
        out.append(
            ResourceDef(
                group,
                str(ver["name"]),
                plural,
                kind,
                namespaced,
                str(names.get("singular", kind.lower())),
                frozenset(subresources),
                tuple(names.get("shortNames") or ()),
                tuple(names.get("categories") or ()),
                has_generation=True,
                scale=scale,
                merge_schema=None,
                crd=True,
                storage_version=storage,
                printer_columns=tuple(
                    dict(c) for c in ver.get("additionalPrinterColumns") or () if isinstance(c, Mapping)
                ),
                schema=_version_schema(ver),
            )
        )
    return out


def _version_schema(version: Mapping[str, Any]) -> JSON | None:
    schema = (
        (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(version.get("schema"), Mapping)
        else None
    )
    return dict(schema) if isinstance(schema, Mapping) else None


class UnknownResource(LookupError):
    """No served resource matches the name."""


class Registry:
    """Thread-safe map from `ClusterAPI` names and URL parts to definitions."""

    def __init__(self, defs: Iterable[ResourceDef] = ()) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, ResourceDef] = {}
        for d in defs:
            self._by_key[d.key] = d

    def add(self, defs: Iterable[ResourceDef]) -> None:
        with self._lock:
            for d in defs:
                self._by_key[d.key] = d

    def remove_group_resource(self, group_resource: str) -> list[ResourceDef]:
        with self._lock:
            gone = [d for d in self._by_key.values() if d.group_resource == group_resource]
            for d in gone:
                del self._by_key[d.key]
            return gone

    def all(self) -> list[ResourceDef]:
        with self._lock:
            return list(self._by_key.values())

    def lookup(self, group: str, version: str, plural: str) -> ResourceDef | None:
        key = f"{group}/{version}/{plural}" if group else f"{version}/{plural}"
        with self._lock:
            return self._by_key.get(key)

    def resolve(self, name: str) -> ResourceDef:
        """`v1/pods`, `apps/v1/deployments`, or a bare plural / `plural.group`."""
        with self._lock:
            found = self._by_key.get(name)
            if found is not None:
                return found
            for d in self._by_key.values():
                if name in (d.plural, d.group_resource) or name in d.short_names:
                    return d
        raise UnknownResource(name)

    def versions_of(self, group_resource: str) -> list[ResourceDef]:
        with self._lock:
            return [d for d in self._by_key.values() if d.group_resource == group_resource]


def storage_key(rd: ResourceDef) -> str:
    return rd.group_resource


def get_path(obj: Mapping[str, Any], path: str) -> Any:
    """Read a `.a.b.c` (or `a.b.c`) path; None when any step is missing."""
    cur: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def set_path(obj: JSON, path: str, value: Any) -> None:
    """Write a `.a.b.c` path, creating intermediate maps."""
    parts = path.lstrip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value
