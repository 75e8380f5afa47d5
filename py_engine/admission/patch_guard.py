"""The subset patch allowlist at admission: defence in depth behind validation.

A WorkloadSpread stored before the allowlist existed, or created while the
validating webhook was down, still reaches the mutating webhook. Before a
subset's `patch` is applied, the rule validation uses
(`data.spreadgate.validation.patch_violation`, policies/validation/patch.rego)
is evaluated for the spread, with the target workload's selector and the pod's
own containers standing in for the workload: selector labels and containers
the pod does not have are caught even where validation could not see the
workload (conftest on a bare file). A refused patch is left out: the pod is
admitted into its subset (node affinity, tolerations, matched annotation)
without it, with a warning naming the refused fields (docs/operations.md,
"Subset patch allowlist").

Verdicts are cached by (spread uid and generation, allowlist, workload selector,
container names), so the policy runs once per spread generation and workload,
not per pod. An evaluation that fails refuses the patch (fail closed) and is
not cached; without an engine every patch is refused.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from py_engine.admission.context import AdmissionContext
from py_engine.admission.inject import inject
from py_engine.admission.tracing import metadata_of, name_of, namespace_of
from py_engine.model.constants import API_VERSION, KIND
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.validation import PATCH_VIOLATION_RULE, build_review_input

CACHE_ENTRIES = 1024

Refusals = Mapping[int, tuple[str, ...]]
"""Subset index -> the patch fields the allowlist refuses (field paths of the spread)."""


def _subsets(spread: Mapping[str, Any]) -> list[Any]:
    spec = spread.get("spec")
    subsets = spec.get("subsets") if isinstance(spec, Mapping) else None
    return subsets if isinstance(subsets, list) else []


def subset_index(spread: Mapping[str, Any], subset: str) -> int | None:
    """Index of the first subset named `subset` (the one `inject` applies)."""
    for i, entry in enumerate(_subsets(spread)):
        if isinstance(entry, Mapping) and entry.get("name") == subset:
            return i
    return None


def has_patch(spread: Mapping[str, Any], subset: str) -> bool:
    index = subset_index(spread, subset)
    return index is not None and isinstance(_subsets(spread)[index].get("patch"), Mapping)


def _names(containers: Any) -> list[str]:
    if not isinstance(containers, list):
        return []
    return [c["name"] for c in containers if isinstance(c, Mapping) and isinstance(c.get("name"), str)]


def checked_workload(pod: Mapping[str, Any], workload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The workload the policy checks a patch against at admission: the real workload's
    selector (when it was found) and the pod's own containers as the pod template."""
    pod_spec = pod.get("spec")
    spec = pod_spec if isinstance(pod_spec, Mapping) else {}
    template = {"containers": [{"name": n} for n in _names(spec.get("containers"))],
                "initContainers": [{"name": n} for n in _names(spec.get("initContainers"))]}
    checked: dict[str, Any] = {"template": {"spec": template}}
    workload_spec = workload.get("spec") if workload is not None else None
    if isinstance(workload_spec, Mapping) and workload_spec.get("selector") is not None:
        checked["selector"] = workload_spec["selector"]
    return {"spec": checked}


def cache_key(spread: Mapping[str, Any], checked: Mapping[str, Any], allowed: tuple[str, ...]) -> Hashable:
    """(namespace, name, uid and generation, allowlist, checked workload). A spread without uid
    or generation (an offline snapshot) is keyed by its spec instead."""
    meta = metadata_of(spread)
    uid, generation = meta.get("uid"), meta.get("generation")
    if isinstance(uid, str) and uid and isinstance(generation, int) and not isinstance(generation, bool):
        identity: Hashable = (uid, generation)
    else:
        identity = json.dumps(spread.get("spec"), sort_keys=True, default=str)
    return (namespace_of(spread), name_of(spread), identity, allowed, json.dumps(checked, sort_keys=True, default=str))


