# Unit tests of the subset patch allowlist (patch.rego): what a patch may set,
# what it may not, reserved and selector labels, directives, widening.
# Run with `opa test policies/` or `pytest policies/` (regorus).
package spreadgate.validation

import rego.v1

one_patch(p) := with_subsets([{"name": "a", "patch": p}])

web_workload := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "default"},
	"spec": {
		"selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]},
		"template": {"spec": {"containers": [{"name": "main", "image": "nginx"}], "initContainers": [{"name": "setup", "image": "busybox"}]}},
	},
}

# The spread reviewed with the target workload and extra allowed fields in the context.
in_context(obj, workload, extra) := {"review": {"object": obj}, "context": {"workload": workload, "allowedPatchFields": extra}}

patch_fields(p) := fields if {
	fields := reported_fields with input as one_patch(p)
}

# --- allowed --------------------------------------------------------------------------------

allowed_patch := {
	"metadata": {"labels": {"subset": "a", "example.com/pool": "spot"}, "annotations": {"example.com/note": "x"}},
	"spec": {
		"containers": [{
			"name": "main",
			"resources": {"limits": {"cpu": "1"}},
			"env": [{"name": "ZONE", "value": "a"}],
		}],
		"initContainers": [{"name": "setup", "env": [{"name": "ZONE", "value": "a"}]}],
		"priorityClassName": "low",
		"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}],
		"schedulerName": "bin-packing",
	},
}

