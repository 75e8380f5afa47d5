"""What every admission decision is a function of, and the errors it can end in.

An `AdmissionContext` carries the instant (`now`), read access to the caches
(`lookup`), and the optional policy engine, node inventory and decision cache.
Nothing in the admission core reads a clock or performs I/O beyond `lookup`,
so the webhook, the offline `spreadgate admit` command and the tests share
every decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist
from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.policy import PolicyEngine
from py_engine.workloadspread.admission.caches import AdmissionCaches

Lookup = Callable[[str, str, str, str], "dict[str, Any] | None"]
"""(apiVersion, kind, namespace, name) -> the object from a cache, or None when it does not exist."""

DEFAULT_VERSIONED_KINDS: frozenset[str] = frozenset({"deployment", "replicaset"})


class AdmissionError(Exception):
    """The admission cannot be decided: the request must be denied (HTTP `code`).

    Raised for a stored WorkloadSpread the engine cannot read, a
    `targetFilter.replicasPathList` that does not resolve to integers, or a
    subset `patch` that does not apply to the pod; Kruise denies in all three
    cases and the workload controller retries the pod creation.
    """

    code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OwnerNotFound(AdmissionError):
    """A controller owner on the pod's chain does not exist (yet) in the caches.

    Kruise (since PR #1807) fails the admission with NotFound instead of
    admitting the pod without injection; the workload controller retries.
    """

    code = 404

    def __init__(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        super().__init__(
            f'{kind} "{name}" not found in namespace "{namespace}" (owner of the pod being admitted)'
        )
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name


class PatchCheck(Protocol):
    """The subset patch allowlist at admission
    (`py_engine.workloadspread.admission.patch_guard.PatchGuard`)."""

    def refusals(
        self,
        spread: Mapping[str, Any],
        subset: str,
        pod: Mapping[str, Any],
        workload: Mapping[str, Any] | None,
    ) -> tuple[str, ...]:
        """Why the patch of `subset` must not be applied to `pod` (empty: apply it)."""
        ...


@dataclass(frozen=True)
class AdmissionContext:
    """Inputs of a decision besides the pod and the spread.

    `engine` None skips the Rego subset policy (only the reference's
    Schedulable-condition check is applied); `nodes` are compact node facts
    (see `py_engine.placement.inventory`) used for node-fit simulation of Adaptive
    spreads; `whitelist` holds the custom workload kinds, parsed once by whoever
    builds contexts (`ServiceConfig.whitelist`), never per decision; `patch_guard` None applies subset
    patches unchecked (the webhook and `spreadgate admit` always set one);
    `node_classes` remembers node inventories reduced for the policy (None:
    reduced for every decision); `caches` remembers spreads parsed per version
    (`py_engine.workloadspread.admission.caches`; None: parsed for every decision).
    """

    now: datetime
    lookup: Lookup
    engine: PolicyEngine | None = None
    nodes: Sequence[Mapping[str, Any]] | None = None
    versioned_kinds: frozenset[str] = DEFAULT_VERSIONED_KINDS
    whitelist: Whitelist = EMPTY_WHITELIST
    decision_cache: EligibilityCache | None = None
    fresh_lookup: Lookup | None = None
    patch_guard: PatchCheck | None = None
    node_classes: NodeClassCache | None = None
    caches: AdmissionCaches | None = None


_CONTEXT_FIELDS = frozenset(AdmissionContext.__dataclass_fields__)


def admission_context(**values: Any) -> AdmissionContext:
    """`AdmissionContext(**values)`, built for the once-per-pod path when every field is given.

    The frozen dataclass's `__init__` sets each of the eleven fields through
    `object.__setattr__`, 5 us per admission; with every field at hand the instance dict is
    filled at once instead (the instance is the same: no field has a `__post_init__`). With
    any field missing or unknown it is the dataclass's own `__init__`, defaults and errors
    included.
    """
    if values.keys() != _CONTEXT_FIELDS:
        return AdmissionContext(**values)
    context = object.__new__(AdmissionContext)
    context.__dict__.update(values)
    return context


def no_lookup(api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
    """A lookup over an empty cluster (every object is missing)."""
    return None
