# Unit tests of subset eligibility. Run with `opa test policies/` or `pytest policies/`.
package spreadgate.subset

import rego.v1

zone_term(zones) := {"matchExpressions": [{"key": "zone", "operator": "In", "values": zones}]}

spread := {"spec": {"subsets": [
	{"name": "a", "requiredNodeSelectorTerm": zone_term(["z1"])},
	{"name": "b", "requiredNodeSelectorTerm": zone_term(["z2"]), "tolerations": [{"key": "spot", "operator": "Exists"}]},
	{"name": "c"},
]}}

plain_pod := {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}

pod_with_affinity(terms) := {"spec": {
	"containers": plain_pod.spec.containers,
	"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}},
}}

mk_node(name, labels, taints, cpu) := {"name": name, "labels": labels, "taints": taints, "free": {"cpu": cpu, "memory": 8589934592, "pods": 10}}

test_all_subsets_eligible_in_spec_order if {
	decision.eligible == ["a", "b", "c"] with input as {"pod": plain_pod, "workloadSpread": spread}
}

test_unschedulable_subset_skipped if {
	statuses := [{"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}, {"name": "b", "conditions": [{"type": "Schedulable", "status": "True"}]}]
	decision.eligible == ["b", "c"] with input as {"pod": plain_pod, "workloadSpread": spread, "subsetStatuses": statuses}
	decision.skipped.unschedulable == {"a"} with input as {"pod": plain_pod, "workloadSpread": spread, "subsetStatuses": statuses}
	{r.subset | some r in rejected} == {"a"} with input as {"pod": plain_pod, "workloadSpread": spread, "subsetStatuses": statuses}

	# a status entry of a subset no longer in the spec is not reported
	stale := [{"name": "gone", "conditions": [{"type": "Schedulable", "status": "False"}]}]
	d := decision with input as {"pod": plain_pod, "workloadSpread": spread, "subsetStatuses": stale}
	d.eligible == ["a", "b", "c"]
	count(rejected) == 0 with input as {"pod": plain_pod, "workloadSpread": spread, "subsetStatuses": stale}
}

test_contradicting_pod_affinity_skips_subset if {
	pod := pod_with_affinity([zone_term(["z2"])])
	d := decision with input as {"pod": pod, "workloadSpread": spread}
	d.eligible == ["b", "c"]
	d.skipped.contradicts_pod == {"a"}
	{"a"} == {r.subset | some r in rejected} with input as {"pod": pod, "workloadSpread": spread}
}

test_affinity_satisfiable_through_any_ored_term if {
	pod := pod_with_affinity([zone_term(["z2"]), zone_term(["z1", "z3"])])
	decision.eligible == ["a", "b", "c"] with input as {"pod": pod, "workloadSpread": spread}
}

test_node_selector_contradiction if {
	pod := {"spec": {"nodeSelector": {"zone": "z1"}, "containers": []}}
	decision.eligible == ["a", "c"] with input as {"pod": pod, "workloadSpread": spread}
}

requirement_subset(reqs) := {"spec": {"subsets": [{"name": "s", "requiredNodeSelectorTerm": {"matchExpressions": array.slice(reqs, 1, count(reqs))}}]}}

# The first requirement is the pod's own, the rest the subset's.
requirement_pod(reqs) := pod_with_affinity([{"matchExpressions": [reqs[0]]}])

test_key_satisfiability_rules if {
	satisfiable_cases := [
		[{"key": "k", "operator": "In", "values": ["a", "b"]}, {"key": "k", "operator": "NotIn", "values": ["a"]}],
		[{"key": "k", "operator": "DoesNotExist"}, {"key": "k", "operator": "NotIn", "values": ["a"]}],
		[{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Gt", "values": ["3"]}, {"key": "k", "operator": "Lt", "values": ["5"]}],
		[{"key": "k", "operator": "In", "values": ["4", "9"]}, {"key": "k", "operator": "Gt", "values": ["3"]}, {"key": "k", "operator": "Lt", "values": ["5"]}],
	]
	every reqs in satisfiable_cases {
		decision.eligible == ["s"] with input as {"pod": requirement_pod(reqs), "workloadSpread": requirement_subset(reqs)}
	}
	unsatisfiable_cases := [
		[{"key": "k", "operator": "In", "values": ["a"]}, {"key": "k", "operator": "NotIn", "values": ["a"]}],
		[{"key": "k", "operator": "In", "values": ["a"]}, {"key": "k", "operator": "In", "values": ["b"]}],
		[{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "DoesNotExist"}],
		[{"key": "k", "operator": "Gt", "values": ["4"]}, {"key": "k", "operator": "Lt", "values": ["5"]}],
		[{"key": "k", "operator": "In", "values": ["x"]}, {"key": "k", "operator": "Gt", "values": ["1"]}],
		[{"key": "k", "operator": "In", "values": ["9"]}, {"key": "k", "operator": "Lt", "values": ["5"]}],
		[{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Gt", "values": ["a"]}],
	]
	every reqs in unsatisfiable_cases {
		decision.eligible == [] with input as {"pod": requirement_pod(reqs), "workloadSpread": requirement_subset(reqs)}
	}
}

fields_subset(fields) := {"spec": {"subsets": [{"name": "s", "requiredNodeSelectorTerm": {"matchFields": fields}}]}}

fields_pod(field) := pod_with_affinity([{"matchFields": [field]}])

test_match_fields_satisfiability if {
	pod := fields_pod({"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]})
	decision.eligible == ["s"] with input as {"pod": pod, "workloadSpread": fields_subset([{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}])}
	decision.eligible == [] with input as {"pod": pod, "workloadSpread": fields_subset([{"key": "metadata.name", "operator": "In", "values": ["n3"]}])}

	# a single matchFields requirement on either side alone is always satisfiable
	decision.eligible == ["s"] with input as {"pod": plain_pod, "workloadSpread": fields_subset([{"key": "metadata.name", "operator": "In", "values": ["n3"]}])}
}

test_subset_sharing_no_key_with_the_pod_is_not_analysed if {
	# the pod constrains the architecture, the subsets the zone: nothing to combine
	pod := pod_with_affinity([{"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]}])
	decision.eligible == ["a", "b", "c"] with input as {"pod": pod, "workloadSpread": spread}
}

test_node_fit_by_labels if {
	nodes := [mk_node("n1", {"zone": "z1"}, [], 4)]
	decision.eligible == ["a", "c"] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": nodes}
}

test_node_fit_needs_tolerations_from_pod_or_subset if {
	spot := [mk_node("n2", {"zone": "z2"}, [{"key": "spot", "value": "true", "effect": "NoSchedule"}], 4)]
	decision.eligible == ["b"] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": spot}

	# a PreferNoSchedule taint only scores; NoExecute needs a toleration like NoSchedule
	soft := [mk_node("n3", {"zone": "z1"}, [{"key": "x", "effect": "PreferNoSchedule"}], 4)]
	decision.eligible == ["a", "c"] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": soft}
	hard := [mk_node("n4", {"zone": "z1"}, [{"key": "x", "value": "v", "effect": "NoExecute"}], 4)]
	decision.eligible == [] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": hard}
	tolerating := {"spec": {"containers": [], "tolerations": [{"key": "x", "operator": "Equal", "value": "v"}]}}
	decision.eligible == ["a", "c"] with input as {"pod": tolerating, "workloadSpread": spread, "nodes": hard}
	tolerate_all := {"spec": {"containers": [], "tolerations": [{"operator": "Exists"}]}}
	decision.eligible == ["a", "c"] with input as {"pod": tolerate_all, "workloadSpread": spread, "nodes": hard}
}

test_node_fit_by_resources if {
	small := [mk_node("n1", {"zone": "z1"}, [], 0.25)]
	d := decision with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": small}
	d.eligible == []
	count(d.skipped.no_node_fits) == 3
	count(rejected) == 3 with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": small}

	# requests default to limits; plain numbers are accepted
	limits_pod := {"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": 0.2}}}]}}
	decision.eligible == ["a", "c"] with input as {"pod": limits_pod, "workloadSpread": spread, "nodes": small}
	full := [{"name": "n1", "labels": {"zone": "z1"}, "free": {"cpu": 8, "memory": 8589934592, "pods": 0}}]
	decision.eligible == [] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": full}
}

test_subset_patch_resources_override_pod_requests if {
	big := {"spec": {"subsets": [{"name": "big", "patch": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}}}, {"name": "small"}]}}
	nodes := [mk_node("n1", {}, [], 1)]
	decision.eligible == ["small"] with input as {"pod": plain_pod, "workloadSpread": big, "nodes": nodes}
}

test_cordoned_nodes_do_not_fit if {
	cordoned := [object.union(mk_node("n1", {"zone": "z1"}, [], 4), {"unschedulable": true})]
	decision.eligible == [] with input as {"pod": plain_pod, "workloadSpread": spread, "nodes": cordoned}
}

test_node_expression_operators if {
	labels := {"cores": "8", "gpu": "a100", "zone": "z1"}
	every e in [
		{"key": "gpu", "operator": "Exists"},
		{"key": "tpu", "operator": "DoesNotExist"},
		{"key": "zone", "operator": "NotIn", "values": ["z2"]},
		{"key": "cores", "operator": "Gt", "values": ["4"]},
		{"key": "cores", "operator": "Lt", "values": ["16"]},
	] {
		expression_matches(labels, e)
	}
	not expression_matches(labels, {"key": "cores", "operator": "Gt", "values": ["8"]})
	not expression_matches(labels, {"key": "gpu", "operator": "DoesNotExist"})
	node_matches_term({"name": "n1", "labels": labels}, {"matchExpressions": [], "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n2"]}]})
	node_matches_term({"name": "n1", "labels": labels}, {"matchExpressions": [], "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]})
}

test_malformed_gt_values_compare_as_false if {
	not numeric_gt("a", "1")
	not numeric_gt("5", "b")
	numeric_gt("5", "-1")
}

test_malformed_quantities_count_as_zero if {
	quantity("1Gi") == 1073741824
	quantity(2) == 2
	quantity("lots") == 0
	quantity(["x"]) == 0
}

# Cases where this policy once disagreed with py_engine/semantics/scheduling.py
# (tests/policy/test_node_matching_agreement.py checks the two agree).

test_integers_read_like_kubernetes if {
	numeric_gt("07", "1") # leading zeros: to_number alone refuses "07"
	numeric_gt("9007199254740993", "9007199254740992")
	not numeric_gt("99999999999999999999", "1") # beyond 64 bits: not an integer
	not numeric_gt("+5", "1")
	not numeric_gt(" 5", "1")
	numeric_gt("1", "-000") # all zeros read as 0
	numeric_gt("9223372036854775807", "-9223372036854775808") # the int64 extremes
	not numeric_gt("9223372036854775808", "1")
	not numeric_gt("1", "-9223372036854775809")
	not key_satisfiable([{"key": "k", "operator": "Gt", "values": ["05"]}, {"key": "k", "operator": "Lt", "values": ["6"]}])
	key_satisfiable([{"key": "k", "operator": "Gt", "values": ["9007199254740995"]}, {"key": "k", "operator": "Lt", "values": ["9007199254740997"]}])
}

test_requirements_with_the_wrong_number_of_values_match_nothing if {
	labels := {"zone": "z1"}
	not expression_matches(labels, {"key": "tier", "operator": "NotIn"})
	not expression_matches(labels, {"key": "tier", "operator": "NotIn", "values": []})
	not expression_matches(labels, {"key": "zone", "operator": "Exists", "values": ["z1"]})
	not expression_matches(labels, {"key": "tier", "operator": "DoesNotExist", "values": ["x"]})
	not expression_matches({"cores": "8"}, {"key": "cores", "operator": "Gt", "values": ["1", "2"]})
	not field_matches("n1", {"key": "metadata.name", "operator": "NotIn", "values": []})
	not field_matches("n1", {"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]})
}

test_empty_key_equal_toleration_matches_every_key_with_that_value if {
	toleration_matches({}, {"key": "spot", "effect": "NoSchedule"})
	not toleration_matches({}, {"key": "spot", "value": "true", "effect": "NoSchedule"})
}

cordoned := [{"name": "n1", "labels": {"zone": "z1"}, "unschedulable": true}]

test_cordoned_node_admits_pods_tolerating_unschedulable if {
	d := decision with input as {"pod": {"spec": {}}, "workloadSpread": {"spec": {"subsets": [{"name": "a"}]}}, "nodes": cordoned}
	d.skipped.no_node_fits == {"a"}
	tolerant := {"name": "a", "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]}
	e := decision with input as {"pod": {"spec": {}}, "workloadSpread": {"spec": {"subsets": [tolerant]}}, "nodes": cordoned}
	e.eligible == ["a"]
}

test_empty_required_terms_match_no_node if {
	nodes := [{"name": "n1", "labels": {"zone": "z1"}}]
	empty_subset_term := decision with input as {"pod": {"spec": {}}, "nodes": nodes,
		"workloadSpread": {"spec": {"subsets": [{"name": "a", "requiredNodeSelectorTerm": {}}]}}}
	empty_subset_term.skipped.no_node_fits == {"a"}
	pod_empty_term := {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}}}
	empty_pod_term := decision with input as {"pod": pod_empty_term, "nodes": nodes,
		"workloadSpread": {"spec": {"subsets": [{"name": "a"}, {"name": "b", "requiredNodeSelectorTerm": zone_term(["z1"])}]}}}
	empty_pod_term.eligible == ["b"]
	no_affinity := decision with input as {"pod": {"spec": {}}, "nodes": nodes, "workloadSpread": {"spec": {"subsets": [{"name": "a"}]}}}
	no_affinity.eligible == ["a"]
}
