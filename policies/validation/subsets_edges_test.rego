# Edges of the subset rules (subsets.rego) that tools/rego_mutation.py found no test pinned:
# null label and annotation values in a patch (they delete the key), zero and negative
# quantities, a Gt/Lt value that is a number, not a string, and a patch container with an
# empty name. Run with `opa test policies/` or `pytest policies/`.
package spreadgate.validation

import rego.v1

_workload := {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}

test_null_label_and_annotation_values_in_a_patch_delete_and_are_accepted if {
	count(violation) == 0 with input as patch_subset({"metadata": {"labels": {"subset": null}}})
	count(violation) == 0 with input as patch_subset({"metadata": {"annotations": {"note": null}}})
}

test_a_zero_quantity_is_accepted_and_a_negative_one_refused if {
	zero := {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": 0}, "limits": {"memory": 0}}}]}}
	count(violation) == 0 with input as patch_subset(zero)
	negative := {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": -1}}}]}}
	msgs := {v.msg | some v in violation} with input as patch_subset(negative)
	msgs == {"spec.subsets[0].patch: Invalid value: spec.containers[0].resources.requests.cpu: -1 is not a valid quantity"}
}

test_a_numeric_gt_value_is_not_a_single_integer_string if {
	term := {"matchExpressions": [{"key": "rank", "operator": "Gt", "values": [5]}]}
	msgs := {v.msg | some v in violation} with input as with_subsets([{"name": "a", "requiredNodeSelectorTerm": term}])
	msgs == {"spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Invalid value: operator Gt needs exactly one integer value"}
	good := {"matchExpressions": [{"key": "rank", "operator": "Gt", "values": ["5"]}]}
	count(violation) == 0 with input as with_subsets([{"name": "a", "requiredNodeSelectorTerm": good}])
}

test_a_patch_container_with_an_empty_name_gets_only_the_name_error if {
	p := {"spec": {"containers": [{"name": ""}]}}
	obj := {"review": {"object": patch_subset(p)}, "context": {"workload": _workload}}
	msgs := {v.msg | some v in violation} with input as obj
	msgs == {"spec.subsets[0].patch: Invalid value: spec.containers[0] needs a name to merge into the pod's containers"}
}
