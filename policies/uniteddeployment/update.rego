# UPDATE rules (U2-U6): what must not change between the stored UnitedDeployment
# and the new one. The create rules apply to the new object as well.
package spreadgate.uniteddeployment

import data.spreadgate.validation as ws
import rego.v1

old_spec := ws.map_field(ws.get_field(review, "oldObject", {}), "spec")

old_template := ws.get_field(old_spec, "template", null)

old_subsets := ws.list_field(ws.map_field(old_spec, "topology"), "subsets")

# The stored subsets by name (the first of a duplicated name), so a kept subset is
# found by one lookup rather than by scanning every stored subset.
old_subset_by_name := {name: old_subsets[i] | some name, i in ws.first_index_by_name(old_subsets)}

is_update if {
	operation == "UPDATE"
	count(old_spec) > 0
}

# --- node selector terms and tolerations of a kept subset (U5, U6) ------------------------

# nil and empty compare equal, as in Kruise's semantic deep-equal.
normalised_term(s) := {"matchExpressions": ws.list_field(term, "matchExpressions"), "matchFields": ws.list_field(term, "matchFields")} if {
	term := ws.map_field(s, "nodeSelectorTerm")
}

errors contains {"field": sprintf("%s.nodeSelectorTerm", [subset_path(i)]), "msg": "Forbidden: may not be changed in an update"} if {
	is_update
	some i, s in subsets
	ws.non_empty_string(ws.get_field(s, "name", ""))
	old := old_subset_by_name[s.name]
	normalised_term(old) != normalised_term(s)
}

errors contains {"field": sprintf("%s.tolerations", [subset_path(i)]), "msg": "Forbidden: may not be changed in an update"} if {
	is_update
	some i, s in subsets
	ws.non_empty_string(ws.get_field(s, "name", ""))
	old := old_subset_by_name[s.name]
	ws.list_field(old, "tolerations") != ws.list_field(s, "tolerations")
}

# --- StatefulSet templates: only the pod template and rollout fields may change (U2, U3) ---

updatable_fields := {
	"statefulSetTemplate": ["template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds", "ordinals", "replicas", "selector"],
	"advancedStatefulSetTemplate": ["template", "updateStrategy", "replicas", "selector"],
}

# The template spec without the fields that may change, with Kubernetes' default filled in.
frozen_part(workload_spec, key) := object.union(
	{"podManagementPolicy": "OrderedReady"},
	object.remove(workload_spec, updatable_fields[key]),
)

errors contains {"field": sprintf("spec.template.%s.spec", [template_key]), "msg": sprintf("Forbidden: updates to %s spec for fields other than %s are forbidden", [template_key, concat(", ", updatable_fields[template_key])])} if {
	is_update
	updatable_fields[template_key]
	old_workload_spec := ws.map_field(ws.get_field(old_template, template_key, {}), "spec")
	count(old_workload_spec) > 0
	frozen_part(old_workload_spec, template_key) != frozen_part(template_spec, template_key)
}
