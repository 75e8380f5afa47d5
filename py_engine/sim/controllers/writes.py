"""The writes every in-process controller makes the same way.

A controller patches or deletes an object it read from its informer; by the time the request
arrives the object may be gone (404), which for a controller means "nothing left to do", not
an error. The answer is recorded in the informer at once (`apply_local`/`delete_local`), so the
next sync does not act on the stale copy before the watch event arrives, as client-go's
informers do with a controller's own writes in `k8s.io/kubernetes/pkg/controller`.
"""

from __future__ import annotations

from collections.abc import Collection

from py_engine.sim.apiserver import ClusterAPI
from py_engine.sim.controllers.base import Informer
from py_engine.sim.interface import JSON, ApiError

__all__ = ["delete_through", "merge_patch", "patch_status"]

_GONE: Collection[int] = (404,)


def merge_patch(
    api: ClusterAPI,
    target: Informer | str,
    obj: JSON,
    body: JSON,
    *,
    subresource: str | None = None,
    tolerated: Collection[int] = _GONE,
) -> JSON | None:
    """Merge-patch `obj` with `body`. `target` is the resource, or its informer, which then
    records the answer. None when the server answers one of the `tolerated` codes."""
    informer = target if isinstance(target, Informer) else None
    resource = target.resource if isinstance(target, Informer) else target
    meta = obj["metadata"]
    try:
        result = api.patch(
            resource, meta.get("namespace"), meta["name"], body, "merge", subresource=subresource
        )
    except ApiError as exc:
        if exc.code in tolerated:
            return None
        raise
    if informer is not None:
        informer.apply_local(result)
    return result


def patch_status(api: ClusterAPI, informer: Informer, obj: JSON, status: JSON) -> int:
    """Write `status` through the status subresource: 1 write, or 0 when the object is gone."""
    return int(merge_patch(api, informer, obj, {"status": status}, subresource="status") is not None)


def delete_through(
    api: ClusterAPI,
    informer: Informer,
    obj: JSON,
    *,
    by_uid: bool = False,
    grace_period_seconds: int | None = None,
    propagation_policy: str | None = None,
    tolerated: Collection[int] = _GONE,
) -> JSON | None:
    """Delete `obj` (only this incarnation of the name when `by_uid`), the answer recorded in
    `informer`: the object as removed or as now terminating (an answer that names no object,
    a Status, falls back to `obj`). None when the server answers one of the `tolerated` codes."""
    meta = obj["metadata"]
    preconditions = {"uid": str(meta["uid"])} if by_uid and meta.get("uid") else None
    try:
        result = api.delete(
            informer.resource,
            meta.get("namespace"),
            meta["name"],
            grace_period_seconds=grace_period_seconds,
            propagation_policy=propagation_policy,
            preconditions=preconditions,
        )
    except ApiError as exc:
        if exc.code in tolerated:
            return None
        raise
    informer.delete_local(result if (result.get("metadata") or {}).get("name") else obj)
    return result
