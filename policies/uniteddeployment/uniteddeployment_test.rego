# Unit tests of the UnitedDeployment validation policy: each rule has a rejected
# case, and the base object (and its variants) are accepted.
# Run with `opa test policies/` or `pytest policies/` (regorus).
package spreadgate.uniteddeployment

import rego.v1

ud_pod_template := {
	"metadata": {"labels": {"app": "web"}},
	"spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
}

base_ud := {
	"apiVersion": "spreadgate.dev/v1beta1",
	"kind": "UnitedDeployment",
	"metadata": {"name": "web", "namespace": "default"},
	"spec": {
		"replicas": 6,
		"selector": {"matchLabels": {"app": "web"}},
		"template": {"deploymentTemplate": {
			"metadata": {"labels": {"app": "web"}},
			"spec": {"template": ud_pod_template},
		}},
		"topology": {"subsets": [
			{"name": "ecs", "maxReplicas": 2, "nodeSelectorTerm": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ecs"]}]}},
			{"name": "acs", "tolerations": [{"key": "virtual-kubelet.io/provider", "operator": "Exists", "effect": "NoSchedule"}]},
		]},
	},
}

with_spec(extra) := object.union(base_ud, {"spec": object.union(base_ud.spec, extra)})

with_subsets(list) := with_spec({"topology": {"subsets": list}})

with_template(key, t) := object.union(json.remove(base_ud, ["spec/template"]), {"spec": {"template": {key: t}}})

sts_template(extra) := {
	"metadata": {"labels": {"app": "web"}},
	"spec": object.union({"template": ud_pod_template}, extra),
}

fields(obj) := f if {
	f := {v.details.field | some v in violation} with input as obj
}

update_review(old, new) := {"review": {"operation": "UPDATE", "object": new, "oldObject": old}}

# --- input shapes and versions ---------------------------------------------------------

test_valid_ud_has_no_violation if {
	count(violation) == 0 with input as base_ud
}

test_kruise_versions_are_checked if {
	every v in ["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"] {
		"spec.replicas" in fields(object.union(with_spec({"replicas": -1}), {"apiVersion": v}))
	}
}

test_other_kinds_and_versions_are_ignored if {
	count(violation) == 0 with input as {"apiVersion": "apps/v1", "kind": "Deployment", "spec": 3}
	count(violation) == 0 with input as object.union(with_spec({"replicas": -1}), {"apiVersion": "spreadgate.dev/v9"})
}

test_gatekeeper_review_input_is_read if {
	"spec.replicas" in fields({"review": {"object": with_spec({"replicas": -1})}})
}

test_messages_carry_field_path if {
	some v in violation with input as with_spec({"replicas": -1})
	startswith(v.msg, "spec.replicas: Invalid value")
}

test_metadata_name_must_be_subdomain if {
	"metadata.name" in fields(object.union(base_ud, {"metadata": {"name": "Web_1"}}))
}

test_spec_must_be_object if {
	"spec" in fields(object.union(base_ud, {"spec": "nope"}))
}

test_hostile_types_do_not_raise if {
	obj := object.union(base_ud, {"spec": {
		"replicas": "x", "selector": 3, "template": [1], "revisionHistoryLimit": "y",
		"topology": {"subsets": [7, {"name": [1], "tolerations": 3, "nodeSelectorTerm": 4, "patch": 5, "replicas": true}], "scheduleStrategy": 3},
		"updateStrategy": {"type": 4, "manualUpdate": {"partitions": 3}},
	}})
	f := fields(obj)
	"spec.topology.subsets[0]" in f
	"spec.topology.subsets[1].name" in f
	"spec.topology.subsets[1].tolerations" in f
	"spec.topology.subsets[1].patch" in f
	"spec.topology.subsets[1].replicas" in f
	"spec.updateStrategy.type" in f
	"spec.revisionHistoryLimit" in f
	"spec.selector" in f
}

test_subsets_must_be_a_list if {
	"spec.topology.subsets" in fields(with_spec({"topology": {"subsets": {"name": "a"}}}))
}

# --- replicas, selector ------------------------------------------------------------------

test_replicas_must_be_non_negative if {
	"spec.replicas" in fields(with_spec({"replicas": -1}))
	"spec.replicas" in fields(with_spec({"replicas": 1.5}))
}

test_selector_required if {
	"spec.selector" in fields(json.remove(base_ud, ["spec/selector"]))
}

test_selector_syntax if {
	"spec.selector" in fields(with_spec({"selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "Near"}]}}))
}

test_empty_selector_rejected if {
	"spec.selector" in fields(object.union(json.remove(base_ud, ["spec/selector"]), {"spec": {"selector": {}}}))
}

test_selector_expressions_are_matched if {
	sel := {"matchExpressions": [
		{"key": "app", "operator": "In", "values": ["web"]},
		{"key": "tier", "operator": "NotIn", "values": ["db"]},
		{"key": "app", "operator": "Exists"},
		{"key": "legacy", "operator": "DoesNotExist"},
	]}
	count(violation) == 0 with input as with_spec({"selector": sel})
	bad := {"matchExpressions": [{"key": "legacy", "operator": "Exists"}]}
	"spec.template.deploymentTemplate.metadata.labels" in fields(with_spec({"selector": bad}))
}

# --- template ------------------------------------------------------------------------------

test_one_template_required if {
	"spec.template" in fields(with_template("deploymentTemplate", null))
}

test_only_one_template if {
	two := {"deploymentTemplate": base_ud.spec.template.deploymentTemplate, "cloneSetTemplate": base_ud.spec.template.deploymentTemplate}
	"spec.template" in fields(with_spec({"template": two}))
}

test_template_must_be_object if {
	"spec.template.deploymentTemplate" in fields(with_spec({"template": {"deploymentTemplate": 5}}))
}

test_template_labels_must_match_selector if {
	t := {"metadata": {"labels": {"app": "other"}}, "spec": {"template": object.union(ud_pod_template, {"metadata": {"labels": {"app": "other"}}})}}
	f := fields(with_template("cloneSetTemplate", t))
	"spec.template.cloneSetTemplate.metadata.labels" in f
	"spec.template.cloneSetTemplate.spec.template.metadata.labels" in f
}

test_advanced_statefulset_path_is_its_own if {
	t := object.union(sts_template({}), {"metadata": {"labels": {"app": "x"}}})
	"spec.template.advancedStatefulSetTemplate.metadata.labels" in fields(with_template("advancedStatefulSetTemplate", t))
}

test_statefulset_template_accepted if {
	count(violation) == 0 with input as with_template("statefulSetTemplate", sts_template({"podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"}}))
}

test_template_replicas_unused if {
	"spec.template.statefulSetTemplate.spec.replicas" in fields(with_template("statefulSetTemplate", sts_template({"replicas": 3})))
}

test_template_partition_unused if {
	strategy := {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
	"spec.template.statefulSetTemplate.spec.updateStrategy.rollingUpdate.partition" in fields(with_template("statefulSetTemplate", sts_template(strategy)))
	"spec.template.cloneSetTemplate.spec.updateStrategy.partition" in fields(with_template("cloneSetTemplate", sts_template({"updateStrategy": {"partition": 1}})))
}

test_workload_policies if {
	"spec.template.statefulSetTemplate.spec.podManagementPolicy" in fields(with_template("statefulSetTemplate", sts_template({"podManagementPolicy": "Random"})))
	"spec.template.deploymentTemplate.spec.updateStrategy.type" in fields(with_template("deploymentTemplate", sts_template({"updateStrategy": {"type": "OnDelete"}})))
}

test_pod_spec_rules if {
	pod := {"metadata": {"labels": {"app": "web"}}, "spec": {
		"restartPolicy": "Never", "activeDeadlineSeconds": 5,
		"containers": [{"name": "Main"}, {"name": "Main", "image": "x"}],
	}}
	f := fields(with_template("deploymentTemplate", {"metadata": {"labels": {"app": "web"}}, "spec": {"template": pod}}))
	p := "spec.template.deploymentTemplate.spec.template.spec"
	sprintf("%s.restartPolicy", [p]) in f
	sprintf("%s.activeDeadlineSeconds", [p]) in f
	sprintf("%s.containers[0].name", [p]) in f
	sprintf("%s.containers[1].name", [p]) in f
	sprintf("%s.containers[0].image", [p]) in f
}

test_containers_required if {
	t := {"metadata": {"labels": {"app": "web"}}, "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {}}}}
	"spec.template.deploymentTemplate.spec.template.spec.containers" in fields(with_template("deploymentTemplate", t))
}

test_reservation_needs_stateless_template if {
	strategy := {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}}
	obj := with_template("statefulSetTemplate", sts_template({}))
	adaptive := object.union(obj, {"spec": {"topology": {"subsets": obj.spec.topology.subsets, "scheduleStrategy": strategy}}})
	"spec.topology.scheduleStrategy" in fields(adaptive)
}

# --- subsets -------------------------------------------------------------------------------

test_subset_must_be_object if {
	"spec.topology.subsets[0]" in fields(with_subsets([3, {"name": "b"}]))
}

test_subset_name_required_and_valid if {
	f := fields(with_subsets([{}, {"name": "B_1"}]))
	"spec.topology.subsets[0].name" in f
	"spec.topology.subsets[1].name" in f
	count([v | some v in violation; v.details.field == "spec.topology.subsets[0].name"]) == 2 with input as with_subsets([{}])
}

test_subset_name_duplicate if {
	"spec.topology.subsets[1].name" in fields(with_subsets([{"name": "a"}, {"name": "a"}]))
}

test_subset_name_duplicate_reported_once_per_later_use if {
	f := fields(with_subsets([{"name": "b"}, {"name": "a"}, {"name": "b"}, {"name": "b"}]))
	"spec.topology.subsets[2].name" in f
	"spec.topology.subsets[3].name" in f
	not "spec.topology.subsets[0].name" in f
}

# The count is checked first: beyond max_subsets no per-subset rule runs.
test_too_many_subsets_only_counted if {
	many := [s | some i in numbers.range(0, max_subsets); s := {"name": "Same!", "replicas": -1}]
	msgs := {v.msg | some v in violation} with input as with_subsets(many)
	msgs == {sprintf("spec.topology.subsets: Too many: %d: must have at most %d subsets", [max_subsets + 1, max_subsets])}
}

test_max_subsets_accepted if {
	most := [s | some i in numbers.range(1, max_subsets); s := {"name": sprintf("s%d", [i])}]
	count(violation) == 0 with input as with_subsets(most)
}

test_node_selector_term_checked if {
	term := {"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}
	"spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].values" in fields(with_subsets([{"name": "a", "nodeSelectorTerm": term}]))
}

test_tolerations_checked if {
	f := fields(with_subsets([{"name": "a", "tolerations": [{"key": "k", "tolerationSeconds": 5}, 4]}]))
	"spec.topology.subsets[0].tolerations[0].effect" in f
	"spec.topology.subsets[0].tolerations[1]" in f
}

# --- replicas, minReplicas, maxReplicas ----------------------------------------------------------

test_subset_value_problems if {
	f := fields(with_subsets([
		{"name": "a", "replicas": -1},
		{"name": "b", "replicas": 3.5},
		{"name": "c", "replicas": "5"},
		{"name": "d", "replicas": "101%"},
		{"name": "e", "replicas": [1]},
	]))
	every i in numbers.range(0, 4) {
		sprintf("spec.topology.subsets[%d].replicas", [i]) in f
	}
}

test_percentage_needs_replicas if {
	obj := json.remove(with_subsets([{"name": "a", "replicas": "50%"}, {"name": "b", "replicas": 1}]), ["spec/replicas"])
	fields(obj) == {"spec.topology.subsets[0].replicas"}
}

test_percentages_parse_like_kruise if {
	# +050% and -0% are valid; 50% of 5 rounds half up to 3, so 3 + 2 = 5
	count(violation) == 0 with input as with_spec({"replicas": 5, "topology": {"subsets": [{"name": "a", "replicas": "+050%"}, {"name": "b", "replicas": 2}, {"name": "c", "replicas": "-0%"}]}})
	"spec.topology.subsets[0].replicas" in fields(with_subsets([{"name": "a", "replicas": "-5%"}, {"name": "b"}]))
	"spec.topology.subsets[0].replicas" in fields(with_subsets([{"name": "a", "replicas": "1000%"}, {"name": "b"}]))
}

test_min_above_max if {
	"spec.topology.subsets[0].minReplicas" in fields(with_subsets([{"name": "a", "minReplicas": 3, "maxReplicas": 2}, {"name": "b"}]))
}

test_replicas_and_min_max_exclusive if {
	f := fields(with_subsets([{"name": "a", "replicas": 2}, {"name": "b", "maxReplicas": 2}]))
	f == {"spec.topology.subsets"}
}

test_capacity_mode_needs_replicas if {
	obj := json.remove(base_ud, ["spec/replicas"])
	"spec.topology.subsets" in fields(obj)
}

test_capacity_mode_needs_an_unbounded_subset if {
	"spec.topology.subsets" in fields(with_subsets([{"name": "a", "maxReplicas": 2}, {"name": "b", "maxReplicas": 3}]))
}

test_capacity_min_sum_above_max_sum if {
	"spec.topology.subsets" in fields(with_subsets([{"name": "a", "minReplicas": 2000000}, {"name": "b", "maxReplicas": 1}]))
	count(violation) == 0 with input as with_subsets([{"name": "a", "minReplicas": 20}, {"name": "b", "minReplicas": "50%", "maxReplicas": "50%"}])
}

test_fixed_sum_rules if {
	"spec.topology.subsets" in fields(with_subsets([{"name": "a", "replicas": 4}, {"name": "b", "replicas": 3}, {"name": "c"}]))
	"spec.topology.subsets" in fields(with_subsets([{"name": "a", "replicas": 4}, {"name": "b", "replicas": 1}]))
	count(violation) == 0 with input as with_subsets([{"name": "a", "replicas": 4}, {"name": "b", "replicas": "33%"}])
}

test_fixed_mode_without_replicas_needs_every_subset if {
	obj := json.remove(with_subsets([{"name": "a", "replicas": 4}, {"name": "b"}]), ["spec/replicas"])
	fields(obj) == {"spec.topology.subsets"}
}

test_adaptive_forbids_fixed_replicas if {
	obj := with_spec({"topology": {"subsets": [{"name": "a", "replicas": 6}], "scheduleStrategy": {"type": "Adaptive"}}})
	fields(obj) == {"spec.topology.subsets[0].replicas"}
}

# --- scheduleStrategy and updateStrategy -------------------------------------------------------

with_schedule(strategy) := with_spec({"topology": object.union(base_ud.spec.topology, {"scheduleStrategy": strategy})})

test_adaptive_defaults_accepted if {
	count(violation) == 0 with input as with_schedule({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10, "unschedulableDuration": 60, "reserveUnschedulablePods": true}})
}

test_schedule_type_enum if {
	"spec.topology.scheduleStrategy.type" in fields(with_schedule({"type": "Spread"}))
}

test_adaptive_settings_need_adaptive_type if {
	"spec.topology.scheduleStrategy.adaptive" in fields(with_schedule({"type": "Fixed", "adaptive": {"rescheduleCriticalSeconds": 10}}))
}

test_adaptive_durations_positive if {
	f := fields(with_schedule({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 0, "unschedulableDuration": -5}}))
	"spec.topology.scheduleStrategy.adaptive.rescheduleCriticalSeconds" in f
	"spec.topology.scheduleStrategy.adaptive.unschedulableDuration" in f
}

test_renamed_adaptive_field if {
	"spec.topology.scheduleStrategy.adaptive.unschedulableLastSeconds" in fields(with_schedule({"type": "Adaptive", "adaptive": {"unschedulableLastSeconds": 60}}))
}

test_reserve_flag_boolean if {
	"spec.topology.scheduleStrategy.adaptive.reserveUnschedulablePods" in fields(with_schedule({"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": "yes"}}))
}

test_update_strategy_type if {
	"spec.updateStrategy.type" in fields(with_spec({"updateStrategy": {"type": "Auto"}}))
	count(violation) == 0 with input as with_spec({"updateStrategy": {"type": "Manual", "manualUpdate": {}}})
}

fixed_sts(partitions) := object.union(with_template("statefulSetTemplate", sts_template({})), {"spec": {
	"topology": {"subsets": [{"name": "a", "replicas": 2}, {"name": "b"}]},
	"updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": partitions}},
}})

