# scheduleStrategy and updateStrategy rules: the enums the CRD schema holds (for
# manifests checked without an API server), Kruise's C31/C32, and the values
# Kruise accepts without checking: zero or negative Adaptive durations, the
# field name the Adaptive settings had before Kruise renamed it, and partitions
# outside 0..replicas or on Deployment subsets (which have none).
package spreadgate.uniteddeployment

import data.spreadgate.validation as ws
import rego.v1

schedule_strategy := ws.map_field(topology, "scheduleStrategy")

schedule_type := ws.get_field(schedule_strategy, "type", "")

adaptive_settings := ws.map_field(schedule_strategy, "adaptive")

errors contains {"field": "spec.topology.scheduleStrategy.type", "msg": sprintf("Unsupported value: \"%v\": supported values: Adaptive, Fixed", [schedule_type])} if {
	not schedule_type in {"", "Fixed", "Adaptive"}
}

errors contains {"field": "spec.topology.scheduleStrategy.adaptive", "msg": "Invalid value: adaptive settings are only used when type is Adaptive"} if {
	count(adaptive_settings) > 0
	schedule_type != "Adaptive"
}

adaptive_durations := ["rescheduleCriticalSeconds", "unschedulableDuration"]

errors contains {"field": sprintf("spec.topology.scheduleStrategy.adaptive.%s", [f]), "msg": sprintf("Invalid value: %v: must be a whole number of seconds between 1 and 2147483647", [v])} if {
	some f in adaptive_durations
	v := adaptive_settings[f]
	v != null
	not int32_at_least(v, 1)
}

errors contains {"field": "spec.topology.scheduleStrategy.adaptive.unschedulableLastSeconds", "msg": "Invalid value: this field was renamed to unschedulableDuration; the API server drops the old name, so the 300 s default would apply"} if {
	adaptive_settings.unschedulableLastSeconds != null
}

errors contains {"field": "spec.topology.scheduleStrategy.adaptive.reserveUnschedulablePods", "msg": sprintf("Invalid value: %v: must be true or false", [v])} if {
	v := adaptive_settings.reserveUnschedulablePods
	not is_boolean(v)
}

# --- updateStrategy (C31, C32) -------------------------------------------------------------------

update_strategy := ws.map_field(spec, "updateStrategy")

update_type := ws.get_field(update_strategy, "type", "")

errors contains {"field": "spec.updateStrategy.type", "msg": sprintf("Unsupported value: \"%v\": supported values: \"\", Manual", [update_type])} if {
	not update_type in {"", "Manual"}
}

partitions := ws.map_field(ws.map_field(update_strategy, "manualUpdate"), "partitions")

subset_names := {n | some s in subsets; n := ws.get_field(s, "name", null); is_string(n)}

errors contains {"field": "spec.updateStrategy.manualUpdate.partitions", "msg": sprintf("Invalid value: subset %v does not exist", [name])} if {
	some name, _ in partitions
	not name in subset_names
}

errors contains {"field": sprintf("spec.updateStrategy.manualUpdate.partitions[%s]", [name]), "msg": sprintf("Invalid value: %v: must be a whole number between 0 and 2147483647", [p])} if {
	some name, p in partitions
	not int32_at_least(p, 0)
}

# A subset with a fixed count cannot keep more pods on the old revision than it has.
errors contains {"field": sprintf("spec.updateStrategy.manualUpdate.partitions[%s]", [name]), "msg": sprintf("Invalid value: %v: more than the %d replicas of subset %s", [p, value_of(s.replicas), name])} if {
	some name, p in partitions
	int32_at_least(p, 0)
	s := subset_by_name[name]
	has_value(s, "replicas")
	not value_problem(s.replicas)
	p > value_of(s.replicas)
}

errors contains {"field": sprintf("spec.updateStrategy.manualUpdate.partitions[%s]", [name]), "msg": sprintf("Invalid value: %v: Deployment subsets have no partition (they would be updated on every reconcile); use a StatefulSet, Advanced StatefulSet or CloneSet template", [p])} if {
	template_key == "deploymentTemplate"
	some name, p in partitions
	int32_at_least(p, 1)
}
