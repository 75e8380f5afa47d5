"""The subset patch allowlist, enforced by the UnitedDeployment controller too.

Validation (the webhook, `spreadgate validate`, Gatekeeper) refuses a
UnitedDeployment whose subset `patch` touches fields off the allowlist
(policies/uniteddeployment/patch.rego, which applies the WorkloadSpread
allowlist of policies/validation/patch.rego). A UnitedDeployment stored while
the webhook was down, before the allowlist existed, or through Gatekeeper's
audit-only mode still reaches the controller, which writes its workloads with
its own cluster-wide rights: a confused deputy. So before a sync the controller
evaluates the same policy rule (`validate_uniteddeployment`, the rule validation
uses) on the stored object and keeps the violations under a subset's `patch`;
when there are any, the planner writes no workload from it, and the status
gets `SubsetFailure` (reason `ForbiddenPatch`) and an Event names the fields
(docs/uniteddeployment.md, "Subset patch allowlist").

Verdicts are cached per (uid, generation, allowlist), so the policy runs once
per spec change; a UnitedDeployment without any subset patch is never
evaluated. An evaluation that fails refuses too (fail closed) and is not cached.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.uniteddeployment.controller.runtime.lazyengine import LazyEngine
from py_engine.validation.uniteddeployment import build_ud_review_input, validate_uniteddeployment

CACHE_ENTRIES = 512
_PATCH_FIELD = re.compile(r"^spec\.topology\.subsets\[[0-9]+\]\.patch(\.|\[|$)")


class PatchCheck:
    """`forbidden(obj, ud)`: the allowlist violations of the stored object's subset patches."""

    def __init__(
        self,
        engine_factory: Callable[[], PolicyEngine] | None = None,
        allowed_patch_fields: tuple[str, ...] = (),
    ) -> None:
        self._engine = LazyEngine(engine_factory)
        self.allowed_patch_fields = allowed_patch_fields
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int], tuple[str, ...]] = OrderedDict()
        self.evaluations = 0

    def forbidden(self, obj: Mapping[str, Any], ud: UnitedDeployment) -> tuple[str, ...]:
        """`"<field>: <message>"` per violation; empty when no subset has a patch or all pass."""
        if not any(subset.patch is not None for subset in ud.subsets):
            return ()
        key = (ud.uid or f"{ud.namespace}/{ud.name}", ud.generation)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        try:
            policy_input = build_ud_review_input(obj, allowed_patch_fields=self.allowed_patch_fields)
            violations = validate_uniteddeployment(self._engine.get(), policy_input)
        except (PolicyError, RecursionError) as exc:
            return (f"spec.topology.subsets: the subset patch allowlist could not be evaluated ({exc})",)
        found = tuple(v.message for v in violations if _PATCH_FIELD.match(v.field))
        with self._lock:
            self.evaluations += 1
            self._cache[key] = found
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return found

    def close(self) -> None:
        self._engine.close()
