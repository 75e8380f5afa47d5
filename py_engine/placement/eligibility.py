"""The subset-eligibility query: which subsets a pod may go to.

The subset policy (`policies/subset/eligibility.rego`) is asked, for one pod and a list
of subsets (each a name, a required node selector term, tolerations, and a patch whose
container resources count), which subsets are eligible and why the others are not:
a Schedulable condition that is False, a node term that contradicts the pod's own node
affinity, and with a node inventory (`py_engine.placement.inventory`, reduced by
`py_engine.placement.classes`) no node that would take the pod. Both products ask it:
WorkloadSpread admission for each new pod (`decide_subsets`, through
`py_engine.workloadspread.admission.eligibility`) and the UnitedDeployment controller
before allocating (`py_engine.placement.fit.fitting_subsets`). The policy's input calls
the subsets' holder `workloadSpread` for historical reasons; nothing else about it is
WorkloadSpread's.

The policy reads only a few pod fields; sending just those keeps the Rego
input small (input conversion dominates evaluation time for large pods).

Every replica of a workload sends the same policy input (same template, same
subsets, same conditions, same node inventory), so decisions are memoised in an
`EligibilityCache` keyed by a digest of that input: a Rego evaluation costs
about half a millisecond, a cache hit tens of microseconds.

`decide_subsets` keys the cache from the input's parts, with the subsets' part (their
trimmed form and its canonical JSON) remembered per subsets list by `SubsetInputs`, and
builds the whole input only on a miss. Building and encoding the whole input for every
pod was most of the cost of a hit (docs/performance.md, "Costs found, and what changed").
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.model.subset_status import subset_conditions
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.semantics.lru import put_recent
from py_engine.semantics.objects import JSON_OBJECT

SUBSET_DECISION_RULE = "data.spreadgate.subset.decision"

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""Built once: `json.dumps` with any option builds a new encoder per call, which cost more than
encoding a small policy input."""


def _canonical(value: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces; anything else as `str`)."""
    return _CANONICAL.encode(value)


# The order in which a subset's reasons are listed (the first one is shown in warnings); the
# words themselves are the policy's (`decision.reasons`, policies/subset/eligibility.rego).
SKIP_ORDER: tuple[str, ...] = ("unschedulable", "contradicts_pod", "no_node_fits")


@dataclass(frozen=True)
class EligibilityDecision:
    """Eligible subset names in spec order, and why the others were skipped."""

    eligible: tuple[str, ...]
    rejected: Mapping[str, tuple[str, ...]]


def _requirement_ok(requirement: Any) -> bool:
    if not isinstance(requirement, JSON_OBJECT):
        return False
    values = requirement.get("values", [])
    return (
        isinstance(requirement.get("key"), str)
        and isinstance(requirement.get("operator"), str)
        and isinstance(values, list)
        and all(isinstance(v, str) for v in values)
    )


def _term_ok(term: Any) -> bool:
    if not isinstance(term, JSON_OBJECT):
        return False
    parts = [term.get("matchExpressions", []), term.get("matchFields", [])]
    return all(isinstance(p, list) and all(_requirement_ok(r) for r in p) for p in parts)


def _resources(resources: Any) -> dict[str, Any]:
    """`requests` and `limits` maps of a container, when they are maps."""
    if not isinstance(resources, JSON_OBJECT):
        return {}
    return {k: v for k, v in resources.items() if k in ("requests", "limits") and isinstance(v, JSON_OBJECT)}


def _well_formed_affinity(affinity: Any) -> dict[str, Any] | None:
    """The pod's required node terms that have Kubernetes' shape, or None."""
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, JSON_OBJECT) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, JSON_OBJECT)
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, JSON_OBJECT) else None
    if not isinstance(terms, list):
        return None
    kept = [t for t in terms if _term_ok(t)]
    if not kept:
        return None
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": kept}}}


def trim_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod the subset policy reads: node selection and container resources.

    A mutating webhook sees the pod before the API server validates it, so node
    selection fields of the wrong shape can arrive here; they are left out (the
    API server rejects such a pod after admission) rather than fail the policy.
    """
    raw_spec = pod.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, JSON_OBJECT) else {}
    containers = spec.get("containers")
    trimmed: dict[str, Any] = {
        "containers": [
            {"name": c.get("name"), "resources": _resources(c.get("resources"))}
            for c in (containers if isinstance(containers, list) else ())
            if isinstance(c, JSON_OBJECT)
        ]
    }
    selector = spec.get("nodeSelector")
    if isinstance(selector, JSON_OBJECT) and selector and all(isinstance(v, str) for v in selector.values()):
        trimmed["nodeSelector"] = selector
    affinity = _well_formed_affinity(spec.get("affinity"))
    if affinity is not None:
        trimmed["affinity"] = affinity
    tolerations = spec.get("tolerations")
    if isinstance(tolerations, list) and tolerations:
        trimmed["tolerations"] = [t for t in tolerations if isinstance(t, JSON_OBJECT)]
    return {"spec": trimmed}


