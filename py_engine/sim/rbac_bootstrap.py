"""The default RBAC objects the embedded cluster starts with, as kube-apiserver creates them.

A subset of Kubernetes' bootstrap policy, enough that clients behave as on a fresh
cluster: `system:masters` is bound to `cluster-admin`; every authenticated user may read
discovery and health endpoints and create Self(Subject)AccessReviews / SelfSubjectRules-
Reviews / SelfSubjectReviews (`system:discovery`, `system:basic-user`); anonymous
requests may read health and version (`system:public-info-viewer`); and the user-facing
roles `admin`, `edit` and `view` are *aggregated* ClusterRoles fed by
`system:aggregate-to-{admin,edit,view}` and by anything else carrying the
`rbac.authorization.k8s.io/aggregate-to-*` labels (view feeds edit, edit feeds admin), so
an operator's CRD roles join them exactly as on a real cluster.

The aggregate-to roles list the built-in resources the embedded cluster serves (pods,
workloads, configuration, events, RBAC in a namespace) with the verbs upstream grants;
controller roles (`system:controller:*`), node and kube-system identities are not modelled.
"""

from __future__ import annotations

from py_engine.sim.identity import AUTHENTICATED, MASTERS, UNAUTHENTICATED
from py_engine.sim.interface import JSON

RBAC_V1 = "rbac.authorization.k8s.io/v1"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
_META = {
    "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
    "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
}

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_CORE_READ = [
    "configmaps",
    "endpoints",
    "persistentvolumeclaims",
    "persistentvolumeclaims/status",
    "pods",
    "pods/log",
    "pods/status",
    "replicationcontrollers",
    "replicationcontrollers/scale",
    "replicationcontrollers/status",
    "serviceaccounts",
    "services",
    "services/status",
]
_APPS = [
    "controllerrevisions",
    "daemonsets",
    "daemonsets/status",
    "deployments",
    "deployments/scale",
    "deployments/status",
    "replicasets",
    "replicasets/scale",
    "replicasets/status",
    "statefulsets",
    "statefulsets/scale",
    "statefulsets/status",
]
_DISCOVERY_URLS = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]


def _role(
    name: str, rules: list[JSON], labels: dict[str, str] | None = None, aggregate_from: str | None = None
) -> JSON:
    meta: JSON = {
        "name": name,
        "labels": {**_META["labels"], **(labels or {})},
        "annotations": dict(_META["annotations"]),
    }
    role: JSON = {"apiVersion": RBAC_V1, "kind": "ClusterRole", "metadata": meta, "rules": rules}
    if aggregate_from:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate_from: "true"}}]
        }
        role["rules"] = []
    return role


def _binding(name: str, role: str, groups: list[str]) -> JSON:
    return {
        "apiVersion": RBAC_V1,
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": dict(_META["labels"]),
            "annotations": dict(_META["annotations"]),
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups],
    }


def cluster_roles() -> list[JSON]:
    view: list[JSON] = [
        {
            "apiGroups": [""],
            "resources": [
                *_CORE_READ,
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "resourcequotas",
                "resourcequotas/status",
            ],
            "verbs": _READ,
        },
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": _READ},
        {"apiGroups": ["apps"], "resources": _APPS, "verbs": _READ},
        {
            "apiGroups": ["batch"],
            "resources": ["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
            "verbs": _READ,
        },
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _READ},
        {
            "apiGroups": ["policy"],
            "resources": ["poddisruptionbudgets", "poddisruptionbudgets/status"],
            "verbs": _READ,
        },
    ]
    edit: list[JSON] = [
        {
            "apiGroups": [""],
            "resources": [
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
            "verbs": _READ,
        },
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {
            "apiGroups": [""],
            "resources": ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"],
            "verbs": _WRITE,
        },
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": [
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
            "verbs": _WRITE,
        },
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
        {
            "apiGroups": ["apps"],
            "resources": [r for r in _APPS if not r.endswith("/status") and r != "controllerrevisions"],
            "verbs": _WRITE,
        },
        {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": _WRITE},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _WRITE},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _WRITE},
    ]
    admin: list[JSON] = [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["localsubjectaccessreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["rolebindings", "roles"],
            "verbs": [*_WRITE, *_READ],
        },
    ]
    return [
        _role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _role("system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]),
        _role("system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_URLS, "verbs": ["get"]}]),
        _role(
            "system:basic-user",
            [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _role("admin", [], aggregate_from="admin"),
        _role("edit", [], {AGGREGATE_TO + "admin": "true"}, aggregate_from="edit"),
        _role("view", [], {AGGREGATE_TO + "edit": "true"}, aggregate_from="view"),
        _role("system:aggregate-to-admin", admin, {AGGREGATE_TO + "admin": "true"}),
        _role("system:aggregate-to-edit", edit, {AGGREGATE_TO + "edit": "true"}),
        _role("system:aggregate-to-view", view, {AGGREGATE_TO + "view": "true"}),
    ]


def cluster_role_bindings() -> list[JSON]:
    return [
        _binding("cluster-admin", "cluster-admin", [MASTERS]),
        _binding("system:discovery", "system:discovery", [AUTHENTICATED]),
        _binding("system:basic-user", "system:basic-user", [AUTHENTICATED]),
        _binding("system:public-info-viewer", "system:public-info-viewer", [AUTHENTICATED, UNAUTHENTICATED]),
    ]
