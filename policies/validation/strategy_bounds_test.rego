# Edges of the rescheduleCriticalSeconds rules (strategy.rego) that tools/rego_mutation.py found
# no test pinned. Run with `opa test policies/` or `pytest policies/`.
package spreadgate.validation

import rego.v1

reschedule_field := "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"

reschedule_messages(obj) := msgs if {
	msgs := [v.msg | some v in violation; v.details.field == reschedule_field] with input as obj
}

# null is unset, and 0 is a whole number >= 0.
test_null_and_zero_reschedule_seconds_accepted if {
	count(violation) == 0 with input as adaptive_spread(2, null)
	count(violation) == 0 with input as adaptive_spread(2, 0)
}

# A value that is not a whole number gets that error only, not also the upper-bound one.
test_a_malformed_reschedule_seconds_gets_one_error if {
	every bad in ["x", -1, 2.5] {
		msgs := reschedule_messages(adaptive_spread(2, bad))
		count(msgs) == 1
		contains(msgs[0], "must be a whole number >= 0")
	}
}

# An invalid recovery-window annotation is reported once and the bound keeps the default window.
test_an_invalid_recovery_window_keeps_the_default_bound if {
	obj := object.union(adaptive_spread(2, 295), {"metadata": {"annotations": {"spreadgate.dev/recovery-window-seconds": "5"}}})
	reported_fields == {"metadata.annotations[spreadgate.dev/recovery-window-seconds]"} with input as obj
}
