# Subset rules: presence, names, node selector terms, preferred terms,
# tolerations and the shape of the per-subset patch.
package spreadgate.validation

import rego.v1

# The most subsets a spread may have: the CRD's maxItems on spec.subsets
# (manifests/base/crd.yaml), so the API server refuses a longer list before calling
# the webhook; here for callers without that schema (conftest, `spreadgate validate`,
# a webhook called directly). Beyond it, only the count is checked: `subsets` is
# undefined, so no per-subset rule runs. docs/operations.md explains the number.
max_subsets := 100

subsets := spec.subsets if {
	is_array(spec.subsets)
	count(spec.subsets) <= max_subsets
}

subset_path(i) := sprintf("spec.subsets[%d]", [i])

errors contains {"field": "spec.subsets", "msg": "Required value: at least one subset is required"} if {
	is_object(spec)
	get_field(spec, "subsets", []) in [[], null]
}

errors contains {"field": "spec.subsets", "msg": "Invalid value: subsets must be a list"} if {
	is_object(spec)
	not is_array(get_field(spec, "subsets", []))
}

errors contains {"field": sprintf("%s.name", [subset_path(i)]), "msg": "Invalid value: subset name must be a non-empty string"} if {
	some i, s in subsets
	not non_empty_string(get_field(s, "name", ""))
}

errors contains {"field": "spec.subsets", "msg": sprintf("Too many: %d: must have at most %d subsets", [count(spec.subsets), max_subsets])} if {
	is_array(spec.subsets)
	count(spec.subsets) > max_subsets
}

# A name used again is reported at its later occurrence, naming the first.
# Linear (after one sort): each subset looks its name's first index up.
errors contains {"field": sprintf("%s.name", [subset_path(j)]), "msg": sprintf("Invalid value: duplicate subset name \"%v\" (first used at index %d)", [s.name, i])} if {
	some j, s in subsets
	i := subset_first_index[s.name]
	i < j
}

subset_first_index := first_index_by_name(subsets)

# --- requiredNodeSelectorTerm and preferredNodeSelectorTerms (rules 8, 9) -----

errors contains {"field": sprintf("%s.requiredNodeSelectorTerm%s", [subset_path(i), p.field]), "msg": p.msg} if {
	some i, s in subsets
	some p in node_selector_term_problems(s.requiredNodeSelectorTerm)
}

errors contains {"field": sprintf("%s.preferredNodeSelectorTerms[%d].weight", [subset_path(i), j]), "msg": sprintf("Invalid value: weight %v must be an integer in the range 1-100", [get_field(t, "weight", null)])} if {
	some i, s in subsets
	some j, t in list_field(s, "preferredNodeSelectorTerms")
	not valid_weight(get_field(t, "weight", null))
}

errors contains {"field": sprintf("%s.preferredNodeSelectorTerms[%d].preference%s", [subset_path(i), j, p.field]), "msg": p.msg} if {
	some i, s in subsets
	some j, t in list_field(s, "preferredNodeSelectorTerms")
	some p in node_selector_term_problems(get_field(t, "preference", {}))
}

valid_weight(w) if {
	is_number(w)
	w == floor(w)
	w >= 1
	w <= 100
}

node_operators := {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}

# Problems of one corev1.NodeSelectorTerm, each with a field suffix.
node_selector_term_problems(term) := set() if {
	_plain_term(term)
} else := _term_problem_set(term) if {
	is_object(term)
} else := {{"field": "", "msg": "Invalid value: must be a node selector term object"}} if term != null

# The common term, settled without the eight checks of _term_problem_set: only
# matchExpressions, each In or NotIn with a valid key and at least one value.
_plain_term(term) if {
	is_object(term)
	count(term) == 1
	expressions := term.matchExpressions
	is_array(expressions)
	every e in expressions {
		is_object(e)
		e.operator in {"In", "NotIn"}
		is_array(e.values)
		count(e.values) > 0
		valid_label_key(e.key)
	}
}






_single_integer(values) if {
	count(values) == 1
	is_string(values[0])
	regex.match(`^-?[0-9]+$`, values[0])
}




# --- tolerations (rule 10) -----------------------------------------------------

toleration_effects := {"NoSchedule", "PreferNoSchedule", "NoExecute"}

errors contains {"field": sprintf("%s.tolerations[%d]%s", [subset_path(i), j, p.field]), "msg": p.msg} if {
	some i, s in subsets
	some j, t in list_field(s, "tolerations")
	some p in toleration_problems(t)
}

toleration_problems(t) := _toleration_problem_set(t)








# --- patch (rule 11) -------------------------------------------------------------
# The API server validates the complete pod when it is created; here the patch's
# shape is checked, and, when the target workload is known, that containers the
# patch would add to its pod template carry an image.

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": "Invalid value: patch must be an object (a strategic-merge patch of the pod)"} if {
	some i, s in subsets
	s.patch != null
	not is_object(s.patch)
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: metadata.%s key \"%v\" is not a valid label key", [m, k])} if {
	some i, s in subsets
	some m in ["labels", "annotations"]
	some k, _ in map_field(map_field(map_field(s, "patch"), "metadata"), m)
	not valid_label_key(k)
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: metadata.labels[%s] value %v is not a valid label value", [k, v])} if {
	some i, s in subsets
	some k, v in map_field(map_field(map_field(s, "patch"), "metadata"), "labels")
	v != null
	not valid_label_value(v)
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: metadata.annotations[%s] must be a string", [k])} if {
	some i, s in subsets
	some k, v in map_field(map_field(map_field(s, "patch"), "metadata"), "annotations")
	v != null
	not is_string(v)
}

