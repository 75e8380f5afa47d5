"""The Python side of subset eligibility: input trimming and decision parsing."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.placement.eligibility import (
    SUBSET_DECISION_RULE,
    build_eligibility_input,
    decide_eligibility,
    trim_pod,
    trim_subset,
)
from py_engine.policy import PolicyError, create_engine
from py_engine.workloadspread.admission.choose import UNSCHEDULABLE_REASON

SPREAD = {
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "subsets": [
            {
                "name": "a",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]
                },
            },
            {"name": "b"},
        ],
    }
}

POD: dict[str, Any] = {
    "metadata": {"name": "p", "labels": {"app": "web"}, "annotations": {"big": "x" * 10_000}},
    "spec": {
        "nodeSelector": {"zone": "z2"},
        "containers": [
            {
                "name": "main",
                "image": "nginx",
                "env": [{"name": "A", "value": "1"}],
                "resources": {"requests": {"cpu": "100m"}},
            }
        ],
        "volumes": [{"name": "v", "emptyDir": {}}],
    },
}


def test_trim_keeps_only_what_the_policy_reads() -> None:
    trimmed = trim_pod(POD)
    assert trimmed == {
        "spec": {
            "nodeSelector": {"zone": "z2"},
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "100m"}}}],
        }
    }


def test_trim_subset_keeps_terms_tolerations_and_patch_resources() -> None:
    subset = {
        "name": "a",
        "maxReplicas": 3,
        "tolerations": [{"operator": "Exists"}],
        "patch": {
            "metadata": {"labels": {"x": "y"}},
            "spec": {"containers": [{"name": "main", "env": [], "resources": {"requests": {"cpu": "1"}}}]},
        },
    }
    assert trim_subset(subset) == {
        "name": "a",
        "tolerations": [{"operator": "Exists"}],
        "patch": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}},
    }
    assert trim_subset({"name": "b", "patch": {"metadata": {}}}) == {"name": "b"}


def test_decision_through_the_real_policy() -> None:
    engine = create_engine()
    statuses = [{"name": "b", "replicas": 3, "conditions": [{"type": "Schedulable", "status": "True"}]}]
    decision = decide_eligibility(engine, build_eligibility_input(POD, SPREAD["spec"]["subsets"], statuses))
    assert decision.eligible == ("b",)
    assert "contradicts" in decision.rejected["a"][0]
    nodes = [{"name": "n1", "labels": {"zone": "z2"}, "free": {"cpu": 0.05, "memory": 1e9, "pods": 5}}]
    decision = decide_eligibility(
        engine, build_eligibility_input(POD, SPREAD["spec"]["subsets"], statuses, nodes)
    )
    assert decision.eligible == ()
    assert "no node fits" in decision.rejected["b"][0]


def test_skip_reasons_are_the_policys_words_in_one_order() -> None:
    """A subset both unschedulable and contradicting the pod: the policy's own texts, the
    Schedulable one first; without an engine the same words (choose.UNSCHEDULABLE_REASON)."""
    engine = create_engine()
    statuses = [{"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}]
    policy_input = build_eligibility_input(POD, SPREAD["spec"]["subsets"], statuses)
    answer = engine.evaluate(SUBSET_DECISION_RULE, policy_input)
    decision = decide_eligibility(engine, policy_input)
    assert decision.rejected["a"] == (
        answer["reasons"]["unschedulable"],
        answer["reasons"]["contradicts_pod"],
    )
    assert answer["reasons"]["unschedulable"] == UNSCHEDULABLE_REASON
    engine.close()


def test_unexpected_policy_answer_is_an_error() -> None:
    class Broken:
        def evaluate(self, rule: str, input_document: Any) -> Any:
            return ["not", "an", "object"]

        def close(self) -> None:
            pass

    with pytest.raises(PolicyError):
        decide_eligibility(Broken(), {})


def test_trim_leaves_out_node_selection_of_the_wrong_shape() -> None:
    """A mutating webhook sees pods before the API server validates them."""
    hostile = {
        "spec": {
            "nodeSelector": {"zone": 5},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            "not-a-term",
                            {"matchExpressions": "zone"},
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                        ]
                    }
                }
            },
            "tolerations": [1, {"operator": "Exists"}],
            "containers": [{"name": "main", "resources": "lots"}, 7],
        }
    }
    trimmed = trim_pod(hostile)["spec"]
    assert "nodeSelector" not in trimmed
    assert trimmed["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ] == [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]
    assert trimmed["tolerations"] == [{"operator": "Exists"}]
    assert trimmed["containers"] == [{"name": "main", "resources": {}}]
    assert (
        "affinity"
        not in trim_pod(
            {
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": ["x"]}
                        }
                    }
                }
            }
        )["spec"]
    )
