"""The subset patch allowlist at admission: defence in depth behind validation.

A WorkloadSpread stored before the allowlist existed, or created while the
validating webhook was down, still reaches the mutating webhook. Before a
subset's `patch` is applied, the rule validation uses
(`data.spreadgate.validation.patch_violation`, policies/validation/patch.rego)
is evaluated for the spread, with the target workload's selector (looked up only
when the patch sets labels) and the pod's own containers standing in for the
workload: selector labels and containers
the pod does not have are caught even where validation could not see the
workload (conftest on a bare file). A refused patch is left out: the pod is
admitted into its subset (node affinity, tolerations, matched annotation)
without it, with a warning naming the refused fields (docs/operations.md,
"Subset patch allowlist").

A stored spread is held to what validation checks (issue 24): a patch nested
deeper than it could be inside a review (`MAX_PATCH_DEPTH`) is refused before
anything walks it, and the policy rule also carries validation's own checks of
the patch's shape (label keys and values, annotation values, container names;
policies/validation/patch.rego, `patch_violation`).

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

from py_engine.model.constants import API_VERSION, KIND
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.semantics import objects
from py_engine.semantics.lru import put_recent
from py_engine.semantics.nesting import MAX_REVIEW_DEPTH, depth_exceeds
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.validation import PATCH_VIOLATION_RULE, build_review_input
from py_engine.validation.validator import container_names
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.inject import inject

CACHE_ENTRIES = 1024
PATCH_LEVELS_IN_REVIEW = 6
"""Levels above a subset's patch inside a review: review, request, object, spec, subsets, the subset."""
MAX_PATCH_DEPTH = MAX_REVIEW_DEPTH - PATCH_LEVELS_IN_REVIEW
"""The deepest patch the validating webhook could have accepted (webhook/review.py reads reviews to
`MAX_REVIEW_DEPTH`); a stored one deeper than that reached the store without it."""

Refusals = Mapping[int, tuple[str, ...]]
"""Subset index -> the patch fields the allowlist refuses (field paths of the spread)."""


def _subsets(spread: Mapping[str, Any]) -> list[Any]:
    spec = spread.get("spec")
    subsets = spec.get("subsets") if isinstance(spec, JSON_OBJECT) else None
    return subsets if isinstance(subsets, list) else []


def subset_index(spread: Mapping[str, Any], subset: str) -> int | None:
    """Index of the first subset named `subset` (the one `inject` applies)."""
    for i, entry in enumerate(_subsets(spread)):
        if isinstance(entry, JSON_OBJECT) and entry.get("name") == subset:
            return i
    return None


def _patch_of(spread: Mapping[str, Any], subset: str) -> Mapping[str, Any] | None:
    index = subset_index(spread, subset)
    patch = _subsets(spread)[index].get("patch") if index is not None else None
    return patch if isinstance(patch, JSON_OBJECT) else None


def has_patch(spread: Mapping[str, Any], subset: str) -> bool:
    return _patch_of(spread, subset) is not None


def sets_labels(spread: Mapping[str, Any], subset: str) -> bool:
    """Whether the subset's patch touches pod labels: only then does the workload's selector
    matter, so only then is the workload looked up (a custom kind may not be cached)."""
    patch = _patch_of(spread, subset)
    metadata = patch.get("metadata") if patch is not None else None
    return isinstance(metadata, JSON_OBJECT) and "labels" in metadata


def _facts(
    pod: Mapping[str, Any], workload: Mapping[str, Any] | None
) -> tuple[tuple[str, ...], tuple[str, ...], Any]:
    """(container names, init container names, the workload's selector or None): all a verdict
    depends on besides the spread and the allowlist."""
    pod_spec = pod.get("spec")
    spec = pod_spec if isinstance(pod_spec, dict) else {}
    workload_spec = workload.get("spec") if workload is not None else None
    selector = workload_spec.get("selector") if isinstance(workload_spec, dict) else None
    return container_names(spec.get("containers")), container_names(spec.get("initContainers")), selector


def _checked(facts: tuple[tuple[str, ...], tuple[str, ...], Any]) -> dict[str, Any]:
    containers, init_containers, selector = facts
    template = {
        "containers": [{"name": n} for n in containers],
        "initContainers": [{"name": n} for n in init_containers],
    }
    checked: dict[str, Any] = {"template": {"spec": template}}
    if selector is not None:
        checked["selector"] = selector
    return {"spec": checked}


