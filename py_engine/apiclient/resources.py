"""Names of API resources and the REST paths that address them.

A `Resource` is (group, version, plural, namespaced): enough to build every
path the client needs, for core, apps, batch and custom resources alike.
Only generic Kubernetes knowledge lives here; the spread resource is declared
by callers with `Resource.custom(...)`. Which workload kinds exist, and their
REST version and plural, is the workload registry's (`py_engine/model/workloads.py`,
a layer above, which this module may not import): the workload constants below
are held to it by tests/model/test_workload_registry.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class Resource:
    """One REST resource. `group` is "" for the core group."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def base(self) -> str:
        """`/api/v1` or `/apis/<group>/<version>`."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None) -> str:
        """The list/create/watch path; `namespace=None` lists across namespaces."""
        if self.namespaced and namespace:
            return f"{self.base()}/namespaces/{quote(namespace, safe='')}/{self.plural}"
        return f"{self.base()}/{self.plural}"

    def object_path(self, namespace: str | None, name: str, subresource: str | None = None) -> str:
        if self.namespaced and not namespace:
            raise ValueError(f"{self.plural} is namespaced: a namespace is required")
        path = f"{self.collection_path(namespace if self.namespaced else None)}/{quote(name, safe='')}"
        return f"{path}/{subresource}" if subresource else path

    @classmethod
    def custom(
        cls, group: str, version: str, plural: str, *, namespaced: bool = True, kind: str = ""
    ) -> Resource:
        return cls(group, version, plural, namespaced, kind)


PODS = Resource("", "v1", "pods", True, "Pod")
NODES = Resource("", "v1", "nodes", False, "Node")
NAMESPACES = Resource("", "v1", "namespaces", False, "Namespace")
DEPLOYMENTS = Resource("apps", "v1", "deployments", True, "Deployment")
REPLICASETS = Resource("apps", "v1", "replicasets", True, "ReplicaSet")
STATEFULSETS = Resource("apps", "v1", "statefulsets", True, "StatefulSet")
JOBS = Resource("batch", "v1", "jobs", True, "Job")
CLONESETS = Resource("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", False, "CustomResourceDefinition")
LEASES = Resource("coordination.k8s.io", "v1", "leases", True, "Lease")

KRUISE_STATEFULSETS = Resource("apps.kruise.io", "v1beta1", "statefulsets", True, "StatefulSet")

# (group, kind) -> resource: the workload kinds every cluster serves, and the
# OpenKruise ones that are watched only where their CRDs are installed.
BUILTIN_WORKLOADS: dict[tuple[str, str], Resource] = {
    ("apps", "Deployment"): DEPLOYMENTS,
    ("apps", "ReplicaSet"): REPLICASETS,
    ("apps", "StatefulSet"): STATEFULSETS,
    ("batch", "Job"): JOBS,
}
OPTIONAL_WORKLOADS: dict[tuple[str, str], Resource] = {
    ("apps.kruise.io", "CloneSet"): CLONESETS,
    ("apps.kruise.io", "StatefulSet"): KRUISE_STATEFULSETS,
}
