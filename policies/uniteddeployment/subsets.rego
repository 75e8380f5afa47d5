# spec.topology.subsets rules: names (C25-C27), node selector terms (C28),
# tolerations (C29), replicas/minReplicas/maxReplicas (C17-C24, C30) and the
# shape of each subset's pod-template patch.
package spreadgate.uniteddeployment

import data.spreadgate.validation as ws
import rego.v1

topology := ws.map_field(spec, "topology")

# The most subsets a UnitedDeployment may have: the CRD's maxItems on
# spec.topology.subsets (manifests/base/uniteddeployment-crd.yaml), the same bound as a
# WorkloadSpread's (docs/operations.md explains the number). Beyond it only the count
# is checked: `subsets` is empty, so no per-subset rule runs.
max_subsets := 100

subsets := all_subsets if count(all_subsets) <= max_subsets

else := []

all_subsets := ws.list_field(topology, "subsets")

errors contains {"field": "spec.topology.subsets", "msg": sprintf("Too many: %d: must have at most %d subsets", [count(all_subsets), max_subsets])} if {
	count(all_subsets) > max_subsets
}

subset_path(i) := sprintf("spec.topology.subsets[%d]", [i])

errors contains {"field": "spec.topology.subsets", "msg": "Invalid value: subsets must be a list"} if {
	not is_array(ws.get_field(topology, "subsets", []))
}

errors contains {"field": sprintf("%s", [subset_path(i)]), "msg": "Invalid value: a subset must be an object"} if {
	some i, s in subsets
	not is_object(s)
}

# --- names (C25-C27) -----------------------------------------------------------------------

errors contains {"field": sprintf("%s.name", [subset_path(i)]), "msg": "Required value: subset name is required"} if {
	some i, s in subsets
	ws.get_field(s, "name", "") in {"", null}
}

errors contains {"field": sprintf("%s.name", [subset_path(i)]), "msg": sprintf("Invalid value: \"%v\": invalid subset name, it must be a lowercase RFC 1123 label (at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit)", [name])} if {
	some i, s in subsets
	name := ws.get_field(s, "name", "")
	name != null
	not dns_label(name)
}

# Linear (after one sort): each subset looks its name's first index up.
errors contains {"field": sprintf("%s.name", [subset_path(j)]), "msg": sprintf("Invalid value: duplicated subset name %v", [s.name])} if {
	some j, s in subsets
	subset_first_index[s.name] < j
	dns_label(s.name)
}

subset_first_index := ws.first_index_by_name(subsets)

# Each named subset by name (the first of a duplicated name).
subset_by_name := {name: subsets[i] | some name, i in subset_first_index}

# --- nodeSelectorTerm (C28) and tolerations (C29) ---------------------------------------

errors contains {"field": sprintf("%s.nodeSelectorTerm%s", [subset_path(i), p.field]), "msg": p.msg} if {
	some i, s in subsets
	some p in ws.node_selector_term_problems(ws.get_field(s, "nodeSelectorTerm", null))
}

errors contains {"field": sprintf("%s.tolerations", [subset_path(i)]), "msg": "Invalid value: tolerations must be a list"} if {
	some i, s in subsets
	not is_array(ws.get_field(s, "tolerations", []))
}

errors contains {"field": sprintf("%s.tolerations[%d]%s", [subset_path(i), j, p.field]), "msg": p.msg} if {
	some i, s in subsets
	some j, t in ws.list_field(s, "tolerations")
	some p in _toleration_problems(t)
}

_toleration_problems(t) := ws.toleration_problems(t) if is_object(t)

else := {{"field": "", "msg": "Invalid value: a toleration must be an object"}}

# --- replicas, minReplicas, maxReplicas (C17, C18) ------------------------------------------

count_fields := ["replicas", "minReplicas", "maxReplicas"]

# The first problem of a subset count, in Kruise's order of checks; undefined when it parses.
value_problem(v) := "must be an integer or a percentage string such as \"25%\"" if {
	not is_number(v)
	not is_string(v)
} else := sprintf("%v should not be less than 0", [v]) if {
	is_number(v)
	v < 0
} else := sprintf("%v must be a whole number of at most 2147483647", [v]) if {
	is_number(v)
	not int32_at_least(v, 0)
} else := sprintf("%v: a percentage needs a valid spec.replicas", [v]) if {
	is_string(v)
	not total_replicas
} else := sprintf("%v is neither an integer nor a percentage such as \"25%%\"", [v]) if {
	is_string(v)
	not regex.match(`^[+-]?[0-9]+%$`, v)
} else := sprintf("%v must be a percentage between 0%% and 100%%", [v]) if {
	is_string(v)
	not percent_in_range(v)
}

