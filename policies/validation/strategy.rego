# scheduleStrategy rules (17-20). Spreadgate lets a spread choose its
# unschedulable-recovery window (annotation spreadgate.dev/recovery-window-seconds,
# default 300 s as in Kruise); the bound on rescheduleCriticalSeconds follows it,
# so every subset except the last can be tried within one window.
package spreadgate.validation

import rego.v1

default_recovery_window_seconds := 300

strategy := get_field(spec, "scheduleStrategy", {})

strategy_type := get_field(strategy, "type", "")

adaptive := get_field(strategy, "adaptive", null)

errors contains {"field": "spec.scheduleStrategy.type", "msg": sprintf("Unsupported value: \"%v\": supported values: Adaptive, Fixed", [strategy_type])} if {
	not strategy_type in {"", "Fixed", "Adaptive"}
}

errors contains {"field": "spec.scheduleStrategy.type", "msg": "Invalid value: adaptive may only be set when type is Adaptive"} if {
	adaptive != null
	strategy_type != "Adaptive"
}

errors contains {"field": "spec.scheduleStrategy.adaptive", "msg": "Invalid value: with Adaptive scheduling the last subset must have no maxReplicas, so every pod has somewhere to go"} if {
	adaptive != null
	count(subsets) >= 2
	get_field(subsets[count(subsets) - 1], "maxReplicas", null) != null
}

recovery_window := to_number(annotations["spreadgate.dev/recovery-window-seconds"]) if {
	valid_recovery_window(annotations["spreadgate.dev/recovery-window-seconds"])
} else := default_recovery_window_seconds

reschedule_seconds := adaptive.rescheduleCriticalSeconds if is_object(adaptive)

reschedule_upper_bound := floor((recovery_window - 5) / (count(subsets) - 1)) if count(subsets) >= 2

errors contains {"field": "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", "msg": sprintf("Invalid value: %v must be a whole number >= 0", [reschedule_seconds])} if {
	reschedule_seconds != null
	not _whole_non_negative(reschedule_seconds)
}

errors contains {"field": "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", "msg": sprintf("Invalid value: %v is more than %v, the most that lets %d subsets each be tried within the %v s recovery window", [reschedule_seconds, reschedule_upper_bound, count(subsets), recovery_window])} if {
	_whole_non_negative(reschedule_seconds)
	reschedule_seconds > reschedule_upper_bound
}

_whole_non_negative(n) if {
	is_number(n)
	n == floor(n)
	n >= 0
}
