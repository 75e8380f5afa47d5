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
