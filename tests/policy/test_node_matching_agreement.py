"""The two implementations of node matching agree: the subset policy's Rego
(`policies/subset/eligibility.rego`, evaluated by the embedded engine) and the
scheduler's Python predicates (`py_engine/semantics/scheduling.py`).

Three properties, on random nodes (labels over a small alphabet that includes
numeric strings for Gt/Lt, taints with all three effects, names):

* one non-empty node selector term: "does this node match" is the same on both sides;
* a taint set against tolerations: "are its NoSchedule/NoExecute taints tolerated"
  is the same (both ignore PreferNoSchedule, which only scores);
* a whole admission: a subset is eligible for the pod exactly when some node
  fits the pod as `spreadgate` injects it into that subset (`py_engine/workloadspread/admission/inject.py`)
  by the scheduler's predicates. This covers what the helper level cannot: the pod's
  nodeSelector, ORed pod terms, the subset term ANDed into each, and empty terms.

The helper rules are exposed to the engine by a probe package defined here, loaded
next to the shipped policies (test files are never part of a production engine).

`SPREADGATE_FUZZ_EXAMPLES` raises the number of cases (the default keeps the
module well under 20 seconds) and turns off derandomisation, as in tests/fuzz.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_engine.placement.eligibility import SUBSET_DECISION_RULE, build_eligibility_input
from py_engine.policy import PolicyEngine, PolicySource, create_engine, load_policy_sources
from py_engine.semantics.scheduling import (
    node_selector_term_matches,
    pod_matches_node_selector_and_affinity,
    tolerates_unschedulable,
    untolerated_taint,
)
from py_engine.workloadspread.admission.inject import inject

pytestmark = pytest.mark.timeout(120)

PROBE = PolicySource(
    "node_matching_probe.rego",
    """package spreadgate.subset_probe

import rego.v1

import data.spreadgate.subset

# The term exactly as the policy builds its combined terms: both lists present.
default term_matches := false

term_matches if subset.node_matches_term(input.node, {
	"matchExpressions": object.get(input.term, "matchExpressions", []),
	"matchFields": object.get(input.term, "matchFields", []),
})

default tolerated := false

tolerated if subset.taints_tolerated(input.node, input.tolerations)
""",
)

EXAMPLES = int(os.environ.get("SPREADGATE_FUZZ_EXAMPLES", "0")) or None
DERANDOMIZE = EXAMPLES is None


def _settings(default: int) -> settings:
    return settings(
        max_examples=EXAMPLES or default,
        deadline=None,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    built = create_engine(sources=(*load_policy_sources(), PROBE))
    yield built
    built.close()


# ------------------------------------------------------------------ alphabet

KEYS = ["zone", "tier", "cores"]
NODE_NAMES = ["n1", "n2", "n3"]
# Valid label values: words and integers, including ones Gt/Lt compare numerically
# and ones only a string comparison would order the same way.
LABEL_VALUES = ["a", "b", "1", "5", "10", "07", "0", "1.5", "9007199254740993"]
# Requirement values may be anything a user can write: the label values, plus
# numbers Kubernetes' integer parser (strconv.ParseInt) refuses.
REQUIREMENT_VALUES = [*LABEL_VALUES, "-3", "+5", " 5", "5 ", "", "9007199254740992", "99999999999999999999"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]
TAINT_KEYS = ["spot", "gpu", "node.kubernetes.io/unschedulable"]
TAINT_VALUES = ["", "true", "x"]

labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(LABEL_VALUES), max_size=3)
taints = st.lists(
    st.fixed_dictionaries(
        {"key": st.sampled_from(TAINT_KEYS), "effect": st.sampled_from(EFFECTS)},
        optional={"value": st.sampled_from(TAINT_VALUES)},
    ),
    max_size=3,
)


@st.composite
def nodes(draw: st.DrawFn, name: str | None = None) -> dict[str, Any]:
    """A Kubernetes Node (what the scheduler reads)."""
    return {
        "metadata": {"name": name or draw(st.sampled_from(NODE_NAMES)), "labels": draw(labels)},
        "spec": {"taints": draw(taints), "unschedulable": draw(st.booleans())},
    }


def facts(node: dict[str, Any]) -> dict[str, Any]:
    """The node as the policy's inventory carries it (`py_engine/placement/inventory.py`)."""
    return {
        "name": node["metadata"]["name"],
        "labels": node["metadata"]["labels"],
        "taints": node["spec"]["taints"],
        "unschedulable": node["spec"]["unschedulable"],
    }


@st.composite
def expressions(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(OPERATORS))
    count = {
        "In": (1, 3),
        "NotIn": (1, 3),
        "Exists": (0, 0),
        "DoesNotExist": (0, 0),
        "Gt": (1, 1),
        "Lt": (1, 1),
    }
    low, high = count[operator]
    # Now and then a malformed arity (the policy sees pods before the API server validates them).
    if draw(st.integers(0, 9)) == 0:
        low, high = 0, 2
    values = draw(st.lists(st.sampled_from(REQUIREMENT_VALUES), min_size=low, max_size=high))
    requirement: dict[str, Any] = {"key": draw(st.sampled_from(KEYS)), "operator": operator}
    with_empty_values = draw(st.booleans())
    if values or with_empty_values:
        requirement["values"] = values
    return requirement


