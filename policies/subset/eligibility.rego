# Subset eligibility: which subsets of a WorkloadSpread a new pod may be placed
# in, in spec order. Capacity (missingReplicas) is counted in Python; this policy
# decides everything that does not depend on counts:
#   * a subset whose Schedulable condition is False is skipped (Adaptive mode);
#   * a subset whose required node term contradicts the pod's own required node
#     affinity or nodeSelector is skipped (no node could ever satisfy both);
#   * when a node inventory is given, a subset with no node that fits the pod
#     (labels, taints vs tolerations, free cpu/memory/pods) is skipped.
#
# Input:
#   pod              the pod being admitted (only spec.nodeSelector, spec.affinity,
#                    spec.tolerations and container resources are read)
#   workloadSpread   the spread (spec.subsets)
#   subsetStatuses   the status list the admission counts against (conditions)
#   nodes            optional: [{name, labels, taints, unschedulable,
#                    free: {cpu (cores), memory (bytes), pods}}]
# Output: data.spreadgate.subset.decision = {"eligible": [names], "skipped": {reason: [names]},
# "reasons": {reason: text}} with reasons "unschedulable", "contradicts_pod" and "no_node_fits";
# `reasons` holds the words users see for each (admission warnings, `spreadgate admit`), so
# they are written here only. `rejected` lists the same as {subset, reason} objects with
# those words (for opa eval).
package spreadgate.subset

import rego.v1

subsets := input.workloadSpread.spec.subsets

pod_spec := object.get(object.get(input, "pod", {}), "spec", {})

decision := {
	"eligible": eligible,
	"skipped": {
		"unschedulable": unschedulable_subsets,
		"contradicts_pod": contradicting_subsets,
		"no_node_fits": unfit_subsets,
	},
	"reasons": skip_reasons,
}

# Why a subset is skipped, in words.
skip_reasons := {
	"unschedulable": "Schedulable condition is False (pods could not be scheduled there recently)",
	"contradicts_pod": "its required node term contradicts the pod's own node affinity or nodeSelector",
	"no_node_fits": "no node fits the pod (node terms, taints, or free cpu/memory/pods)",
}

eligible := [s.name | some s in subsets] if {
	count(rejected_names) == 0
} else := [s.name | some s in subsets; not s.name in rejected_names]

rejected_names := (unschedulable_subsets | contradicting_subsets) | unfit_subsets

spec_subset_names := {s.name | some s in subsets}

unschedulable_subsets contains st.name if {
	some st in input.subsetStatuses
	st.name in spec_subset_names
	some c in st.conditions
	c.type == "Schedulable"
	c.status == "False"
}

rejected contains {"subset": name, "reason": skip_reasons.unschedulable} if {
	some name in unschedulable_subsets
}

rejected contains {"subset": name, "reason": skip_reasons.contradicts_pod} if {
	some name in contradicting_subsets
}

rejected contains {"subset": name, "reason": skip_reasons.no_node_fits} if {
	some name in unfit_subsets
}

unfit_subsets contains name if {
	is_array(input.nodes)
	some name, facts in subset_facts
	not name in contradicting_subsets
	not some_node_fits(facts)
}

# The pod's own constraints and a subset's term can only contradict each other
# on a label key (or metadata.name) they both constrain; a subset sharing none
# with the pod is satisfiable without combining the terms (the common case), and
# a pod with no node constraints at all contradicts nothing.
pod_constrained_keys := {e.key | some t in pod_required_terms; some e in t.matchExpressions} | {k | some k, _ in pod_spec.nodeSelector}

pod_constrains_node_name if {
	some t in pod_required_terms
	count(t.matchFields) > 0
}

# Indices of subsets whose required term names a key (or the node name) the pod also constrains.
sharing_subsets contains i if {
	some i, s in subsets
	some e in s.requiredNodeSelectorTerm.matchExpressions
	e.key in pod_constrained_keys
}