# Out of the default allowlist since issue 24 (each lends a workload editor's power), re-allowed one by one.
narrowed_patch := {"spec": {
	"containers": [{
		"name": "main", "image": "nginx:1.28",
		"env": [{"name": "ZONE", "value": "a"}, {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
		"envFrom": [{"configMapRef": {"name": "zone-a"}}],
	}],
	"initContainers": [{"name": "setup", "image": "busybox:2"}],
	"runtimeClassName": "gvisor",
	"dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
}}

narrowed_entries := [
	"spec.containers[].image", "spec.containers[].env[].valueFrom", "spec.containers[].envFrom",
	"spec.initContainers[].image", "spec.runtimeClassName", "spec.dnsConfig",
]

test_narrowed_fields_refused_by_default_and_re_allowed_one_by_one if {
	p := "spec.subsets[0].patch."
	patch_fields(narrowed_patch) == {
		concat("", [p, "spec.containers[0].image"]), concat("", [p, "spec.containers[0].env[1].valueFrom"]),
		concat("", [p, "spec.containers[0].envFrom"]), concat("", [p, "spec.initContainers[0].image"]),
		concat("", [p, "spec.runtimeClassName"]), concat("", [p, "spec.dnsConfig"]),
	}
	count(violation) == 0 with input as in_context(one_patch(narrowed_patch), web_workload, narrowed_entries)
	every entry in narrowed_entries {
		count(violation) == 5 with input as in_context(one_patch(narrowed_patch), web_workload, [entry])
	}
}

test_mesh_and_secret_injector_keys_reserved if {
	every key in ["sidecar.istio.io/inject", "linkerd.io/inject", "vault.hashicorp.com/role", "x.kuma.io/y"] {
		concat("", ["spec.subsets[0].patch.metadata.annotations[", key, "]"]) in patch_fields({"metadata": {"annotations": {key: "false"}}})
	}
	count(violation) == 0 with input as one_patch({"metadata": {"annotations": {"notistio.io/x": "y"}}})
}

test_allowed_patch_accepted_with_and_without_workload if {
	count(violation) == 0 with input as one_patch(allowed_patch)
	count(violation) == 0 with input as in_context(one_patch(allowed_patch), web_workload, [])
	count(patch_violation) == 0 with input as in_context(one_patch(allowed_patch), web_workload, [])
}

test_deleting_an_ordinary_label_is_allowed if {
	count(violation) == 0 with input as one_patch({"metadata": {"labels": {"subset": null}}})
}

# --- forbidden fields, each reported at its path ----------------------------------------------

test_forbidden_fields_refused_with_their_path if {
	p := "spec.subsets[0].patch."
	cases := [
		[{"metadata": {"name": "other"}}, "metadata.name"],
		[{"metadata": {"namespace": "kube-system"}}, "metadata.namespace"],
		[{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u", "controller": true}]}}, "metadata.ownerReferences"],
		[{"metadata": {"finalizers": ["x"]}}, "metadata.finalizers"],
		[{"spec": {"serviceAccountName": "admin"}}, "spec.serviceAccountName"],
		[{"spec": {"automountServiceAccountToken": true}}, "spec.automountServiceAccountToken"],
		[{"spec": {"hostNetwork": true}}, "spec.hostNetwork"],
		[{"spec": {"hostPID": true}}, "spec.hostPID"],
		[{"spec": {"hostIPC": true}}, "spec.hostIPC"],
		[{"spec": {"nodeName": "node-1"}}, "spec.nodeName"],
		[{"spec": {"nodeSelector": {"kubernetes.io/hostname": "n"}}}, "spec.nodeSelector"],
		[{"spec": {"tolerations": [{"operator": "Exists"}]}}, "spec.tolerations"],
		[{"spec": {"affinity": {"nodeAffinity": null}}}, "spec.affinity"],
		[{"spec": {"securityContext": {"runAsUser": 0}}}, "spec.securityContext"],
		[{"spec": {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}}, "spec.volumes"],
		[{"spec": {"containers": [{"name": "main", "securityContext": {"privileged": true}}]}}, "spec.containers[0].securityContext"],
		[{"spec": {"containers": [{"name": "main", "volumeMounts": [{"name": "root", "mountPath": "/host"}]}]}}, "spec.containers[0].volumeMounts"],
		[{"spec": {"initContainers": [{"name": "setup", "command": ["sh"]}]}}, "spec.initContainers[0].command"],
		[{"spec": {"ephemeralContainers": [{"name": "debug"}]}}, "spec.ephemeralContainers"],
		[{"spec": {"containers": {"name": "main"}}}, "spec.containers"],
		[{"spec": {"containers": ["main"]}}, "spec.containers[0]"],
		[{"spec": "replace"}, "spec"],
		[{"metadata": null}, "metadata"],
		[{"status": {"phase": "Running"}}, "status"],
	]
	every c in cases {
		concat("", [p, c[1]]) in patch_fields(c[0])
	}
}

test_refusal_message_names_the_allowlist_path_and_how_to_widen if {
	some v in violation with input as one_patch({"spec": {"containers": [{"name": "main", "securityContext": {"privileged": true}}]}})
	startswith(v.msg, "spec.subsets[0].patch.spec.containers[0].securityContext: Forbidden: spec.containers[].securityContext is not on the subset patch allowlist")
	contains(v.msg, "--allow-patch-field")
	contains(v.msg, "allowedPatchFields")
}

test_labels_and_annotations_must_be_maps if {
	"spec.subsets[0].patch.metadata.labels" in patch_fields({"metadata": {"labels": null}})
	"spec.subsets[0].patch.metadata.annotations" in patch_fields({"metadata": {"annotations": "x"}})
}

# --- strategic-merge directives -----------------------------------------------------------------

test_directives_refused_wherever_they_are if {
	p := "spec.subsets[0].patch."
	cases := [
		[{"$patch": "replace", "metadata": {"labels": {"a": "b"}}}, "$patch"],
		[{"spec": {"$retainKeys": ["containers"]}}, "spec.$retainKeys"],
		[{"spec": {"$setElementOrder/containers": [{"name": "main"}]}}, "spec.$setElementOrder/containers"],
		[{"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, "metadata.$deleteFromPrimitiveList/finalizers"],
		[{"spec": {"containers": [{"name": "main", "$patch": "replace", "image": "x"}]}}, "spec.containers[0].$patch"],
		[{"spec": {"containers": [{"name": "main", "env": [{"name": "A", "$patch": "delete"}]}]}}, "spec.containers[0].env[0].$patch"],
	]
	every c in cases {
		concat("", [p, c[1]]) in patch_fields(c[0])
	}
}

test_directive_is_reported_once if {
	fields := patch_fields({"spec": {"$retainKeys": ["containers"]}})
	count(fields) == 1
}

# --- reserved keys -------------------------------------------------------------------------------

test_reserved_label_and_annotation_keys_refused if {
	cases := [
		["annotations", "spreadgate.dev/matched-workloadspread"],
		["annotations", "apps.kruise.io/matched-workloadspread"],
		["annotations", "controller.kubernetes.io/pod-deletion-cost"],
		["annotations", "sim.spreadgate.dev/run-seconds"],
		["annotations", "container.apparmor.security.beta.kubernetes.io/main"],
		["annotations", "seccomp.security.alpha.kubernetes.io/pod"],
		["labels", "pod-template-hash"],
		["labels", "batch.kubernetes.io/job-name"],
		["labels", "spreadgate.dev/subset"],
	]
	every c in cases {
		sprintf("spec.subsets[0].patch.metadata.%s[%s]", [c[0], c[1]]) in patch_fields({"metadata": {c[0]: {c[1]: "1"}}})
	}
}

test_ordinary_prefixed_keys_allowed if {
	count(violation) == 0 with input as one_patch({"metadata": {"annotations": {"example.com/spreadgate.dev": "x", "notspreadgate.dev/x": "y"}}})
}

# --- selector labels -------------------------------------------------------------------------------

test_selector_labels_refused_when_the_workload_is_known if {
	bad := one_patch({"metadata": {"labels": {"app": "other", "tier": "back", "zone": "a"}}})
	fields := reported_fields with input as in_context(bad, web_workload, [])
	"spec.subsets[0].patch.metadata.labels[app]" in fields
	"spec.subsets[0].patch.metadata.labels[tier]" in fields
	not "spec.subsets[0].patch.metadata.labels[zone]" in fields

	# unknown workload (conftest on a bare file): not checked here, the mutating webhook checks it
	count(violation) == 0 with input as bad
}

test_selector_label_that_is_also_reserved_reported_once if {
	workload := json.patch(web_workload, [{"op": "add", "path": "/spec/selector/matchLabels/pod-template-hash", "value": "x"}])
	msgs := {v.msg | some v in violation} with input as in_context(one_patch({"metadata": {"labels": {"pod-template-hash": "y"}}}), workload, [])
	count(msgs) == 1
}

test_target_filter_labels_refused if {
	obj := object.union(one_patch({"metadata": {"labels": {"role": "x", "track": "y"}}}), {"spec": {"targetFilter": {"selector": {
		"matchLabels": {"role": "worker"},
		"matchExpressions": [{"key": "track", "operator": "Exists"}],
	}}}})
	fields := reported_fields with input as obj
	"spec.subsets[0].patch.metadata.labels[role]" in fields
	"spec.subsets[0].patch.metadata.labels[track]" in fields
}

test_workload_found_in_gatekeeper_inventory if {
	inventory := {"namespace": {"default": {"apps/v1": {"Deployment": {"web": web_workload}}}}}
	fields := reported_fields with input as {"review": {"object": one_patch({"metadata": {"labels": {"app": "x"}}})}} with data.inventory as inventory
	"spec.subsets[0].patch.metadata.labels[app]" in fields
}

# --- containers the template does not have -------------------------------------------------------------

test_new_containers_refused_when_the_template_is_known if {
	p := {"spec": {"containers": [{"name": "sidecar", "resources": {}}], "initContainers": [{"name": "main", "resources": {}}]}}
	fields := reported_fields with input as in_context(one_patch(p), web_workload, [])
	"spec.subsets[0].patch.spec.containers[0]" in fields
	"spec.subsets[0].patch.spec.initContainers[0]" in fields

	# template unknown: names cannot be checked here
	count(violation) == 0 with input as one_patch(p)

	# a custom workload without spec.template: not checked either
	custom := {"spec": {"selector": {"matchLabels": {"app": "gs"}}}}
	count(violation) == 0 with input as in_context(one_patch(p), custom, [])
}

# --- widening -------------------------------------------------------------------------------------------

test_operators_widen_the_allowlist if {
	node_selector := one_patch({"spec": {"nodeSelector": {"disk": "ssd"}}})
	"spec.subsets[0].patch.spec.nodeSelector" in reported_fields with input as node_selector
	count(violation) == 0 with input as in_context(node_selector, web_workload, ["spec.nodeSelector"])
	count(violation) == 0 with input as {"review": {"object": node_selector}, "parameters": {"allowedPatchFields": ["spec.nodeSelector"]}}

	# an entry covers what is below it, not a field that merely starts with the same letters
	count(violation) == 0 with input as in_context(node_selector, web_workload, ["spec"])
	"spec.subsets[0].patch.spec.nodeSelector" in reported_fields with input as in_context(node_selector, web_workload, ["spec.node", 7])
}

test_widening_containers if {
	p := one_patch({"spec": {"containers": [
		{"name": "main", "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]},
		{"name": "sidecar", "image": "envoy"},
	]}})
	only_mounts := reported_fields with input as in_context(p, web_workload, ["spec.containers[].volumeMounts"])
	only_mounts == {"spec.subsets[0].patch.spec.containers[1]"}
	count(violation) == 0 with input as in_context(p, web_workload, ["spec.containers[].volumeMounts", "spec.containers[]"])
	count(violation) == 0 with input as in_context(p, web_workload, ["spec.containers"])
}

test_widening_never_allows_directives_or_reserved_keys if {
	p := one_patch({"$patch": "replace", "metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "9"}}})
	fields := reported_fields with input as in_context(p, web_workload, ["metadata", "spec", "$patch"])
	fields == {"spec.subsets[0].patch.$patch", "spec.subsets[0].patch.metadata.annotations[controller.kubernetes.io/pod-deletion-cost]"}
}

# --- patch_violation: the mutating webhook's rule ---------------------------------------------------------

test_patch_violation_carries_the_subset_index if {
	obj := with_subsets([{"name": "a", "patch": {"metadata": {"labels": {"x": "y"}}}}, {"name": "b", "patch": {"spec": {"hostPID": true}}}])
	subsets_hit := {v.details.subset | some v in patch_violation} with input as obj
	subsets_hit == {1}
	some v in patch_violation with input as obj
	v.details.field == "spec.subsets[1].patch.spec.hostPID"
}

test_patch_violation_ignores_other_rules_and_kinds if {
	# an invalid cap is not a patch problem
	count(patch_violation) == 0 with input as with_subsets([{"name": "a", "maxReplicas": "x", "patch": {"metadata": {"labels": {"x": "y"}}}}])
	count(patch_violation) == 0 with input as {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"subsets": [{"name": "a", "patch": {"spec": {"hostPID": true}}}]}}
}

test_hostile_patches_do_not_raise if {
	hostile := [
		with_spec({"subsets": "x"}),
		with_subsets([7, {"name": "a", "patch": [1]}, {"name": "b", "patch": {"metadata": [1], "spec": {"containers": [{"name": 5}, {}, null]}}}]),
		with_subsets([{"name": "a", "patch": {"metadata": {"labels": {"a": {"b": 1}}}, "spec": {"containers": [{"name": "main", "env": "x"}]}}}]),
	]
	every obj in hostile {
		is_set(patch_violation) with input as in_context(obj, {"spec": {"selector": 5, "template": {"spec": {"containers": 3}}}}, "x")
	}
}

# --- ratcheting on UPDATE --------------------------------------------------------------------------------

test_unchanged_stored_patch_does_not_block_an_update if {
	stored := with_subsets([{"name": "a", "maxReplicas": 3, "patch": {"spec": {"hostPID": true}}}, {"name": "b"}])
	edited := with_subsets([{"name": "a", "maxReplicas": 5, "patch": {"spec": {"hostPID": true}}}, {"name": "b"}])
	count(violation) == 0 with input as {"review": {"operation": "UPDATE", "object": edited, "oldObject": stored}}

	# ... but a CREATE, a changed patch, or the patch moved to another subset is checked
	"spec.subsets[0].patch.spec.hostPID" in reported_fields with input as {"review": {"operation": "CREATE", "object": edited}}
	changed := with_subsets([{"name": "a", "patch": {"spec": {"hostPID": true, "hostIPC": true}}}, {"name": "b"}])
	fields := reported_fields with input as {"review": {"operation": "UPDATE", "object": changed, "oldObject": stored}}
	fields == {"spec.subsets[0].patch.spec.hostPID", "spec.subsets[0].patch.spec.hostIPC"}
	moved := with_subsets([{"name": "a"}, {"name": "b", "patch": {"spec": {"hostPID": true}}}])
	"spec.subsets[1].patch.spec.hostPID" in reported_fields with input as {"review": {"operation": "UPDATE", "object": moved, "oldObject": stored}}

	# the mutating webhook's rule never ratchets
	count(patch_violation) == 1 with input as {"review": {"operation": "UPDATE", "object": edited, "oldObject": stored}}
}

# --- the public functions the UnitedDeployment policy calls ----------------------------------

test_public_patch_functions if {
	touched_paths({"spec": {"hostPID": true, "containers": [{"name": "main", "image": "x"}]}}) == {
		{"at": "spec.hostPID", "key": "spec.hostPID"},
		{"at": "spec.containers[0].image", "key": "spec.containers[].image"},
	}
	touched_paths({"$patch": "replace", "metadata": {"labels": {"a": "b"}}}) == set()
	is_directive("$setElementOrder/containers")
	not is_directive("image")
	not is_directive(1)
	render_path(["spec", "containers", 0, "$patch"]) == "spec.containers[0].$patch"
	render_path(["$retainKeys"]) == "$retainKeys"
}

# The fields a UnitedDeployment patch keeps (its author must be allowed the workload kind) are the
# ones a WorkloadSpread patch lost.
test_workload_author_fields_are_the_narrowed_ones if {
	count(workload_author_patch_fields) == 8
	every f in workload_author_patch_fields {
		not patch_field_allowed(f)
	}
}