patch_containers(s) := list_field(map_field(map_field(s, "patch"), "spec"), "containers")

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: spec.containers[%d] needs a name to merge into the pod's containers", [j])} if {
	some i, s in subsets
	some j, c in patch_containers(s)
	not non_empty_string(get_field(c, "name", ""))
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: spec.containers[%d].resources.%s.%s: %v is not a valid quantity", [j, kind, res, q])} if {
	some i, s in subsets
	some j, c in patch_containers(s)
	some kind in ["limits", "requests"]
	some res, q in map_field(map_field(c, "resources"), kind)
	not valid_quantity(q)
}

valid_quantity(q) if {
	is_number(q)
	q >= 0
}

valid_quantity(q) if {
	is_string(q)
	regex.match(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][0-9]+)?$`, q)
}

# With the target workload at hand (webhook, `admit`): a patch container whose
# name is not in the template would be added as a new container without an image.
workload_template_containers contains c.name if {
	some c in list_field(map_field(map_field(map_field(map_field(map_field(input, "context"), "workload"), "spec"), "template"), "spec"), "containers")
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": sprintf("Invalid value: spec.containers[%d] \"%v\" is not a container of the workload's pod template and has no image", [j, c.name])} if {
	count(workload_template_containers) > 0
	some i, s in subsets
	some j, c in patch_containers(s)
	non_empty_string(get_field(c, "name", ""))
	not c.name in workload_template_containers
	not non_empty_string(get_field(c, "image", ""))
}

_term_problem_set(term) := (
	{p |
		some j, e in list_field(term, "matchExpressions")
		not valid_label_key(get_field(e, "key", ""))
		p := {"field": sprintf(".matchExpressions[%d].key", [j]), "msg": sprintf("Invalid value: \"%v\" is not a valid label key", [get_field(e, "key", "")])}
	} |
	{p |
		some j, e in list_field(term, "matchExpressions")
		not get_field(e, "operator", "") in node_operators
		p := {"field": sprintf(".matchExpressions[%d].operator", [j]), "msg": sprintf("Unsupported value: \"%v\": supported values: DoesNotExist, Exists, Gt, In, Lt, NotIn", [get_field(e, "operator", "")])}
	} |
	{p |
		some j, e in list_field(term, "matchExpressions")
		e.operator in {"In", "NotIn"}
		count(list_field(e, "values")) == 0
		p := {"field": sprintf(".matchExpressions[%d].values", [j]), "msg": sprintf("Required value: must be specified when operator is %s", [e.operator])}
	} |
	{p |
		some j, e in list_field(term, "matchExpressions")
		e.operator in {"Exists", "DoesNotExist"}
		count(list_field(e, "values")) > 0
		p := {"field": sprintf(".matchExpressions[%d].values", [j]), "msg": sprintf("Forbidden: may not be specified when operator is %s", [e.operator])}
	} |
	{p |
		some j, e in list_field(term, "matchExpressions")
		e.operator in {"Gt", "Lt"}
		not _single_integer(list_field(e, "values"))
		p := {"field": sprintf(".matchExpressions[%d].values", [j]), "msg": sprintf("Invalid value: operator %s needs exactly one integer value", [e.operator])}
	} |
	{p |
		some j, f in list_field(term, "matchFields")
		get_field(f, "key", "") != "metadata.name"
		p := {"field": sprintf(".matchFields[%d].key", [j]), "msg": sprintf("Invalid value: \"%v\": only metadata.name is supported", [get_field(f, "key", "")])}
	} |
	{p |
		some j, f in list_field(term, "matchFields")
		not get_field(f, "operator", "") in {"In", "NotIn"}
		p := {"field": sprintf(".matchFields[%d].operator", [j]), "msg": sprintf("Unsupported value: \"%v\": supported values: In, NotIn", [get_field(f, "operator", "")])}
	} |
	{p |
		some j, f in list_field(term, "matchFields")
		count(list_field(f, "values")) != 1
		p := {"field": sprintf(".matchFields[%d].values", [j]), "msg": "Invalid value: must have exactly one value"}
	}
)

_toleration_problem_set(t) := (
	{p |
		non_empty_string(t.key)
		not valid_label_key(t.key)
		p := {"field": ".key", "msg": sprintf("Invalid value: \"%v\" is not a valid label key", [t.key])}
	} |
	{p |
		get_field(t, "key", "") == ""
		get_field(t, "operator", "") != "Exists"
		p := {"field": ".operator", "msg": "Invalid value: operator must be Exists when key is empty (to tolerate every taint)"}
	} |
	{p |
		get_field(t, "tolerationSeconds", null) != null
		get_field(t, "effect", "") != "NoExecute"
		p := {"field": ".effect", "msg": "Invalid value: effect must be NoExecute when tolerationSeconds is set"}
	} |
	{p |
		get_field(t, "operator", "") in {"", "Equal"}
		not valid_label_value(get_field(t, "value", ""))
		p := {"field": ".value", "msg": sprintf("Invalid value: \"%v\" is not a valid label value", [get_field(t, "value", "")])}
	} |
	{p |
		t.operator == "Exists"
		get_field(t, "value", "") != ""
		p := {"field": ".value", "msg": "Invalid value: value must be empty when operator is Exists"}
	} |
	{p |
		not t.operator in {"", "Equal", "Exists"}
		p := {"field": ".operator", "msg": sprintf("Unsupported value: \"%v\": supported values: Equal, Exists", [t.operator])}
	} |
	{p |
		t.effect != ""
		not t.effect in toleration_effects
		p := {"field": ".effect", "msg": sprintf("Unsupported value: \"%v\": supported values: NoExecute, NoSchedule, PreferNoSchedule", [t.effect])}
	}
)