def parse_refusals(result: Any) -> dict[int, tuple[str, ...]]:
    """`patch_violation` results grouped by `details.subset`; raises PolicyError on a non-list."""
    if result is None:
        return {}
    if not isinstance(result, list):
        raise PolicyError(f"{PATCH_VIOLATION_RULE} returned {type(result).__name__}, expected a set")
    grouped: dict[int, set[str]] = {}
    for item in result:
        details = item.get("details") if isinstance(item, Mapping) else None
        if not isinstance(details, Mapping):
            continue
        index = details.get("subset")
        if isinstance(index, float) and index.is_integer():
            index = int(index)
        if isinstance(index, int) and not isinstance(index, bool):
            grouped.setdefault(index, set()).add(str(details.get("field") or item.get("msg")))
    return {i: tuple(sorted(fields)) for i, fields in grouped.items()}


class PatchGuard:
    """Decides whether a subset's patch may be applied; see the module docstring. Thread-safe."""

    def __init__(self, engine: PolicyEngine | None, allowed_fields: Sequence[str] = (), *,
                 max_entries: int = CACHE_ENTRIES) -> None:
        self.engine = engine
        self.allowed_fields = tuple(allowed_fields)
        self.max_entries = max_entries
        self.evaluations = 0
        self._cache: OrderedDict[Hashable, Refusals] = OrderedDict()
        self._lock = threading.Lock()

    def refusals(self, spread: Mapping[str, Any], subset: str, pod: Mapping[str, Any],
                 workload: Mapping[str, Any] | None) -> tuple[str, ...]:
        """The refused fields of `subset`'s patch for this pod (empty: apply the patch)."""
        index = subset_index(spread, subset)
        if index is None or not isinstance(_subsets(spread)[index].get("patch"), Mapping):
            return ()
        if self.engine is None:
            return ("no policy engine is configured to check the patch against the allowlist",)
        checked = checked_workload(pod, workload)
        key = cache_key(spread, checked, self.allowed_fields)
        with self._lock:
            verdict = self._cache.get(key)
            if verdict is not None:
                self._cache.move_to_end(key)
        if verdict is None:
            try:
                verdict = self._evaluate(spread, checked)
            except PolicyError as exc:
                return (f"the patch could not be checked against the allowlist: {exc}",)
            with self._lock:
                self._cache[key] = verdict
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        return verdict.get(index, ())

    def _evaluate(self, spread: Mapping[str, Any], checked: Mapping[str, Any]) -> Refusals:
        assert self.engine is not None
        # The caches hold spreads of both groups; the policy needs the kind to recognise one.
        api_version = spread.get("apiVersion")
        reviewed = {**spread, "kind": KIND, "apiVersion": api_version if isinstance(api_version, str) else API_VERSION}
        policy_input = build_review_input(reviewed, workload=checked, allowed_patch_fields=self.allowed_fields)
        with self._lock:
            self.evaluations += 1
        return parse_refusals(self.engine.evaluate(PATCH_VIOLATION_RULE, policy_input))


def target_workload(spread: Mapping[str, Any], pod: Mapping[str, Any], ctx: AdmissionContext) -> dict[str, Any] | None:
    """The spread's target workload from the caches, or None (not found, or the lookup failed)."""
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping):
        return None
    api_version, kind, name = (str(ref.get(k) or "") for k in ("apiVersion", "kind", "name"))
    try:
        return ctx.lookup(api_version, kind, namespace_of(pod), name)
    except Exception:  # a failed cache read only loses the selector check; reserved keys are still refused
        return None


def inject_checked(pod: dict[str, Any], spread: dict[str, Any], subset: str, uid: str | None,
                   ctx: AdmissionContext) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`inject` with the subset patch allowlist enforced by `ctx.patch_guard`: a refused patch
    is left out and the refusal comes back as a warning. Raises what `inject` raises."""
    guard = ctx.patch_guard
    if guard is None or not has_patch(spread, subset):
        return inject(pod, spread, subset, uid), ()
    refused = guard.refusals(spread, subset, pod, target_workload(spread, pod, ctx))
    if not refused:
        return inject(pod, spread, subset, uid), ()
    warning = (f"WorkloadSpread {namespace_of(spread)}/{name_of(spread)}: the patch of subset {subset!r} was not "
               f"applied, it sets what the subset patch allowlist refuses: {', '.join(refused)} "
               "(`spreadgate validate` explains each)")
    return inject(pod, spread, subset, uid, apply_patch=False), (warning,)
