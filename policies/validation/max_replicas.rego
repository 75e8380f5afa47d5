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
	i >= percent_overflow_index
}

# Whether the cap at index i has a problem: cap_problem's conditions without its
# message, so finding the first problem costs constant work per subset.
has_cap_problem(i) if cap_type(cap_value(i)) != first_cap_type

has_cap_problem(i) if {
	target_is_statefulset
	cap_type(cap_value(i)) != "integer"
}

has_cap_problem(i) if not well_formed_cap(cap_value(i))

has_cap_problem(i) if i >= percent_overflow_index

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

# [index, percent] of every well-formed percent cap, in subset order.
percent_caps := [[i, p] | some i in capped_indices; p := percent_of(cap_value(i))]

# The running sum of percent caps through subset i. Linear; evaluated for one subset
# only (the first with a problem) and for the total.
percent_sum_through(i) := sum([e[1] | some e in percent_caps; e[0] <= i])

# The first subset at which the running sum of percent caps passes 100, undefined if it
# never does. Each positive percent adds at least 1, so the sum passes 100 by the 101st
# positive one at the latest: only the first 101 are summed, each prefix natively
# (array.slice and sum), so the work is bounded whatever the number of subsets.
percent_overflow_index := min({head[k][0] |
	some k, _ in head
	sum(array.slice(head_values, 0, k + 1)) > 100
}) if {
	head := array.slice([e | some e in percent_caps; e[1] > 0], 0, 101)
	head_values := [e[1] | some e in head]
}

cap_problem_indices := [i | some i in capped_indices; has_cap_problem(i)]

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