def trim_subset(subset: Mapping[str, Any], *, node_fit: bool = True) -> dict[str, Any]:
    """The fields of a subset the policy reads: its name and required term, and for node
    fit its tolerations and the container resources its patch sets."""
    trimmed: dict[str, Any] = {"name": subset.get("name")}
    term = subset.get("requiredNodeSelectorTerm")
    if term or isinstance(
        term, JSON_OBJECT
    ):  # an empty term still matters: injected alone, it matches no node
        trimmed["requiredNodeSelectorTerm"] = term
    if not node_fit:
        return trimmed
    if subset.get("tolerations"):
        trimmed["tolerations"] = subset["tolerations"]
    patch = subset.get("patch")
    patch_spec = patch.get("spec") if isinstance(patch, JSON_OBJECT) else None
    containers = patch_spec.get("containers") if isinstance(patch_spec, JSON_OBJECT) else None
    if isinstance(containers, list):
        resources = [
            {"name": c.get("name"), "resources": c["resources"]}
            for c in containers
            if isinstance(c, JSON_OBJECT) and isinstance(c.get("resources"), Mapping)
        ]
        if resources:
            trimmed["patch"] = {"spec": {"containers": resources}}
    return trimmed


def build_eligibility_input(
    pod: Mapping[str, Any],
    subsets: Any,
    subset_statuses: Sequence[Mapping[str, Any]] = (),
    nodes: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The subset policy's input for `pod` over `subsets` (a list of subset objects; anything
    else counts as none, and entries that are not objects are left out); `nodes` (compact
    node facts) enables node-fit simulation."""
    items = subsets if isinstance(subsets, list) else []
    policy_input: dict[str, Any] = {
        "pod": trim_pod(pod),
        "workloadSpread": {
            "spec": {
                "subsets": [
                    trim_subset(s, node_fit=nodes is not None) for s in items if isinstance(s, JSON_OBJECT)
                ]
            }
        },
        "subsetStatuses": [
            {"name": s.get("name"), "conditions": subset_conditions(s)} for s in subset_statuses
        ],
    }
    if nodes is not None:
        policy_input["nodes"] = list(nodes)
    return policy_input


def decide_eligibility(engine: PolicyEngine, policy_input: Mapping[str, Any]) -> EligibilityDecision:
    """Run the subset policy; raises PolicyError when it answers something unexpected."""
    result = engine.evaluate(SUBSET_DECISION_RULE, policy_input)
    if not isinstance(result, JSON_OBJECT) or not isinstance(result.get("eligible"), list):
        raise PolicyError(f"{SUBSET_DECISION_RULE} returned {result!r}, expected an object with 'eligible'")
    rejected: dict[str, list[str]] = {}
    skipped = result.get("skipped")
    skipped = skipped if isinstance(skipped, JSON_OBJECT) else {}
    texts = result.get("reasons")
    texts = texts if isinstance(texts, JSON_OBJECT) else {}
    for reason in sorted(
        skipped, key=lambda r: (SKIP_ORDER.index(r) if r in SKIP_ORDER else len(SKIP_ORDER), r)
    ):
        for name in skipped.get(reason) or []:
            rejected.setdefault(str(name), []).append(str(texts.get(reason) or reason))
    return EligibilityDecision(
        eligible=tuple(str(name) for name in result["eligible"]),
        rejected={name: tuple(reasons) for name, reasons in rejected.items()},
    )


def eligibility_key(policy_input: Mapping[str, Any], nodes_version: str | None = None) -> str:
    """Digest of a policy input (canonical JSON, sorted keys).

    When `nodes_version` is given it stands for `policy_input["nodes"]` (an
    inventory that already knows its own digest), so a large node list is not
    re-serialised on every admission.
    """
    document: Mapping[str, Any] = policy_input
    if nodes_version is not None:
        trimmed = {k: v for k, v in policy_input.items() if k != "nodes"}
        trimmed["nodesVersion"] = nodes_version
        document = trimmed
    return hashlib.blake2b(_canonical(document).encode(), digest_size=16).hexdigest()


class EligibilityCache:
    """A thread-safe LRU of eligibility decisions keyed by `eligibility_key` digests.

    Decisions are immutable, so one cached value can be shared by every thread.
    `hits` and `misses` count lookups, for metrics and tests.
    """

    def __init__(self, maxsize: int = 1024) -> None:
        if maxsize < 1:
            raise ValueError("EligibilityCache maxsize must be at least 1")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, EligibilityDecision] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> EligibilityDecision | None:
        with self._lock:
            decision = self._entries.get(key)
            if decision is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return decision

    def put(self, key: str, decision: EligibilityDecision) -> None:
        with self._lock:
            put_recent(self._entries, key, decision, self.maxsize)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def decide_eligibility_cached(
    engine: PolicyEngine,
    policy_input: Mapping[str, Any],
    cache: EligibilityCache | None,
    *,
    nodes_version: str | None = None,
) -> EligibilityDecision:
    """`decide_eligibility` through `cache` (None: always evaluate)."""
    if cache is None:
        return decide_eligibility(engine, policy_input)
    key = eligibility_key(policy_input, nodes_version)
    decision = cache.get(key)
    if decision is None:
        decision = decide_eligibility(engine, policy_input)
        cache.put(key, decision)
    return decision


SUBSET_INPUTS = 64


class SubsetInputs:
    """The subsets' part of the subset policy input, remembered per subsets list object.

    The trimmed subsets and their canonical JSON depend only on the list and on whether
    node fit is simulated. An entry is used only for the very list object it was built
    from (it holds a reference, so the object cannot be freed and its id reused); callers never
    edit a subsets list in place (the admission path copies spreads, never edits them), and every new
    version of a spread (a new resourceVersion, each status write) brings a new list
    object, so a changed spec is never served a stale part. Bounded (least recently used
    entries leave first) and thread-safe.
    """

    def __init__(self, maxsize: int = SUBSET_INPUTS) -> None:
        if maxsize < 1:
            raise ValueError("SubsetInputs maxsize must be at least 1")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple[int, bool], tuple[object, list[dict[str, Any]], str]] = OrderedDict()
        self._lock = threading.Lock()

    def trimmed(self, subsets: Any, *, node_fit: bool) -> tuple[list[dict[str, Any]], str]:
        """(`trim_subset` of each subset that is an object, their canonical JSON)."""
        key = (id(subsets), node_fit)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is subsets:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[1], entry[2]
        items = subsets if isinstance(subsets, list) else []
        trimmed = [trim_subset(s, node_fit=node_fit) for s in items if isinstance(s, JSON_OBJECT)]
        text = _canonical(trimmed)
        with self._lock:
            self.misses += 1
            put_recent(self._entries, key, (subsets, trimmed, text), self.maxsize)
        return trimmed, text


def decide_subsets(
    engine: PolicyEngine,
    pod: Mapping[str, Any],
    subsets: Any,
    subset_statuses: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]] | None,
    cache: EligibilityCache | None,
    inputs: SubsetInputs | None,
    *,
    nodes_version: str | None = None,
) -> EligibilityDecision:
    """`decide_eligibility_cached(engine, build_eligibility_input(pod, subsets, subset_statuses,
    nodes), cache, nodes_version=nodes_version)`, the same decision, built only on a cache miss.

    The key covers every part of that input: the trimmed pod, the subset statuses' names
    and conditions, the trimmed subsets (from `inputs`) and the node inventory's
    version. Without a cache, without `inputs`, or with nodes that have no version, the
    whole input is built and keyed as before.
    """
    if cache is None or inputs is None or (nodes is not None and nodes_version is None):
        return decide_eligibility_cached(
            engine,
            build_eligibility_input(pod, subsets, subset_statuses, nodes),
            cache,
            nodes_version=nodes_version,
        )
    trimmed, subsets_text = inputs.trimmed(subsets, node_fit=nodes is not None)
    pod_part = trim_pod(pod)
    statuses = [{"name": s.get("name"), "conditions": subset_conditions(s)} for s in subset_statuses]
    # `repr` of decoded JSON (dicts, lists, strings, numbers, booleans, None) is exact: equal texts
    # are equal values of equal types (`1`, `1.0` and `True` differ), so an equal key is an equal
    # input; a pod whose members come in another order only misses. It costs half of sorted JSON.
    # The two texts are joined by a newline, which neither writes (both escape one in a string).
    parts = repr((pod_part, statuses, nodes_version))
    key = "subsets:" + hashlib.blake2b(f"{parts}\n{subsets_text}".encode(), digest_size=16).hexdigest()
    decision = cache.get(key)
    if decision is None:
        policy_input: dict[str, Any] = {
            "pod": pod_part,
            "workloadSpread": {"spec": {"subsets": trimmed}},
            "subsetStatuses": statuses,
        }
        if nodes is not None:
            policy_input["nodes"] = list(nodes)
        decision = decide_eligibility(engine, policy_input)
        cache.put(key, decision)
    return decision