test_partitions_accepted if {
	count(violation) == 0 with input as fixed_sts({"a": 2, "b": 4})
}

test_partition_for_unknown_subset if {
	"spec.updateStrategy.manualUpdate.partitions" in fields(fixed_sts({"c": 1}))
}

test_partition_values_in_range if {
	"spec.updateStrategy.manualUpdate.partitions[a]" in fields(fixed_sts({"a": -1}))
	"spec.updateStrategy.manualUpdate.partitions[a]" in fields(fixed_sts({"a": 3}))
}

test_partitions_on_deployment_subsets if {
	obj := with_spec({"updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"ecs": 1}}}})
	fields(obj) == {"spec.updateStrategy.manualUpdate.partitions[ecs]"}
}

# --- patch ------------------------------------------------------------------------------------

with_patch(p) := with_subsets([{"name": "a", "maxReplicas": 2, "patch": p}, {"name": "b"}])

test_allowed_patch_accepted if {
	p := {"metadata": {"labels": {"cpu": "intel"}}, "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}}
	count(violation) == 0 with input as with_patch(p)
}

test_patch_must_be_object if {
	"spec.topology.subsets[0].patch" in fields(with_patch("x"))
}

test_patch_outside_allowlist if {
	"spec.topology.subsets[0].patch.spec.hostNetwork" in fields(with_patch({"spec": {"hostNetwork": true}}))
}

test_patch_directive if {
	"spec.topology.subsets[0].patch.spec.containers[0].$patch" in fields(with_patch({"spec": {"containers": [{"name": "main", "$patch": "delete"}]}}))
}

test_patch_metadata_map if {
	"spec.topology.subsets[0].patch.metadata.labels" in fields(with_patch({"metadata": {"labels": "x"}}))
}

test_patch_reserved_and_selector_labels if {
	f := fields(with_patch({"metadata": {"labels": {"app": "other", "apps.kruise.io/subset-name": "b", "tier": "x y"}}}))
	"spec.topology.subsets[0].patch.metadata.labels[app]" in f
	"spec.topology.subsets[0].patch.metadata.labels[apps.kruise.io/subset-name]" in f
	"spec.topology.subsets[0].patch.metadata.labels[tier]" in f
	e := {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
	"spec.topology.subsets[0].patch.metadata.labels[app]" in fields(object.union(with_patch({"metadata": {"labels": {"app": "x"}}}), {"spec": {"selector": e}}))
}

test_patch_new_container if {
	"spec.topology.subsets[0].patch.spec.containers[0]" in fields(with_patch({"spec": {"containers": [{"name": "sidecar", "image": "x"}]}}))
}

# --- update rules ---------------------------------------------------------------------------

test_node_selector_term_immutable if {
	new := with_subsets([{"name": "ecs", "maxReplicas": 2, "nodeSelectorTerm": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["other"]}]}}, base_ud.spec.topology.subsets[1]])
	fields(update_review(base_ud, new)) == {"spec.topology.subsets[0].nodeSelectorTerm"}
}

test_empty_term_equals_missing_and_subsets_may_move if {
	old := with_subsets([{"name": "a", "nodeSelectorTerm": {}}, {"name": "b", "tolerations": []}])
	new := with_subsets([{"name": "c"}, {"name": "b"}, {"name": "a"}])
	count(violation) == 0 with input as update_review(old, new)
}

test_tolerations_immutable if {
	new := with_subsets([base_ud.spec.topology.subsets[0], {"name": "acs"}])
	fields(update_review(base_ud, new)) == {"spec.topology.subsets[1].tolerations"}
}

test_statefulset_spec_frozen_except_rollout_fields if {
	old := with_template("statefulSetTemplate", sts_template({"serviceName": "a"}))
	changed := with_template("statefulSetTemplate", sts_template({"serviceName": "b"}))
	fields(update_review(old, changed)) == {"spec.template.statefulSetTemplate.spec"}
	allowed := with_template("statefulSetTemplate", sts_template({"serviceName": "a", "minReadySeconds": 5}))
	count(violation) == 0 with input as update_review(old, allowed)
}

test_kind_switch_allowed if {
	old := with_template("statefulSetTemplate", sts_template({"serviceName": "a"}))
	count(violation) == 0 with input as update_review(old, base_ud)
}
