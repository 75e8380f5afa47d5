"""Between-subset deletion cost: the band of every active pod (docs/design-workloadspread.md §2.5.3).

A band `b` is the reference cost divided by 100: with N subsets and subset
index k (reversed, N-1-k, for pods not of the latest version), pods within the
cap get `b = N - k`, the surplus `b = -(k + 1)`, pods of no subset
`b = -(N + 1)`. Surplus pods are the first `active - cap` of the subset in
Kubernetes' `ActivePods` order ("most disposable first", stable, so identical
pods go negative in list order). Reference mode writes `100 * b`; the refined
mode (`slots`) writes a value inside the same band.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model.pods import is_pod_active
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.scaledown import ScaledownInputError, active_pods_order, read_pods
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.grouping import NO_SUBSET, Grouping, pod_name

Obj = Mapping[str, Any]
REFERENCE_STEP = 100


def subset_bands(pods: Sequence[Obj], subset_count: int, index: int, cap: int | None) -> dict[str, int]:
    """Band of every active pod of one subset at (possibly reversed) `index`; `cap` None = unlimited."""
    active = [pod for pod in pods if is_pod_active(pod)]
    positive, negative = subset_count - index, -(index + 1)
    bands = {pod_name(pod): positive for pod in active}
    if cap is None or len(active) <= cap:
        return bands
    try:
        facts = read_pods(active)
    except ScaledownInputError as exc:
        raise ReconcileError(str(exc)) from None
    for position in active_pods_order(facts)[: len(active) - cap]:
        bands[pod_name(active[position])] = negative
    return bands


def spread_bands(spread: WorkloadSpread, grouping: Grouping, replicas: int, latest: str) -> dict[str, int]:
    """Band of every active pod of the spread, over all versions."""
    count = len(spread.subsets)
    bands: dict[str, int] = {}
    for version, buckets in grouping.buckets.items():
        reverse = version != latest
        for position, subset in enumerate(spread.subsets):
            index = count - 1 - position if reverse else position
            cap = None if subset.max_replicas is None else subset.max_replicas.resolve(replicas)
            bands.update(subset_bands(buckets.get(subset.name, []), count, index, cap))
        for pod in buckets.get(NO_SUBSET, []):
            if is_pod_active(pod):
                bands[pod_name(pod)] = -(count + 1)
    return bands