# Digits of a well-formed percentage, without sign and leading zeros ("+050%" -> "50").
_percent_digits(v) := d if {
	d := trim_left(trim_left(trim_suffix(v, "%"), "+-"), "0")
	d != ""
} else := "0"

percent_in_range(v) if {
	startswith(v, "-")
	_percent_digits(v) == "0"
}

percent_in_range(v) if {
	not startswith(v, "-")
	count(_percent_digits(v)) <= 3
	to_number(_percent_digits(v)) <= 100
}

# The count a subset value stands for: the number, or a percentage of spec.replicas rounded
# half up; 0 when it does not parse (as Kruise counts it).
value_of(v) := 0 if {
	value_problem(v)
} else := v if {
	is_number(v)
} else := floor(((total_replicas * to_number(_percent_digits(v))) + 50) / 100)

errors contains {"field": sprintf("%s.%s", [subset_path(i), f]), "msg": sprintf("Invalid value: %s", [value_problem(v)])} if {
	some i, s in subsets
	some f in count_fields
	v := ws.get_field(s, f, null)
	v != null
	value_problem(v)
}

errors contains {"field": sprintf("%s.minReplicas", [subset_path(i)]), "msg": sprintf("Invalid value: subset[%d].minReplicas (%d) must be less than or equal to maxReplicas (%d)", [i, value_of(low), value_of(high)])} if {
	some i, s in subsets
	low := ws.get_field(s, "minReplicas", null)
	high := ws.get_field(s, "maxReplicas", null)
	low != null
	high != null
	not value_problem(low)
	not value_problem(high)
	value_of(low) > value_of(high)
}

# --- fixed and capacity modes (C19-C24) ----------------------------------------------------------

has_value(s, f) if ws.get_field(s, f, null) != null

fixed_mode_used if {
	some s in subsets
	has_value(s, "replicas")
}

capacity_mode_used if {
	some s in subsets
	some f in ["minReplicas", "maxReplicas"]
	has_value(s, f)
}

errors contains {"field": "spec.topology.subsets", "msg": "Invalid value: subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a UnitedDeployment"} if {
	fixed_mode_used
	capacity_mode_used
}

errors contains {"field": "spec.topology.subsets", "msg": "Invalid value: spec.replicas must be not empty if you set subset.minReplicas/maxReplicas"} if {
	capacity_mode_used
	not fixed_mode_used
	not replicas_set
}

errors contains {"field": "spec.topology.subsets", "msg": "Invalid value: at least one subset.maxReplicas must be empty"} if {
	capacity_mode_used
	not fixed_mode_used
	every s in subsets {
		has_value(s, "maxReplicas")
	}
}

# An unset maxReplicas counts as 1,000,000 in this sum, as in Kruise.
unset_max_value := 1000000

errors contains {"field": "spec.topology.subsets", "msg": sprintf("Invalid value: sum of indicated subset.minReplicas (%d) should not be greater than sum of indicated subset.maxReplicas (%d)", [min_sum, max_sum])} if {
	capacity_mode_used
	not fixed_mode_used
	min_sum := sum([value_of(ws.get_field(s, "minReplicas", 0)) | some s in subsets])
	max_sum := sum([_max_value(s) | some s in subsets])
	min_sum > max_sum
}

_max_value(s) := value_of(s.maxReplicas) if has_value(s, "maxReplicas")

else := unset_max_value

fixed_sum := sum([value_of(s.replicas) | some s in subsets; has_value(s, "replicas")])

all_fixed if {
	every s in subsets {
		has_value(s, "replicas")
	}
}

errors contains {"field": "spec.topology.subsets", "msg": sprintf("Invalid value: sum of indicated subset replicas %d should not be greater than UnitedDeployment replicas %d", [fixed_sum, total_replicas])} if {
	not capacity_mode_used
	fixed_sum > total_replicas
}

errors contains {"field": "spec.topology.subsets", "msg": sprintf("Invalid value: if replicas of all subsets are provided, the sum of indicated subset replicas %d should equal UnitedDeployment replicas %d", [fixed_sum, total_replicas])} if {
	not capacity_mode_used
	count(subsets) > 0
	all_fixed
	fixed_sum != total_replicas
}

errors contains {"field": "spec.topology.subsets", "msg": "Invalid value: if UnitedDeployment replicas is not provided, replicas of all subsets should be provided"} if {
	not capacity_mode_used
	not replicas_set
	not all_fixed
}

# --- Adaptive takes no fixed replicas (C30) ----------------------------------------------------

errors contains {"field": sprintf("%s.replicas", [subset_path(i)]), "msg": "Forbidden: specify replicas use minReplicas/maxReplicas to enable adaptive strategy"} if {
	schedule_type == "Adaptive"
	some i, s in subsets
	has_value(s, "replicas")
}
