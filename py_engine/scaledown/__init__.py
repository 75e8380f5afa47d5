"""Scale-down ordering model: which pods a ReplicaSet or a CloneSet deletes first.

Spreadgate steers scale-down with `controller.kubernetes.io/pod-deletion-cost`
and previews victims with `spreadgate rank`; both need the controllers' exact
choice, so this package models it rule for rule. Everything here is a pure
function of pod JSON (plain dicts), node labels, explicit numbers and an explicit
`now`: no I/O, no clock, no Kubernetes client.

Modules, one job each:

* `pods`: validate pod JSON once and extract `PodFacts` (readiness, ready time,
  restarts, creation time, deletion cost, Kruise labels).
* `costs`: the deletion-cost annotation parser (invalid -> 0, as Kubernetes).
* `timekeys`: zero-aware time comparison and Go-compatible log2-age buckets.
* `gates`: `PodDeletionCost` / `LogarithmicScaleDown` (both default on).
* `kubernetes`: `ActivePodsWithRanks` / `ActivePods` as a pairwise comparator
  (`decide`, `k8s_less`) and as sort keys (`K8sOrder`).
* `replicaset`: related-pod ranks, `getPodsToDelete`, multi-sync scale-down.
* `kruise`: OpenKruise's comparator (availability step, cost always on, exact times).
* `rankers`: `SameNodeRanker` and `SpreadConstraintsRanker`.
* `cloneset`: the CloneSet scale-in choice (planned deletions, revisions, ranking).
* `nodes`: node labels from node JSON. `ordering`: explanation of an order.

Where upstream's order is undefined (Go's unstable sort on equal pods, and the
non-transitive bucket/UID rule), the deterministic choice is documented in
`kubernetes` and `kruise`.
"""

from __future__ import annotations

from py_engine.scaledown.cloneset import (
    CloneSetSpec,
    choose_pods_to_delete,
    cloneset_deletion_order,
    cloneset_spec_from_object,
    cloneset_victims,
    scale_in_pass,
)
from py_engine.scaledown.costs import deletion_cost, parse_deletion_cost
from py_engine.scaledown.errors import (
    FeatureGateError,
    NodeFormatError,
    PodFormatError,
    ScaledownInputError,
)
from py_engine.scaledown.gates import DEFAULT_GATES, FeatureGates, gates_from_mapping, parse_feature_gates
from py_engine.scaledown.kruise import KruiseOrder, is_pod_available, kruise_decide, kruise_less
from py_engine.scaledown.kubernetes import K8sOrder, active_pods_less, active_pods_order, decide, k8s_less
from py_engine.scaledown.nodes import read_nodes
from py_engine.scaledown.ordering import Placement
from py_engine.scaledown.pods import PodFacts, pod_list_items, read_pod, read_pods
from py_engine.scaledown.rankers import (
    SpreadConstraint,
    SpreadRanking,
    constraints_from_keys,
    constraints_from_workload,
    same_node_ranks,
    spread_constraints_ranking,
)
from py_engine.scaledown.replicaset import (
    BURST_REPLICAS,
    get_pods_to_delete,
    merge_related,
    related_pod_ranks,
    replicaset_order,
    scale_down_passes,
)
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION

__all__ = [
    "BURST_REPLICAS",
    "DEFAULT_GATES",
    "DELETION_COST_ANNOTATION",
    "CloneSetSpec",
    "FeatureGateError",
    "FeatureGates",
    "K8sOrder",
    "KruiseOrder",
    "NodeFormatError",
    "Placement",
    "PodFacts",
    "PodFormatError",
    "ScaledownInputError",
    "SpreadConstraint",
    "SpreadRanking",
    "active_pods_less",
    "active_pods_order",
    "choose_pods_to_delete",
    "cloneset_deletion_order",
    "cloneset_spec_from_object",
    "cloneset_victims",
    "constraints_from_keys",
    "constraints_from_workload",
    "decide",
    "deletion_cost",
    "gates_from_mapping",
    "get_pods_to_delete",
    "is_pod_available",
    "k8s_less",
    "kruise_decide",
    "kruise_less",
    "merge_related",
    "parse_deletion_cost",
    "parse_feature_gates",
    "pod_list_items",
    "read_nodes",
    "read_pod",
    "read_pods",
    "related_pod_ranks",
    "replicaset_order",
    "same_node_ranks",
    "scale_down_passes",
    "scale_in_pass",
    "spread_constraints_ranking",
]