sharing_subsets contains i if {
	pod_constrains_node_name
	some i, s in subsets
	count(s.requiredNodeSelectorTerm.matchFields) > 0
}

contradicting_subsets contains subsets[i].name if {
	some i in sharing_subsets
	not any_satisfiable(combined_terms(subsets[i]))
}

# What node-fit simulation needs about a subset, computed once per query: the
# node terms a pod there must satisfy (ORed), the tolerations it will have and
# (below) its resource requests. Only worked out when a node inventory is given.
subset_facts[s.name] := {
	"name": s.name,
	"index": i,
	"terms": combined_terms(s),
	"tolerations": array.concat(object.get(pod_spec, "tolerations", []), object.get(s, "tolerations", [])),
} if {
	is_array(input.nodes)
	some i, s in subsets
}

# The pod's requests in each subset, once the subset patch is applied.
subset_requests[s.name] := {"cpu": pod_request(s, "cpu"), "memory": pod_request(s, "memory")} if {
	is_array(input.nodes)
	some s in subsets
}

# --- the node terms a pod in subset s must satisfy (ORed) ----------------------

pod_required_terms := terms if {
	terms := pod_spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
	count(terms) > 0
} else := [{}]

# The pod's nodeSelector map as In requirements, ANDed into every term.
node_selector_requirements := [{"key": k, "operator": "In", "values": [v]} |
	some k, v in object.get(pod_spec, "nodeSelector", {})
]

# The subset's required term is ANDed into every term of the pod (terms are ORed).
# A term left with no requirement of its own (the pod's `{}` with no subset term, or
# the subset's `{}` injected into a pod without required affinity) matches no node in
# Kubernetes and is dropped; only when there is no required affinity at all does the
# nodeSelector alone decide.
combined_terms(s) := [t |
	some pod_term in pod_required_terms
	not void_term(pod_term, s)
	t := {
		"matchExpressions": array.concat(
			array.concat(object.get(pod_term, "matchExpressions", []), node_selector_requirements),
			object.get(object.get(s, "requiredNodeSelectorTerm", {}), "matchExpressions", []),
		),
		"matchFields": array.concat(
			object.get(pod_term, "matchFields", []),
			object.get(object.get(s, "requiredNodeSelectorTerm", {}), "matchFields", []),
		),
	}
]

void_term(pod_term, s) if {
	term := object.get(s, "requiredNodeSelectorTerm", {})
	count(object.get(pod_term, "matchExpressions", [])) + count(object.get(pod_term, "matchFields", [])) == 0
	count(object.get(term, "matchExpressions", [])) + count(object.get(term, "matchFields", [])) == 0
	required_affinity(s)
}

required_affinity(_) if count(pod_spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms) > 0

required_affinity(s) if is_object(s.requiredNodeSelectorTerm)

any_satisfiable(terms) if {
	some t in terms
	satisfiable(t)
}

# --- static satisfiability of one term ---------------------------------------------

# One requirement on a key can always be met (validation guarantees In/NotIn
# have values and Gt/Lt an integer), so only keys named more than once are analysed.
satisfiable(term) if {
	keys := [e.key | some e in term.matchExpressions]
	every key in {k | some i, k in keys; some j, k2 in keys; i < j; k == k2} {
		key_satisfiable([e | some e in term.matchExpressions; e.key == key])
	}
	count(term.matchFields) < 2
}

satisfiable(term) if {
	keys := [e.key | some e in term.matchExpressions]
	every key in {k | some i, k in keys; some j, k2 in keys; i < j; k == k2} {
		key_satisfiable([e | some e in term.matchExpressions; e.key == key])
	}
	count(term.matchFields) >= 2
	fields_satisfiable(term.matchFields)
}

ops(reqs, op) := [r | some r in reqs; r.operator == op]

# A key that must be absent cannot also be required to be present.
key_satisfiable(reqs) if {
	count(ops(reqs, "DoesNotExist")) > 0
	count(reqs) == count(ops(reqs, "DoesNotExist")) + count(ops(reqs, "NotIn"))
}

