# Name and value syntax shared by the validation rules (Kubernetes' rules for
# label keys and values, API versions and label selectors).
package spreadgate.validation

import rego.v1

# Field access that tolerates hostile input: a non-object yields the default
# (regorus raises on object.get of a non-object, OPA makes it undefined).
get_field(o, key, default_value) := object.get(o, key, default_value) if is_object(o)

else := default_value

# A list-valued field, or [] when it is absent or not a list. (Written without
# get_field: these two run for every field of every subset, and a function call is
# most of the cost of a rule in regorus.)
list_field(o, key) := v if {
	is_object(o)
	v := o[key]
	is_array(v)
} else := []

# A map-valued field, or {} when it is absent or not an object.
map_field(o, key) := v if {
	is_object(o)
	v := o[key]
	is_object(v)
} else := {}

# The index of each name's first use among `items` (those with a non-empty string name):
# one sort of [name, index] pairs, then the first pair of each run of equal names. Used
# instead of comparing every pair of items, which is quadratic in their number. (The
# sorted names are a flat list because regorus indexes a list of lists much more slowly.)
first_index_by_name(items) := {pair[0]: pair[1] |
	some k, pair in pairs
	_starts_run(sorted_names, k)
} if {
	pairs := sort([[item.name, i] | some i, item in items; non_empty_string(get_field(item, "name", ""))])
	sorted_names := [pair[0] | some pair in pairs]
}

_starts_run(_, k) if k == 0

_starts_run(names, k) if names[k - 1] != names[k]

non_empty_string(s) if {
	is_string(s)
	s != ""
}

# "apps/v1" -> "apps"; "v1" -> "" (the core group); "" for a non-string (a stored object of
# another spread is not validated again, and split would raise a type error on it).
api_group(api_version) := group if {
	is_string(api_version)
	parts := split(api_version, "/")
	count(parts) == 2
	group := parts[0]
} else := ""

valid_api_version(v) if {
	is_string(v)
	regex.match(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]+$`, v)
}

label_name_pattern := `^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$`

dns_subdomain_pattern := `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

# A qualified name: optional DNS-subdomain prefix and "/", then a name of at most 63 characters.
valid_label_key(key) if {
	is_string(key)
	parts := split(key, "/")
	count(parts) == 1
	valid_label_name(parts[0])
}

valid_label_key(key) if {
	is_string(key)
	parts := split(key, "/")
	count(parts) == 2
	count(parts[0]) <= 253
	regex.match(dns_subdomain_pattern, parts[0])
	valid_label_name(parts[1])
}

valid_label_name(name) if {
	count(name) <= 63
	regex.match(label_name_pattern, name)
}

valid_label_value(v) if v == ""

valid_label_value(v) if {
	is_string(v)
	count(v) <= 63
	regex.match(label_name_pattern, v)
}

valid_recovery_window(v) if {
	is_string(v)
	regex.match(`^[0-9]{1,5}$`, v)
	n := to_number(v)
	n >= 10
	n <= 86400
}

# Problems of a metav1.LabelSelector; empty when it is valid (or absent).
label_selector_problems(sel) := problems if {
	is_object(sel)
	problems := _selector_problem_set(sel)
} else := {"selector must be an object"} if {
	sel != null
} else := set()

_selector_problem_set(sel) := (
	{p |
		some k, _ in map_field(sel, "matchLabels")
		not valid_label_key(k)
		p := sprintf("selector.matchLabels key \"%v\" is not a valid label key", [k])
	} |
	{p |
		some k, v in map_field(sel, "matchLabels")
		not valid_label_value(v)
		p := sprintf("selector.matchLabels[%s] value \"%v\" is not a valid label value", [k, v])
	} |
	{p |
		some i, e in list_field(sel, "matchExpressions")
		not valid_label_key(get_field(e, "key", ""))
		p := sprintf("selector.matchExpressions[%d].key \"%v\" is not a valid label key", [i, get_field(e, "key", "")])
	} |
	{p |
		some i, e in list_field(sel, "matchExpressions")
		not get_field(e, "operator", "") in {"In", "NotIn", "Exists", "DoesNotExist"}
		p := sprintf("selector.matchExpressions[%d].operator \"%v\" is not one of In, NotIn, Exists, DoesNotExist", [i, get_field(e, "operator", "")])
	} |
	{p |
		some i, e in list_field(sel, "matchExpressions")
		e.operator in {"In", "NotIn"}
		count(list_field(e, "values")) == 0
		p := sprintf("selector.matchExpressions[%d].values must be non-empty for %s", [i, e.operator])
	} |
	{p |
		some i, e in list_field(sel, "matchExpressions")
		e.operator in {"Exists", "DoesNotExist"}
		count(list_field(e, "values")) > 0
		p := sprintf("selector.matchExpressions[%d].values must be empty for %s", [i, e.operator])
	}
)
