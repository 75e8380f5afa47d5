# Unit tests of the validation policy: each rule has an accepted and a rejected case.
# Run with `opa test policies/` or `pytest policies/` (regorus).
package spreadgate.validation

import rego.v1

base_spread := {
	"apiVersion": "spreadgate.dev/v1alpha1",
	"kind": "WorkloadSpread",
	"metadata": {"name": "ws", "namespace": "default"},
	"spec": {
		"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
		"subsets": [
			{"name": "a", "maxReplicas": 3},
			{"name": "b"},
		],
	},
}

with_spec(extra) := object.union(base_spread, {"spec": object.union(base_spread.spec, extra)})

with_subsets(list) := with_spec({"subsets": list})

with_target(ref) := object.union(json.remove(base_spread, ["spec/targetRef"]), {"spec": {"targetRef": ref}})

with_annotations(a) := object.union(base_spread, {"metadata": object.union(base_spread.metadata, {"annotations": a})})

reported_fields := {v.details.field | some v in violation}

# --- input shapes ---------------------------------------------------------------

test_valid_spread_has_no_violation if {
	count(violation) == 0 with input as base_spread
}

test_gatekeeper_review_input_is_read if {
	"spec.subsets[0].name" in reported_fields with input as {"review": {"object": with_subsets([{"name": ""}])}}
}

test_kruise_group_is_checked_too if {
	obj := object.union(with_subsets([{"name": ""}]), {"apiVersion": "apps.kruise.io/v1alpha1"})
	"spec.subsets[0].name" in reported_fields with input as obj
}

test_other_kinds_are_ignored if {
	count(violation) == 0 with input as {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}}
}

test_messages_carry_field_path if {
	some v in violation with input as with_subsets([{"name": ""}])
	startswith(v.msg, "spec.subsets[0].name: ")
}

test_spec_must_be_object if {
	"spec" in reported_fields with input as object.union(base_spread, {"spec": "nope"})
}

# --- targetRef -----------------------------------------------------------------

test_target_ref_required if {
	obj := json.remove(base_spread, ["spec/targetRef"])
	"spec.targetRef" in reported_fields with input as obj
}

test_target_ref_fields_required if {
	"spec.targetRef" in reported_fields with input as with_target({"apiVersion": "", "kind": "Deployment", "name": "web"})
	"spec.targetRef" in reported_fields with input as with_target({"apiVersion": "apps/v1", "kind": "Deployment"})
}

test_target_ref_api_version_must_parse if {
	"spec.targetRef" in reported_fields with input as with_target({"apiVersion": "apps/v1/x", "kind": "Deployment", "name": "web"})
}

test_builtin_kinds_in_their_groups_accepted if {
	refs := [
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "w"},
		{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w"},
		{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "w"},
		{"apiVersion": "batch/v1", "kind": "Job", "name": "w"},
		{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "w"},
	]
	every ref in refs {
		count(violation) == 0 with input as with_target(ref)
	}
}

test_builtin_kind_in_wrong_group_rejected if {
	"spec.targetRef" in reported_fields with input as with_target({"apiVersion": "apps/v1", "kind": "CloneSet", "name": "w"})
	"spec.targetRef" in reported_fields with input as with_target({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "name": "w"})
}

test_custom_kind_rejected_unless_listed if {
	ref := {"apiVersion": "game.kruise.io/v1alpha1", "kind": "GameServerSet", "name": "gs"}
	"spec.targetRef" in reported_fields with input as with_target(ref)
	allowed := {"review": {"object": with_target(ref)}, "parameters": {"customWorkloads": [{"group": "game.kruise.io", "kind": "GameServerSet"}]}}
	count(violation) == 0 with input as allowed
	via_context := {"review": {"object": with_target(ref)}, "context": {"customWorkloads": [{"group": "game.kruise.io", "kind": "GameServerSet"}]}}
	count(violation) == 0 with input as via_context
}

