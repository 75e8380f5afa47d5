# The int32 bound of maxReplicas (max_replicas.rego, well_formed_cap): 2147483647 is the largest
# valid cap, 2147483648 the smallest invalid one. Run with `opa test policies/` or `pytest policies/`.
package spreadgate.validation

import rego.v1

test_max_replicas_int32_bound if {
	every v in [0, 2147483646, 2147483647] {
		count(violation) == 0 with input as caps([v, null])
	}
	every v in [2147483648, -1] {
		"spec.subsets[0].maxReplicas" in reported_fields with input as caps([v, null])
	}
}

# A malformed cap is the one maxReplicas error: the "percentages add up to less than 100%" rule
# waits until every cap is well formed (found by tools/rego_mutation.py: dropping that condition
# survived every test).
test_sum_rule_waits_for_well_formed_caps if {
	reported_fields == {"spec.subsets[1].maxReplicas"} with input as caps(["40%", "x", "20%"])
	count([v | some v in violation; contains(v.msg, "less than 100%")]) == 0 with input as caps(["40%", "x", "20%"])
}
