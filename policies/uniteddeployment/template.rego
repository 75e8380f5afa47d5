# spec.template rules (C6, C8-C16): exactly one workload template, labels that
# the selector matches, no fields the UnitedDeployment overrides, and the parts
# of the workload and pod spec checks that can be made without the workload's
# defaults. Unlike Kruise, CloneSet templates get the same checks as the other
# kinds, and an Advanced StatefulSet label mismatch is reported at its own path.
package spreadgate.uniteddeployment

import data.spreadgate.validation as ws
import rego.v1

template_keys := ["statefulSetTemplate", "advancedStatefulSetTemplate", "cloneSetTemplate", "deploymentTemplate"]

stateful_keys := {"statefulSetTemplate", "advancedStatefulSetTemplate"}

template := ws.get_field(spec, "template", null)

present_templates := [k | some k in template_keys; ws.get_field(template, k, null) != null]

errors contains {"field": "spec.template", "msg": "Required value: should provide one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate or deploymentTemplate"} if {
	is_object(spec)
	count(present_templates) == 0
}

errors contains {"field": "spec.template", "msg": sprintf("Invalid value: should provide only one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate or deploymentTemplate, not %s", [concat(" and ", present_templates)])} if {
	count(present_templates) > 1
}

# The single template in use, with its key; undefined when there is not exactly one.
template_key := present_templates[0] if count(present_templates) == 1

workload_template := template[template_key]

template_path := sprintf("spec.template.%s", [template_key])

errors contains {"field": template_path, "msg": "Invalid value: must be an object with metadata and spec"} if {
	not is_object(workload_template)
}

template_spec := ws.map_field(workload_template, "spec")

pod_template := ws.map_field(template_spec, "template")

pod_spec := ws.map_field(pod_template, "spec")

# --- reservation mode needs a stateless workload (C6) ------------------------------

errors contains {"field": "spec.topology.scheduleStrategy", "msg": "Invalid value: only stateless workloads (Deployment and CloneSet) are supported by reserved rescheduling"} if {
	schedule_type == "Adaptive"
	adaptive_settings.reserveUnschedulablePods == true
	template_key in stateful_keys
}

# --- labels the selector must match (C9, C10, C13-C15) ---------------------------------

errors contains {"field": sprintf("%s.metadata.labels", [template_path]), "msg": "Invalid value: `selector` does not match template `labels`"} if {
	usable_selector
	not selector_matches(ws.map_field(ws.map_field(workload_template, "metadata"), "labels"))
}

errors contains {"field": sprintf("%s.spec.template.metadata.labels", [template_path]), "msg": "Invalid value: `selector` does not match template `labels`"} if {
	usable_selector
	not selector_matches(ws.map_field(ws.map_field(pod_template, "metadata"), "labels"))
}

# --- fields the UnitedDeployment sets itself (C11, C12) ----------------------------------

errors contains {"field": sprintf("%s.spec.replicas", [template_path]), "msg": sprintf("Invalid value: replicas in %s will not be used (the UnitedDeployment sets each subset's replicas)", [template_key])} if {
	template_spec.replicas != null
}

errors contains {"field": sprintf("%s.spec.updateStrategy.rollingUpdate.partition", [template_path]), "msg": sprintf("Invalid value: partition in %s will not be used (spec.updateStrategy.manualUpdate.partitions sets it)", [template_key])} if {
	template_key in stateful_keys
	strategy := ws.map_field(template_spec, "updateStrategy")
	ws.get_field(strategy, "type", "") == "RollingUpdate"
	ws.map_field(strategy, "rollingUpdate").partition != null
}

errors contains {"field": sprintf("%s.spec.updateStrategy.partition", [template_path]), "msg": "Invalid value: partition in cloneSetTemplate will not be used (spec.updateStrategy.manualUpdate.partitions sets it)"} if {
	template_key == "cloneSetTemplate"
	ws.map_field(template_spec, "updateStrategy").partition != null
}

# --- workload spec (C13) --------------------------------------------------------------------

errors contains {"field": sprintf("%s.spec.podManagementPolicy", [template_path]), "msg": sprintf("Unsupported value: \"%v\": supported values: OrderedReady, Parallel", [policy])} if {
	template_key in stateful_keys
	policy := template_spec.podManagementPolicy
	not policy in {"", "OrderedReady", "Parallel"}
}

errors contains {"field": sprintf("%s.spec.updateStrategy.type", [template_path]), "msg": sprintf("Unsupported value: \"%v\": supported values: %s", [kind, concat(", ", sort(allowed))])} if {
	allowed := workload_update_types[template_key]
	kind := ws.map_field(template_spec, "updateStrategy").type
	kind != ""
	not kind in allowed
}

workload_update_types := {
	"statefulSetTemplate": {"RollingUpdate", "OnDelete"},
	"advancedStatefulSetTemplate": {"RollingUpdate", "OnDelete"},
	"cloneSetTemplate": {"ReCreate", "InPlaceIfPossible", "InPlaceOnly"},
	"deploymentTemplate": {"RollingUpdate", "Recreate"},
}

# --- pod template (C13-C15; Kubernetes' rules the API server would apply to the workload) ---

pod_path := sprintf("%s.spec.template.spec", [template_path])

errors contains {"field": sprintf("%s.restartPolicy", [pod_path]), "msg": sprintf("Unsupported value: \"%v\": supported values: Always", [policy])} if {
	policy := pod_spec.restartPolicy
	not policy in {"", "Always"}
}

errors contains {"field": sprintf("%s.activeDeadlineSeconds", [pod_path]), "msg": "Forbidden: activeDeadlineSeconds in a workload's pod template is not supported"} if {
	pod_spec.activeDeadlineSeconds != null
}

containers := ws.list_field(pod_spec, "containers")

errors contains {"field": sprintf("%s.containers", [pod_path]), "msg": "Required value: at least one container is required"} if {
	template_key
	count(containers) == 0
}

errors contains {"field": sprintf("%s.containers[%d].name", [pod_path, i]), "msg": sprintf("Invalid value: \"%v\": a container name must be a lowercase RFC 1123 label", [ws.get_field(c, "name", "")])} if {
	some i, c in containers
	not dns_label(ws.get_field(c, "name", ""))
}

errors contains {"field": sprintf("%s.containers[%d].name", [pod_path, j]), "msg": sprintf("Duplicate value: \"%v\"", [containers[j].name])} if {
	some i, j
	containers[i].name == containers[j].name
	i < j
}

errors contains {"field": sprintf("%s.containers[%d].image", [pod_path, i]), "msg": "Required value: a container needs an image"} if {
	some i, c in containers
	not ws.non_empty_string(ws.get_field(c, "image", ""))
}

# A lowercase RFC 1123 label (subset and container names).
dns_label(name) if {
	is_string(name)
	count(name) <= 63
	regex.match(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, name)
}