# Mostly well formed; now and then a field other than metadata.name, another
# operator, or a value count other than one (all of which match nothing).
fields = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["metadata.name"] * 5 + ["metadata.uid"]),
        "operator": st.sampled_from(["In", "NotIn"] * 5 + ["Exists"]),
        "values": st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=1)
        | st.lists(st.sampled_from(NODE_NAMES), max_size=2),
    }
)


@st.composite
def terms(draw: st.DrawFn, allow_empty: bool = True) -> dict[str, Any]:
    exprs = draw(st.lists(expressions(), max_size=3))
    flds = draw(st.lists(fields, max_size=2))
    if not allow_empty and not exprs and not flds:
        exprs = [draw(expressions())]
    term: dict[str, Any] = {}
    empty_expressions, empty_fields = draw(st.booleans()), draw(st.booleans())
    if exprs or empty_expressions:
        term["matchExpressions"] = exprs
    if flds or empty_fields:
        term["matchFields"] = flds
    return term


tolerations = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(["", *TAINT_KEYS]),
            "operator": st.sampled_from(["Exists", "Equal"]),
            "value": st.sampled_from(TAINT_VALUES),
            "effect": st.sampled_from(["", *EFFECTS]),
        },
    ),
    max_size=3,
)


# ------------------------------------------------------------------ properties


@_settings(150)
@given(node=nodes(), term=terms(allow_empty=False))
def test_a_term_matches_the_same_nodes(
    engine: PolicyEngine, node: dict[str, Any], term: dict[str, Any]
) -> None:
    rego = engine.evaluate("data.spreadgate.subset_probe.term_matches", {"node": facts(node), "term": term})
    assert rego is node_selector_term_matches(term, node), (term, node["metadata"])


@_settings(150)
@given(node=nodes(), tols=tolerations)
def test_a_taint_set_is_tolerated_the_same(
    engine: PolicyEngine, node: dict[str, Any], tols: list[dict[str, Any]]
) -> None:
    rego = engine.evaluate(
        "data.spreadgate.subset_probe.tolerated", {"node": facts(node), "tolerations": tols}
    )
    assert rego is (untolerated_taint(node["spec"]["taints"], tols) is None), (tols, node["spec"]["taints"])


def _pod(
    node_selector: dict[str, str], required: list[dict[str, Any]] | None, tols: list[dict[str, Any]]
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "nginx"}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if required is not None:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": required}
            }
        }
    if tols:
        spec["tolerations"] = tols
    return {"metadata": {"generateName": "web-", "namespace": "default"}, "spec": spec}


def _fits(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """The scheduler's filters that do not count resources (the pod requests none)."""
    if node["spec"]["unschedulable"] and not tolerates_unschedulable(pod):
        return False
    return (
        pod_matches_node_selector_and_affinity(pod, node)
        and untolerated_taint(node["spec"]["taints"], pod["spec"].get("tolerations") or []) is None
    )


@_settings(120)
@given(
    inventory=st.lists(nodes(), min_size=1, max_size=3),
    node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(LABEL_VALUES), max_size=1),
    required=st.one_of(st.none(), st.lists(terms(), min_size=1, max_size=2)),
    subset_term=st.one_of(st.none(), terms()),
    pod_tolerations=tolerations,
    subset_tolerations=tolerations,
)
def test_a_subset_is_eligible_exactly_when_some_node_fits_the_injected_pod(
    engine: PolicyEngine,
    inventory: list[dict[str, Any]],
    node_selector: dict[str, str],
    required: list[dict[str, Any]] | None,
    subset_term: dict[str, Any] | None,
    pod_tolerations: list[dict[str, Any]],
    subset_tolerations: list[dict[str, Any]],
) -> None:
    subset: dict[str, Any] = {"name": "s"}
    if subset_term is not None:
        subset["requiredNodeSelectorTerm"] = subset_term
    if subset_tolerations:
        subset["tolerations"] = subset_tolerations
    spread = {"metadata": {"name": "ws", "namespace": "default"}, "spec": {"subsets": [subset]}}
    pod = _pod(node_selector, required, pod_tolerations)
    injected = inject(pod, spread, "s", None, apply_patch=False)
    decision = engine.evaluate(
        SUBSET_DECISION_RULE,
        build_eligibility_input(pod, spread["spec"]["subsets"], nodes=[facts(n) for n in inventory]),
    )
    expected = any(_fits(injected, n) for n in inventory)
    assert (decision["eligible"] == ["s"]) is expected, (decision, injected["spec"], inventory)


def test_an_empty_subset_term_reaches_the_policy_and_fits_no_node(engine: PolicyEngine) -> None:
    """Injected into a pod without required affinity, `requiredNodeSelectorTerm: {}` is the
    pod's only term, which matches no node; the trimmed input must keep it for the policy to see."""
    spread = {"spec": {"subsets": [{"name": "s", "requiredNodeSelectorTerm": {}}, {"name": "t"}]}}
    node = {"metadata": {"name": "n1", "labels": {}}, "spec": {"taints": [], "unschedulable": False}}
    policy_input = build_eligibility_input(_pod({}, None, []), spread["spec"]["subsets"], nodes=[facts(node)])
    assert policy_input["workloadSpread"]["spec"]["subsets"][0]["requiredNodeSelectorTerm"] == {}
    decision = engine.evaluate(SUBSET_DECISION_RULE, policy_input)
    assert decision["eligible"] == ["t"]
    assert decision["skipped"]["no_node_fits"] == ["s"]