def checked_workload(pod: Mapping[str, Any], workload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The workload the policy checks a patch against at admission: the real workload's
    selector (when it was found) and the pod's own containers as the pod template."""
    return _checked(_facts(pod, workload))


def cache_key(
    spread: Mapping[str, Any], facts: tuple[tuple[str, ...], tuple[str, ...], Any], allowed: tuple[str, ...]
) -> Hashable:
    """(namespace, name, uid and generation, allowlist, containers, selector). A spread without
    uid or generation (an offline snapshot) is keyed by its spec instead."""
    meta = objects.meta(spread)
    uid, generation = meta.get("uid"), meta.get("generation")
    if isinstance(uid, str) and uid and isinstance(generation, int) and not isinstance(generation, bool):
        identity: Hashable = (uid, generation)
    else:
        identity = json.dumps(spread.get("spec"), sort_keys=True, default=str)
    containers, init_containers, selector = facts
    selector_key = None if selector is None else json.dumps(selector, sort_keys=True, default=str)
    return (
        objects.namespace(spread),
        objects.name(spread),
        identity,
        allowed,
        containers,
        init_containers,
        selector_key,
    )


def parse_refusals(result: Any) -> dict[int, tuple[str, ...]]:
    """`patch_violation` results grouped by `details.subset`; raises PolicyError on a non-list."""
    if result is None:
        return {}
    if not isinstance(result, list):
        raise PolicyError(f"{PATCH_VIOLATION_RULE} returned {type(result).__name__}, expected a set")
    grouped: dict[int, set[str]] = {}
    for item in result:
        details = item.get("details") if isinstance(item, JSON_OBJECT) else None
        if not isinstance(details, JSON_OBJECT):
            continue
        index = details.get("subset")
        if isinstance(index, float) and index.is_integer():
            index = int(index)
        if isinstance(index, int) and not isinstance(index, bool):
            grouped.setdefault(index, set()).add(str(details.get("field") or item.get("msg")))
    return {i: tuple(sorted(fields)) for i, fields in grouped.items()}


class PatchGuard:
    """Decides whether a subset's patch may be applied; see the module docstring. Thread-safe."""

    def __init__(
        self,
        engine: PolicyEngine | None,
        allowed_fields: Sequence[str] = (),
        *,
        max_entries: int = CACHE_ENTRIES,
    ) -> None:
        self.engine = engine
        self.allowed_fields = tuple(allowed_fields)
        self.max_entries = max_entries
        self.evaluations = 0
        self._cache: OrderedDict[Hashable, Refusals] = OrderedDict()
        self._lock = threading.Lock()

    def refusals(
        self,
        spread: Mapping[str, Any],
        subset: str,
        pod: Mapping[str, Any],
        workload: Mapping[str, Any] | None,
    ) -> tuple[str, ...]:
        """The refused fields of `subset`'s patch for this pod (empty: apply the patch)."""
        index = subset_index(spread, subset)
        if index is None or not isinstance(_subsets(spread)[index].get("patch"), Mapping):
            return ()
        if self.engine is None:
            return ("no policy engine is configured to check the patch against the allowlist",)
        if depth_exceeds(_subsets(spread)[index]["patch"], MAX_PATCH_DEPTH):
            return (
                f"spec.subsets[{index}].patch is nested deeper than {MAX_PATCH_DEPTH} levels, more than "
                "validation accepts",
            )
        facts = _facts(pod, workload)
        key = cache_key(spread, facts, self.allowed_fields)
        with self._lock:
            verdict = self._cache.get(key)
            if verdict is not None:
                self._cache.move_to_end(key)
        if verdict is None:
            try:
                verdict = self._evaluate(spread, _checked(facts))
            except PolicyError as exc:
                return (f"the patch could not be checked against the allowlist: {exc}",)
            with self._lock:
                put_recent(self._cache, key, verdict, self.max_entries)
        return verdict.get(index, ())

    def _evaluate(self, spread: Mapping[str, Any], checked: Mapping[str, Any]) -> Refusals:
        assert self.engine is not None
        # The caches hold spreads of both groups; the policy needs the kind to recognise one.
        api_version = spread.get("apiVersion")
        reviewed = {
            **spread,
            "kind": KIND,
            "apiVersion": api_version if isinstance(api_version, str) else API_VERSION,
        }
        policy_input = build_review_input(
            reviewed, workload=checked, allowed_patch_fields=self.allowed_fields
        )
        with self._lock:
            self.evaluations += 1
        return parse_refusals(self.engine.evaluate(PATCH_VIOLATION_RULE, policy_input))


def target_workload(
    spread: Mapping[str, Any], pod: Mapping[str, Any], ctx: AdmissionContext
) -> dict[str, Any] | None:
    """The spread's target workload from the caches, or None (not found, or the lookup failed)."""
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, JSON_OBJECT) else None
    if not isinstance(ref, JSON_OBJECT):
        return None
    api_version, kind, name = (str(ref.get(k) or "") for k in ("apiVersion", "kind", "name"))
    try:
        return ctx.lookup(api_version, kind, objects.namespace(pod), name)
    except Exception:  # a failed cache read only loses the selector check; reserved keys are still refused
        return None


def inject_checked(
    pod: dict[str, Any], spread: dict[str, Any], subset: str, uid: str | None, ctx: AdmissionContext
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`inject` with the subset patch allowlist enforced by `ctx.patch_guard`: a refused patch
    is left out and the refusal comes back as a warning. Raises what `inject` raises."""
    guard = ctx.patch_guard
    if guard is None or not has_patch(spread, subset):
        return inject(pod, spread, subset, uid), ()
    workload = target_workload(spread, pod, ctx) if sets_labels(spread, subset) else None
    refused = guard.refusals(spread, subset, pod, workload)
    if not refused:
        return inject(pod, spread, subset, uid), ()
    warning = (
        f"WorkloadSpread {objects.namespace(spread)}/{objects.name(spread)}: "
        f"the patch of subset {subset!r} was not applied, "
        f"it sets what the subset patch allowlist refuses: {', '.join(refused)} "
        "(`spreadgate validate` explains each)"
    )
    return inject(pod, spread, subset, uid, apply_patch=False), (warning,)
