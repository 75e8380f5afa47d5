# Edges of the name, label and annotation helpers (names.rego) that tools/rego_mutation.py found no
# test pinned: the length limits on both sides, the types, the shapes. Run with `opa test policies/`
# or `pytest policies/`.
package spreadgate.validation

import rego.v1

letters(n) := concat("", [c | some _ in numbers.range(1, n); c := "a"])

test_label_names_and_values_are_at_most_63_characters if {
	valid_label_key(letters(63))
	not valid_label_key(letters(64))
	valid_label_value(letters(63))
	not valid_label_value(letters(64))
	valid_label_key(concat("/", [letters(253), "x"]))
	not valid_label_key(concat("/", [letters(254), "x"]))
	not valid_label_key(concat("/", ["example.com", letters(64)]))
	not valid_label_key("example.com/-bad")
	not valid_label_key("a/b/c")
	not valid_label_key("Example.com/x")
	valid_api_version("apps.kruise.io/v1beta1")
	not valid_api_version("Apps/V1")
	not valid_api_version("apps/")
}

test_helpers_refuse_other_types if {
	not valid_label_key(5)
	not valid_label_value(5)
	not non_empty_string(5)
	not valid_api_version(5)
	not valid_recovery_window(600)
}

test_recovery_window_bounds if {
	valid_recovery_window("10")
	not valid_recovery_window("9")
	valid_recovery_window("86400")
	not valid_recovery_window("86401")
}

test_api_group_needs_exactly_one_slash if {
	api_group("apps/v1") == "apps"
	api_group("v1") == ""
	api_group("a/b/c") == ""
}

test_selector_shapes if {
	label_selector_problems(null) == set()
	label_selector_problems({"matchExpressions": [{"key": "a", "operator": "Exists"}]}) == set()
	label_selector_problems({"matchExpressions": [{"key": "a", "operator": "Exists", "values": []}]}) == set()
	count(label_selector_problems({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})) > 0
}

# Duplicate subset names (subsets.rego): a name used three times gives two errors, both naming the
# first use; empty names are reported as empty, not as duplicates.
test_duplicate_names_point_at_the_first_use if {
	obj := with_subsets([{"name": "a"}, {"name": "a"}, {"name": "a"}])
	msgs := {v.details.field: v.msg | some v in violation; contains(v.msg, "duplicate")} with input as obj
	count(msgs) == 2
	contains(msgs["spec.subsets[1].name"], "(first used at index 0)")
	contains(msgs["spec.subsets[2].name"], "(first used at index 0)")
	empty := with_subsets([{"name": ""}, {"name": ""}])
	count([v | some v in violation; contains(v.msg, "duplicate")]) == 0 with input as empty
}
