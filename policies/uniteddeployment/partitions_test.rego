# Manual partitions that are not whole numbers get one error, the range error: the "more than
# the subset's replicas" rule only compares whole numbers (found by tools/rego_mutation.py:
# dropping that guard survived every test). Run with `opa test policies/` or `pytest policies/`.
package spreadgate.uniteddeployment

import rego.v1

test_a_malformed_partition_gets_only_the_range_error if {
	every p in ["x", -1, 2.5] {
		msgs := [v.msg | some v in violation; v.details.field == "spec.updateStrategy.manualUpdate.partitions[a]"] with input as fixed_sts({"a": p})
		count(msgs) == 1
		contains(msgs[0], "must be a whole number between 0 and 2147483647")
	}
}

# What else tools/rego_mutation.py found unpinned in strategy.rego: a null duration is unset (not
# an error), and a partition of 0 on Deployment subsets asks for nothing, so it is accepted.
test_null_adaptive_durations_are_unset if {
	count(violation) == 0 with input as with_schedule({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": null, "unschedulableDuration": null}})
}

test_a_zero_partition_on_deployment_subsets_is_accepted if {
	count(violation) == 0 with input as with_spec({"updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"ecs": 0}}}})
}

# A subset whose replicas are malformed gets that error only; its partition is not compared with
# a count it does not have.
test_a_partition_of_a_subset_with_malformed_replicas_is_not_compared if {
	obj := object.union(fixed_sts({"a": 1}), {"spec": {"topology": {"subsets": [{"name": "a", "replicas": "x"}, {"name": "b"}]}}})
	f := fields(obj)
	"spec.topology.subsets[0].replicas" in f
	not "spec.updateStrategy.manualUpdate.partitions[a]" in f
}
