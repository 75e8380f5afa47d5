"""Generic Kubernetes access over the official client: plain dicts in and out,
errors as `KubeError`s, and watch-fed caches. No Spreadgate business logic, so
the webhook and the controller share it."""

from py_engine.apiclient.cache import CacheStats, WatchCache, object_key
from py_engine.apiclient.client import KubeClient, WatchStream
from py_engine.apiclient.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    KubeError,
    NotFound,
    ServerError,
    TooManyRequests,
    Unauthorized,
    error_for,
)
from py_engine.apiclient.resources import (
    CLONESETS,
    CRDS,
    DEPLOYMENTS,
    JOBS,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    REPLICASETS,
    STATEFULSETS,
    Resource,
)

__all__ = [
    "CLONESETS",
    "CRDS",
    "DEPLOYMENTS",
    "JOBS",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PODS",
    "REPLICASETS",
    "STATEFULSETS",
    "AlreadyExists",
    "BadRequest",
    "CacheStats",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeClient",
    "KubeError",
    "NotFound",
    "Resource",
    "ServerError",
    "TooManyRequests",
    "Unauthorized",
    "WatchCache",
    "WatchStream",
    "error_for",
    "object_key",
]