test_target_in_other_namespace_rejected if {
	"spec.targetRef.namespace" in reported_fields with input as with_target({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod"})
	count(violation) == 0 with input as with_target({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default"})
}

test_update_may_change_version_only if {
	old := object.union(base_spread, {"spec": object.union(base_spread.spec, {"targetRef": {"apiVersion": "apps/v1beta2", "kind": "Deployment", "name": "web"}})})
	count(violation) == 0 with input as {"review": {"operation": "UPDATE", "object": base_spread, "oldObject": old}}
	renamed := with_target({"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"})
	"spec.targetRef" in reported_fields with input as {"review": {"operation": "UPDATE", "object": renamed, "oldObject": base_spread}}
}

test_second_spread_for_one_workload_rejected if {
	other := object.union(base_spread, {"metadata": {"name": "older", "namespace": "default"}})
	"spec.targetRef" in reported_fields with input as {"review": {"object": base_spread}, "context": {"workloadSpreads": [other]}}

	# the spread itself (same name) and spreads of other workloads do not conflict
	itself := {"review": {"object": base_spread}, "context": {"workloadSpreads": [base_spread]}}
	count(violation) == 0 with input as itself
	elsewhere := object.union(other, {"spec": object.union(base_spread.spec, {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}})})
	count(violation) == 0 with input as {"review": {"object": base_spread}, "context": {"workloadSpreads": [elsewhere]}}
}

test_conflict_found_in_gatekeeper_inventory if {
	other := object.union(base_spread, {"metadata": {"name": "older", "namespace": "default"}})
	inventory := {"namespace": {"default": {"spreadgate.dev/v1alpha1": {"WorkloadSpread": {"older": other}}}}}
	"spec.targetRef" in reported_fields with input as {"review": {"object": base_spread}} with data.inventory as inventory
}

# --- targetFilter ------------------------------------------------------------------

test_target_filter_valid_selector_accepted if {
	f := {"selector": {"matchLabels": {"role": "worker"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}, "replicasPathList": ["spec.replicas"]}
	count(violation) == 0 with input as with_spec({"targetFilter": f})
}

test_target_filter_bad_selector_rejected if {
	bad := [
		{"matchLabels": {"bad key!": "x"}},
		{"matchLabels": {"role": "not valid!"}},
		{"matchExpressions": [{"key": "bad key!", "operator": "Exists"}]},
		{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]},
		{"matchExpressions": [{"key": "k", "operator": "In"}]},
		{"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["x"]}]},
		"not-an-object",
	]
	every sel in bad {
		"spec.targetFilter" in reported_fields with input as with_spec({"targetFilter": {"selector": sel}})
	}
}

test_target_filter_empty_path_rejected if {
	"spec.targetFilter.replicasPathList" in reported_fields with input as with_spec({"targetFilter": {"replicasPathList": [""]}})
}

# --- annotations --------------------------------------------------------------------

test_in_subset_spread_annotation if {
	count(violation) == 0 with input as with_annotations({"spreadgate.dev/in-subset-spread": "false"})
	"metadata.annotations[spreadgate.dev/in-subset-spread]" in reported_fields with input as with_annotations({"spreadgate.dev/in-subset-spread": "no"})
}

test_recovery_window_annotation if {
	count(violation) == 0 with input as with_annotations({"spreadgate.dev/recovery-window-seconds": "600"})
	every bad in ["5", "abc", "100000"] {
		"metadata.annotations[spreadgate.dev/recovery-window-seconds]" in reported_fields with input as with_annotations({"spreadgate.dev/recovery-window-seconds": bad})
	}
}

# --- subsets -------------------------------------------------------------------------

test_subsets_required if {
	"spec.subsets" in reported_fields with input as with_subsets([])
	"spec.subsets" in reported_fields with input as json.remove(base_spread, ["spec/subsets"])
	"spec.subsets" in reported_fields with input as with_subsets({"a": 1})
}

test_single_subset_allowed if {
	count(violation) == 0 with input as with_subsets([{"name": "only"}])
}

test_subset_name_required if {
	"spec.subsets[1].name" in reported_fields with input as with_subsets([{"name": "a"}, {"name": ""}])
	"spec.subsets[0].name" in reported_fields with input as with_subsets([{}])
}

test_duplicate_subset_name_reported_at_later_index if {
	fields := reported_fields with input as with_subsets([{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "a"}])
	"spec.subsets[2].name" in fields
	"spec.subsets[3].name" in fields
	not "spec.subsets[0].name" in fields
}

test_duplicate_subset_name_names_its_first_use if {
	msgs := {v.msg | some v in violation} with input as with_subsets([{"name": "b"}, {"name": "a"}, {"name": "b"}, {"name": ""}, {"name": ""}])
	"spec.subsets[2].name: Invalid value: duplicate subset name \"b\" (first used at index 0)" in msgs
	count({m | some m in msgs; contains(m, "duplicate")}) == 1
}

# The count is checked first: beyond max_subsets no per-subset rule runs, so the
# duplicate and the bad name below are not reported, only the count.
test_too_many_subsets_only_counted if {
	many := [s | some i in numbers.range(0, max_subsets); s := {"name": "same", "maxReplicas": "x"}]
	fields := reported_fields with input as with_subsets(many)
	fields == {"spec.subsets"}
	msgs := {v.msg | some v in violation} with input as with_subsets(many)
	msgs == {sprintf("spec.subsets: Too many: %d: must have at most %d subsets", [max_subsets + 1, max_subsets])}
}

test_max_subsets_accepted if {
	most := [s | some i in numbers.range(1, max_subsets); s := {"name": sprintf("s%d", [i])}]
	count(violation) == 0 with input as with_subsets(most)
}

# --- node selector terms -----------------------------------------------------------

term_subset(term) := with_subsets([{"name": "a", "requiredNodeSelectorTerm": term}])

# The common term (In/NotIn with values, valid keys) is settled by _plain_term; anything else
# by the full checks, which still report a bad key inside an otherwise plain expression.
test_plain_required_term_accepted_and_bad_key_still_reported if {
	plain := {"matchExpressions": [
		{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]},
		{"key": "pool", "operator": "NotIn", "values": ["spot"]},
	]}
	count(violation) == 0 with input as term_subset(plain)
	bad := {"matchExpressions": [{"key": "-bad-", "operator": "In", "values": ["a"]}]}
	"spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].key" in reported_fields with input as term_subset(bad)
	empty := {"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}
	"spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values" in reported_fields with input as term_subset(empty)
}

test_required_term_valid_operators_accepted if {
	term := {
		"matchExpressions": [
			{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]},
			{"key": "spot", "operator": "NotIn", "values": ["true"]},
			{"key": "gpu", "operator": "Exists"},
			{"key": "legacy", "operator": "DoesNotExist"},
			{"key": "cores", "operator": "Gt", "values": ["4"]},
			{"key": "cores", "operator": "Lt", "values": ["-1"]},
		],
		"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}],
	}
	count(violation) == 0 with input as term_subset(term)
}

test_required_term_errors_rejected if {
	p := "spec.subsets[0].requiredNodeSelectorTerm"
	cases := [
		[{"matchExpressions": [{"key": "bad key!", "operator": "Exists"}]}, ".matchExpressions[0].key"],
		[{"matchExpressions": [{"key": "k", "operator": "Near"}]}, ".matchExpressions[0].operator"],
		[{"matchExpressions": [{"key": "k", "operator": "In"}]}, ".matchExpressions[0].values"],
		[{"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["x"]}]}, ".matchExpressions[0].values"],
		[{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x"]}]}, ".matchExpressions[0].values"],
		[{"matchExpressions": [{"key": "k", "operator": "Lt", "values": ["1", "2"]}]}, ".matchExpressions[0].values"],
		[{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]}, ".matchFields[0].key"],
		[{"matchFields": [{"key": "metadata.name", "operator": "Exists", "values": ["x"]}]}, ".matchFields[0].operator"],
		[{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}, ".matchFields[0].values"],
		["zone-a", ""],
	]
	every c in cases {
		concat("", [p, c[1]]) in reported_fields with input as term_subset(c[0])
	}
}

test_preferred_terms if {
	good := [{"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Exists"}]}}, {"weight": 100, "preference": {}}]
	count(violation) == 0 with input as with_subsets([{"name": "a", "preferredNodeSelectorTerms": good}])
	every w in [0, 101, 2.5, "10"] {
		"spec.subsets[0].preferredNodeSelectorTerms[0].weight" in reported_fields with input as with_subsets([{"name": "a", "preferredNodeSelectorTerms": [{"weight": w, "preference": {}}]}])
	}
	bad_pref := [{"weight": 5, "preference": {"matchExpressions": [{"key": "k", "operator": "In"}]}}]
	"spec.subsets[0].preferredNodeSelectorTerms[0].preference.matchExpressions[0].values" in reported_fields with input as with_subsets([{"name": "a", "preferredNodeSelectorTerms": bad_pref}])
}

# --- tolerations ---------------------------------------------------------------------

toleration_subset(t) := with_subsets([{"name": "a", "tolerations": [t]}])

test_valid_tolerations_accepted if {
	good := [
		{"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
		{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "PreferNoSchedule"},
		{"key": "dedicated", "value": "ml"},
		{"operator": "Exists"},
		{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
	]
	every t in good {
		count(violation) == 0 with input as toleration_subset(t)
	}
}

test_invalid_tolerations_rejected if {
	p := "spec.subsets[0].tolerations[0]"
	cases := [
		[{"key": "bad key!", "operator": "Exists"}, ".key"],
		[{"operator": "Equal", "value": "x"}, ".operator"],
		[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}, ".effect"],
		[{"key": "k", "operator": "Equal", "value": "not valid!"}, ".value"],
		[{"key": "k", "operator": "Exists", "value": "x"}, ".value"],
		[{"key": "k", "operator": "Gt", "value": "1"}, ".operator"],
		[{"key": "k", "operator": "Exists", "effect": "NoRun"}, ".effect"],
	]
	every c in cases {
		concat("", [p, c[1]]) in reported_fields with input as toleration_subset(c[0])
	}
}

# --- patch ----------------------------------------------------------------------------

patch_subset(p) := with_subsets([{"name": "a", "patch": p}])

good_patch := {
	"metadata": {"labels": {"subset": "a"}, "annotations": {"note": "x"}},
	"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": 1}}}]},
}