# With In lists: some value allowed by every In, by no NotIn, and inside Gt/Lt bounds.
key_satisfiable(reqs) if {
	count(ops(reqs, "DoesNotExist")) == 0
	count(ops(reqs, "In")) > 0
	some v in ops(reqs, "In")[0].values
	every r in ops(reqs, "In") {
		v in r.values
	}
	every r in ops(reqs, "NotIn") {
		not v in r.values
	}
	every r in ops(reqs, "Gt") {
		numeric_gt(v, r.values[0])
	}
	every r in ops(reqs, "Lt") {
		numeric_gt(r.values[0], v)
	}
}

# Without In lists: some integer strictly between the bounds (Exists/NotIn alone always can be met).
key_satisfiable(reqs) if {
	count(ops(reqs, "DoesNotExist")) == 0
	count(ops(reqs, "In")) == 0

	# A Gt/Lt bound that is not an integer matches no node, as in Kubernetes.
	every r in array.concat(ops(reqs, "Gt"), ops(reqs, "Lt")) {
		is_number(integer(r.values[0]))
	}
	lower := [integer(r.values[0]) | some r in ops(reqs, "Gt")]
	upper := [integer(r.values[0]) | some r in ops(reqs, "Lt")]
	every g in lower {
		g < 9223372036854775807
		every l in upper {
			l - g > 1
		}
	}
	every l in upper {
		l > -9223372036854775808
	}
}

# a > b for integer strings; anything else (a malformed Gt/Lt value) compares as false.
numeric_gt(a, b) if integer(a) > integer(b)

# An integer string as Kubernetes reads Gt/Lt values and node labels (strconv.ParseInt,
# base 10, 64 bits): ASCII digits after an optional minus, leading zeros allowed. Leading
# zeros are stripped before to_number (which refuses "07"); out-of-range is not an integer.
integer(s) := to_number(concat("", [sign, digits])) if {
	is_string(s)
	regex.match(`^-?[0-9]+$`, s)
	magnitude := trim_left(trim_prefix(s, "-"), "0")
	in_int64(magnitude, startswith(s, "-"))
	[sign, digits] := signed_digits(startswith(s, "-"), magnitude)
}

signed_digits(_, "") := ["", "0"]

signed_digits(true, magnitude) := ["-", magnitude] if magnitude != ""

signed_digits(false, magnitude) := ["", magnitude] if magnitude != ""

in_int64(magnitude, _) if count(magnitude) < 19

in_int64(magnitude, false) if {
	count(magnitude) == 19
	magnitude <= "9223372036854775807"
}

in_int64(magnitude, true) if {
	count(magnitude) == 19
	magnitude <= "9223372036854775808"
}

fields_satisfiable(fields) if {
	count(ops(fields, "In")) == 0
}

fields_satisfiable(fields) if {
	some v in ops(fields, "In")[0].values
	every r in ops(fields, "In") {
		v in r.values
	}
	every r in ops(fields, "NotIn") {
		not v in r.values
	}
}

# --- node fit simulation ------------------------------------------------------------

some_node_fits(facts) if {
	some node in input.nodes
	node_fits(node, facts)
}

# Cheapest and most selective checks first: most nodes fail on labels.
node_fits(node, facts) if {
	admits_pods(node, facts.tolerations)
	some t in facts.terms
	node_matches_term(node, t)
	taints_tolerated(node, facts.tolerations)
	resources_fit(node, facts)
}

# A cordoned node admits only pods tolerating its unschedulable taint (NodeUnschedulable).
admits_pods(node, _) if not object.get(node, "unschedulable", false)

admits_pods(node, tolerations) if {
	object.get(node, "unschedulable", false)
	taint_tolerated({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}, tolerations)
}

