# maxReplicas rules (12-16). Like Kruise, checking stops at the first subset
# whose cap is wrong, so at most one maxReplicas error is reported; the
# "percentages must add up" rule runs only when every cap is well formed.
package spreadgate.validation

import rego.v1

max_int32 := 2147483647

capped_indices := [i | some i, s in subsets; get_field(s, "maxReplicas", null) != null]

cap_value(i) := subsets[i].maxReplicas

cap_type(v) := "integer" if is_number(v)

else := "percent" if is_string(v)

else := "other"

first_cap_type := cap_type(cap_value(capped_indices[0]))

target_is_statefulset if spec.targetRef.kind == "StatefulSet"

# Value of a well-formed percent cap ("30%" -> 30); undefined otherwise.
percent_of(v) := to_number(trim_suffix(v, "%")) if {
	is_string(v)
	regex.match(`^[0-9]+%$`, v)
}

# The first problem of the cap at index i, in Kruise's order of checks.
cap_problem(i) := "all maxReplicas must be of one type: integers, or percent strings like \"20%\"" if {
	cap_type(cap_value(i)) != first_cap_type
} else := "must be an integer for StatefulSet targets (subsets are filled by pod ordinal)" if {
	target_is_statefulset
	cap_type(cap_value(i)) != "integer"
} else := sprintf("%v is not a valid cap: use a whole number >= 0 or a percentage like \"20%%\"", [cap_value(i)]) if {
	not well_formed_cap(cap_value(i))
} else := sprintf("percentages add up to %v at this subset, more than 100%%", [percent_sum_through(i)]) if {
	percent_sum_through(i) > 100
}

well_formed_cap(v) if {
	is_number(v)
	v == floor(v)
	v >= 0
	v <= max_int32
}

well_formed_cap(v) if percent_of(v)

# percent_of is undefined for malformed strings, and "0%" is a valid cap too.
well_formed_cap(v) if {
	is_string(v)
	regex.match(`^[0-9]+%$`, v)
}

percent_sum_through(i) := sum([p | some j in capped_indices; j <= i; p := percent_of(cap_value(j))])

cap_problem_indices := [i | some i in capped_indices; cap_problem(i)]

errors contains {"field": sprintf("%s.maxReplicas", [subset_path(i)]), "msg": sprintf("Invalid value: %s", [cap_problem(i)])} if {
	i := cap_problem_indices[0]
}

# Percent caps that do not reach 100% leave some replicas with no subset,
# unless the last subset is unlimited and takes the rest.
errors contains {"field": "spec.subsets[0].maxReplicas", "msg": sprintf("Invalid value: percentages add up to %v%%, less than 100%%, while the last subset is capped; cap them to 100%% or leave the last subset unlimited", [total])} if {
	count(capped_indices) > 0
	count(cap_problem_indices) == 0
	first_cap_type == "percent"
	get_field(subsets[count(subsets) - 1], "maxReplicas", null) != null
	total := percent_sum_through(count(subsets))
	total < 100
}