test_valid_patch_accepted if {
	count(violation) == 0 with input as patch_subset(good_patch)
	workload := {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}
	count(violation) == 0 with input as {"review": {"object": patch_subset(good_patch)}, "context": {"workload": workload}}
}

test_invalid_patches_rejected if {
	bad := [
		"not an object",
		{"metadata": {"labels": {"bad key!": "x"}}},
		{"metadata": {"labels": {"k": "not valid!"}}},
		{"metadata": {"annotations": {"k": 5}}},
		{"spec": {"containers": [{"image": "x"}]}},
		{"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "lots"}}}]}},
	]
	every p in bad {
		"spec.subsets[0].patch" in reported_fields with input as patch_subset(p)
	}
}

test_patch_adding_container_without_image_rejected if {
	workload := {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}
	p := {"spec": {"containers": [{"name": "sidecar"}]}}
	"spec.subsets[0].patch" in reported_fields with input as {"review": {"object": patch_subset(p)}, "context": {"workload": workload}}
	with_image := {"spec": {"containers": [{"name": "sidecar", "image": "envoy"}]}}
	count(violation) == 0 with input as {"review": {"object": patch_subset(with_image)}, "context": {"workload": workload, "allowedPatchFields": ["spec.containers[]"]}}
}

# --- maxReplicas -------------------------------------------------------------------------

caps(values) := with_subsets([s | some i, v in values; s := object.union({"name": sprintf("s%d", [i])}, cap_field(v))])

cap_field(v) := {} if v == null

else := {"maxReplicas": v}

test_valid_caps_accepted if {
	every values in [[3, 0, null], ["20%", "30%", "50%"], ["50%", "50%"], ["50%", "50%", null], ["20%", null], [null, null], ["0%", null]] {
		count(violation) == 0 with input as caps(values)
	}
}

test_mixed_cap_types_rejected if {
	fields := reported_fields with input as caps([3, "30%", null])
	"spec.subsets[1].maxReplicas" in fields
}

test_statefulset_needs_integer_caps if {
	obj := object.union(caps(["50%", null]), {"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}}})
	"spec.subsets[0].maxReplicas" in reported_fields with input as obj
	ok := object.union(caps([5, null]), {"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}}})
	count(violation) == 0 with input as ok
}

test_malformed_caps_rejected if {
	every v in [-1, 2.5, "5", "0.2%", "50.2%", "-1%", true, 2147483648] {
		"spec.subsets[0].maxReplicas" in reported_fields with input as caps([v, null])
	}
}

test_percent_sum_over_100_rejected_where_it_crosses if {
	"spec.subsets[1].maxReplicas" in reported_fields with input as caps(["40%", "70%", null])
	"spec.subsets[0].maxReplicas" in reported_fields with input as caps(["101%", null])
}

# Each positive percent adds at least 1, so only the first 101 positive ones are summed;
# zeros before them change nothing, and the crossing subset is still found.
test_percent_sum_crossing_found_after_many_zero_caps if {
	zeros := [z | some _ in numbers.range(1, 60); z := "0%"]
	fields := reported_fields with input as caps(array.concat(zeros, ["60%", "0%", "50%", "10%", null]))
	"spec.subsets[62].maxReplicas" in fields
	count({f | some f in fields; endswith(f, ".maxReplicas")}) == 1
}

# At the bound: 98 caps of 1% and one of 3% pass 100% at the 99th subset only.
test_percent_sum_crossing_at_the_last_capped_subset_of_the_most_subsets if {
	ones := [o | some _ in numbers.range(1, 98); o := "1%"]
	count(violation) == 0 with input as caps(array.concat(ones, ["2%", null]))
	fields := reported_fields with input as caps(array.concat(ones, ["3%", null]))
	fields == {"spec.subsets[98].maxReplicas"}
}

test_only_first_cap_error_reported if {
	fields := reported_fields with input as caps(["x", "y", null])
	"spec.subsets[0].maxReplicas" in fields
	not "spec.subsets[1].maxReplicas" in fields
}

test_percent_sum_under_100_with_capped_last_rejected if {
	"spec.subsets[0].maxReplicas" in reported_fields with input as caps(["40%", "20%", "20%"])
	count(violation) == 0 with input as caps(["40%", "20%", null])
}

# --- scheduleStrategy ---------------------------------------------------------------------

strategy_spread(s) := with_spec({"scheduleStrategy": s})

test_strategy_types if {
	every t in ["", "Fixed", "Adaptive"] {
		count(violation) == 0 with input as strategy_spread({"type": t})
	}
	"spec.scheduleStrategy.type" in reported_fields with input as strategy_spread({"type": "random"})
}

test_adaptive_only_with_adaptive_type if {
	"spec.scheduleStrategy.type" in reported_fields with input as strategy_spread({"type": "Fixed", "adaptive": {"rescheduleCriticalSeconds": 30}})
}

test_adaptive_needs_unlimited_last_subset if {
	capped_last := object.union(caps([3, 5]), {"spec": {"scheduleStrategy": {"type": "Adaptive", "adaptive": {}}}})
	"spec.scheduleStrategy.adaptive" in reported_fields with input as capped_last
	single := object.union(caps([3]), {"spec": {"scheduleStrategy": {"type": "Adaptive", "adaptive": {}}}})
	count(violation) == 0 with input as single
}

adaptive_spread(n_subsets, seconds) := object.union(caps(array.concat([3 | some _ in numbers.range(1, n_subsets - 1)], [null])), {"spec": {"scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": seconds}}}})

test_reschedule_seconds_bounds if {
	f := "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"
	count(violation) == 0 with input as adaptive_spread(2, 295)
	f in reported_fields with input as adaptive_spread(2, 296)
	count(violation) == 0 with input as adaptive_spread(3, 147)
	f in reported_fields with input as adaptive_spread(3, 148)
	count(violation) == 0 with input as adaptive_spread(4, 98)
	f in reported_fields with input as adaptive_spread(4, 99)
	f in reported_fields with input as adaptive_spread(2, -1)
	f in reported_fields with input as adaptive_spread(2, 1.5)
}

test_reschedule_bound_follows_recovery_window if {
	obj := object.union(adaptive_spread(3, 290), {"metadata": {"annotations": {"spreadgate.dev/recovery-window-seconds": "600"}}})
	count(violation) == 0 with input as obj
	too_long := object.union(adaptive_spread(3, 298), {"metadata": {"annotations": {"spreadgate.dev/recovery-window-seconds": "600"}}})
	"spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds" in reported_fields with input as too_long
}
