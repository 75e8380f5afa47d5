# WorkloadSpread validation: the spec rules of OpenKruise's WorkloadSpread
# webhook, as policy-as-code. One rule set serves three callers:
#   * the Spreadgate webhook and `spreadgate validate` (input: a Gatekeeper-style
#     review, plus `input.context` with the namespace's other spreads and the target);
#   * Gatekeeper (input.review.object, input.parameters; referential data from
#     data.inventory when it is synced);
#   * conftest (input: the manifest itself).
# Every violation names the offending field path in its message and in
# details.field, using v1alpha1 field names.
package spreadgate.validation

import rego.v1

# The object under review, whichever caller supplied it.
review := input.review if {
	input.review.object
} else := {"object": input, "operation": "CREATE"}

spread := review.object

operation := get_field(review, "operation", "CREATE")

spread_groups := {"spreadgate.dev", "apps.kruise.io"}

# Only WorkloadSpreads of Spreadgate's group or Kruise's are checked; conftest
# may hand us any manifest of a multi-document file.
is_workloadspread if {
	spread.kind == "WorkloadSpread"
	api_group(get_field(spread, "apiVersion", "")) in spread_groups
}

spec := map_field(spread, "spec")

namespace := get_field(map_field(spread, "metadata"), "namespace", get_field(review, "namespace", ""))

spread_name := get_field(map_field(spread, "metadata"), "name", "")

violation contains {"msg": sprintf("%s: %s", [e.field, e.msg]), "details": {"field": e.field, "reason": e.msg}} if {
	is_workloadspread
	some e in errors
}

# --- spec must be an object ---------------------------------------------------

errors contains {"field": "spec", "msg": "Required value: spec must be an object"} if {
	not is_object(get_field(spread, "spec", null))
}

# --- targetRef (rules 1-4, same namespace, immutability, one spread per workload)

target_ref := spec.targetRef

errors contains {"field": "spec.targetRef", "msg": "Required value: targetRef is required"} if {
	is_object(spec)
	not is_object(spec.targetRef)
}

target_fields := ["apiVersion", "kind", "name"]

errors contains {"field": "spec.targetRef", "msg": sprintf("Invalid value: targetRef.%s must be a non-empty string", [f])} if {
	is_object(target_ref)
	some f in target_fields
	not non_empty_string(get_field(target_ref, f, ""))
}

# Built-in kinds and the API groups they may come from.
builtin_kind_groups := {
	"Deployment": {"apps"},
	"ReplicaSet": {"apps"},
	"StatefulSet": {"apps", "apps.kruise.io"},
	"Job": {"batch"},
	"CloneSet": {"apps.kruise.io"},
}

errors contains {"field": "spec.targetRef", "msg": sprintf("Invalid value: apiVersion \"%v\" cannot be parsed as group/version", [target_ref.apiVersion])} if {
	non_empty_string(target_ref.apiVersion)
	not valid_api_version(target_ref.apiVersion)
}

errors contains {"field": "spec.targetRef", "msg": sprintf("Invalid value: %s must have API group %s, not \"%v\"", [target_ref.kind, concat(" or ", sort(builtin_kind_groups[target_ref.kind])), api_group(target_ref.apiVersion)])} if {
	valid_api_version(target_ref.apiVersion)
	groups := builtin_kind_groups[target_ref.kind]
	not api_group(target_ref.apiVersion) in groups
}

errors contains {"field": "spec.targetRef", "msg": sprintf("Invalid value: GroupKind %s.%s is not permitted (not a built-in workload and not in the custom workload list)", [target_ref.kind, api_group(target_ref.apiVersion)])} if {
	valid_api_version(target_ref.apiVersion)
	non_empty_string(target_ref.kind)
	not builtin_kind_groups[target_ref.kind]
	not custom_workload_allowed(api_group(target_ref.apiVersion), target_ref.kind)
}

# Custom workload kinds, from the caller (webhook flag / Gatekeeper parameter).
custom_workloads contains w if {
	some w in list_field(get_field(input, "parameters", {}), "customWorkloads")
}

custom_workloads contains w if {
	some w in list_field(get_field(input, "context", {}), "customWorkloads")
}

custom_workload_allowed(group, kind) if {
	some w in custom_workloads
	get_field(w, "group", "") == group
	w.kind == kind
}

# A spread may only target a workload in its own namespace. Kruise's targetRef
# has no namespace field; one that names another namespace is refused outright.
errors contains {"field": "spec.targetRef.namespace", "msg": sprintf("Forbidden: a WorkloadSpread may only target a workload in its own namespace \"%v\", not \"%v\"", [namespace, target_ref.namespace])} if {
	is_string(target_ref.namespace)
	target_ref.namespace != ""
	target_ref.namespace != namespace
}

# UPDATE: the target's group, kind and name are immutable (the version may change).
errors contains {"field": "spec.targetRef", "msg": "Invalid value: targetRef group, kind and name are immutable; only the version may change"} if {
	operation == "UPDATE"
	old_ref := review.oldObject.spec.targetRef
	is_object(target_ref)
	target_identity(old_ref) != target_identity(target_ref)
}

target_identity(ref) := [api_group(get_field(ref, "apiVersion", "")), get_field(ref, "kind", ""), get_field(ref, "name", "")]

# Another spread in the namespace already targets this workload.
other_spreads contains other if {
	some other in list_field(get_field(input, "context", {}), "workloadSpreads")
}

other_spreads contains other if {
	some other in data.inventory.namespace[namespace][_].WorkloadSpread
}

errors contains {"field": "spec.targetRef", "msg": sprintf("Invalid value: workload %s/%s is already targeted by WorkloadSpread \"%v\"; a workload may have only one", [target_ref.kind, target_ref.name, other.metadata.name])} if {
	is_object(target_ref)
	some other in other_spreads
	other.metadata.name != spread_name
	get_field(other.metadata, "namespace", namespace) == namespace
	target_identity(other.spec.targetRef) == target_identity(target_ref)
}

# --- targetFilter (rule 21) ---------------------------------------------------

errors contains {"field": "spec.targetFilter", "msg": sprintf("Invalid value: %s", [m])} if {
	some m in label_selector_problems(spec.targetFilter.selector)
}

errors contains {"field": "spec.targetFilter.replicasPathList", "msg": sprintf("Invalid value: entry %d must be a non-empty dot path", [i])} if {
	some i, p in spec.targetFilter.replicasPathList
	not non_empty_string(p)
}

# --- Spreadgate annotations ---------------------------------------------------

annotations := map_field(get_field(spread, "metadata", {}), "annotations")

errors contains {"field": "metadata.annotations[spreadgate.dev/in-subset-spread]", "msg": sprintf("Invalid value: \"%v\" must be \"true\" or \"false\"", [v])} if {
	v := annotations["spreadgate.dev/in-subset-spread"]
	not lower(v) in {"true", "false"}
}

errors contains {"field": "metadata.annotations[spreadgate.dev/recovery-window-seconds]", "msg": sprintf("Invalid value: \"%v\" must be a whole number of seconds between 10 and 86400", [v])} if {
	v := annotations["spreadgate.dev/recovery-window-seconds"]
	not valid_recovery_window(v)
}