node_matches_term(node, term) if {
	labels := object.get(node, "labels", {})
	every e in term.matchExpressions {
		expression_matches(labels, e)
	}
	every f in term.matchFields {
		f.key == "metadata.name"
		field_matches(node.name, f)
	}
}

# A requirement with the wrong number of values (In/NotIn none, Exists/DoesNotExist
# some, Gt/Lt other than one) does not parse in Kubernetes: its term matches no node.
expression_matches(labels, e) if {
	e.operator == "In"
	count(e.values) > 0
	labels[e.key] in e.values
}

expression_matches(labels, e) if {
	e.operator == "NotIn"
	count(e.values) > 0
	not labels[e.key] in e.values
}

expression_matches(labels, e) if {
	e.operator == "Exists"
	count(object.get(e, "values", [])) == 0
	labels[e.key]
}

expression_matches(labels, e) if {
	e.operator == "DoesNotExist"
	count(object.get(e, "values", [])) == 0
	not labels[e.key]
}

expression_matches(labels, e) if {
	e.operator == "Gt"
	count(e.values) == 1
	numeric_gt(labels[e.key], e.values[0])
}

expression_matches(labels, e) if {
	e.operator == "Lt"
	count(e.values) == 1
	numeric_gt(e.values[0], labels[e.key])
}

# A field requirement takes exactly one value.
field_matches(name, f) if {
	f.operator == "In"
	count(f.values) == 1
	name in f.values
}

field_matches(name, f) if {
	f.operator == "NotIn"
	count(f.values) == 1
	not name in f.values
}

# Taints that keep pods off a node (PreferNoSchedule only scores) must each be tolerated.
taints_tolerated(node, tolerations) if {
	every taint in object.get(node, "taints", []) {
		taint_tolerated(taint, tolerations)
	}
}

taint_tolerated(taint, _) if taint.effect == "PreferNoSchedule"

taint_tolerated(taint, tolerations) if {
	some tol in tolerations
	toleration_matches(tol, taint)
}

toleration_matches(tol, taint) if {
	object.get(tol, "effect", "") in {"", taint.effect}
	object.get(tol, "key", "") in {"", taint.key}
	object.get(tol, "operator", "Equal") == "Exists"
}

# As Kubernetes' Toleration.ToleratesTaint: an empty key matches every key for Equal too
# (validation only lets Exists leave the key empty, but pods reach admission unvalidated).
toleration_matches(tol, taint) if {
	object.get(tol, "effect", "") in {"", taint.effect}
	object.get(tol, "key", "") in {"", taint.key}
	object.get(tol, "operator", "Equal") in {"", "Equal"}
	object.get(tol, "value", "") == object.get(taint, "value", "")
}

# --- resources -----------------------------------------------------------------------

resources_fit(node, facts) if {
	free := object.get(node, "free", {})
	requests := subset_requests[facts.name]
	object.get(free, "pods", 1) >= 1
	object.get(free, "cpu", 1e18) >= requests.cpu
	object.get(free, "memory", 1e18) >= requests.memory
}

# Containers' requests summed (a request defaults to the limit, as Kubernetes does);
# a container of the subset patch with the same name overrides the pod's values.
pod_request(s, resource) := sum([container_request(s, c, resource) | some c in object.get(pod_spec, "containers", [])])

container_request(s, c, resource) := quantity(q) if {
	some pc in object.get(object.get(object.get(s, "patch", {}), "spec", {}), "containers", [])
	pc.name == c.name
	q := effective_request(pc, resource)
} else := quantity(effective_request(c, resource))

effective_request(c, resource) := q if {
	q := c.resources.requests[resource]
} else := q if {
	q := c.resources.limits[resource]
} else := 0

# A Kubernetes quantity as a number; one that does not parse (a pod the API server has
# not validated yet) counts as 0, which never makes a subset look full.
quantity(q) := q if is_number(q)

else := units.parse(q) if {
	is_string(q)
	regex.match(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][0-9]+)?$`, q)
}

else := 0
