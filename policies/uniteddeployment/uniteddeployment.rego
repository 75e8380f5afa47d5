# UnitedDeployment validation: the create and update rules of OpenKruise's
# UnitedDeployment webhook, plus the values Kruise leaves unchecked
# (docs/uniteddeployment-validation.md lists every rule and difference).
# One rule set serves the same three callers as policies/validation:
#   * the Spreadgate webhook and `spreadgate validate` (input: a Gatekeeper-style review);
#   * Gatekeeper (input.review.object; the helpers of spreadgate.validation arrive as a library);
#   * conftest (input: the manifest itself).
# Kruise's v1alpha1 spec converts one to one to v1beta1, so both versions of both
# groups are validated by the same rules. Every violation names the offending
# field path in its message and in details.field.
package spreadgate.uniteddeployment

# Only functions of spreadgate.validation are called, never its rules: a rule reference
# from another package makes the engine evaluate that whole package (tests included).
import data.spreadgate.validation as ws
import rego.v1

review := input.review if {
	input.review.object
} else := {"object": input, "operation": "CREATE"}

ud := review.object

operation := ws.get_field(review, "operation", "CREATE")

ud_groups := {"spreadgate.dev", "apps.kruise.io"}

ud_versions := {"v1alpha1", "v1beta1"}

is_uniteddeployment if {
	ud.kind == "UnitedDeployment"
	api_version := ws.get_field(ud, "apiVersion", "")
	ws.api_group(api_version) in ud_groups
	split(api_version, "/")[1] in ud_versions
}

violation contains {"msg": sprintf("%s: %s", [e.field, e.msg]), "details": {"field": e.field, "reason": e.msg}} if {
	is_uniteddeployment
	some e in errors
}

spec := ws.map_field(ud, "spec")

max_int32 := 2147483647

whole_number(n) if {
	is_number(n)
	n == floor(n)
}

int32_at_least(n, low) if {
	whole_number(n)
	n >= low
	n <= max_int32
}

# --- metadata (C1) and spec ------------------------------------------------------

errors contains {"field": "metadata.name", "msg": sprintf("Invalid value: \"%v\": must be a lowercase RFC 1123 subdomain of at most 253 characters", [name])} if {
	name := ws.map_field(ud, "metadata").name
	not _dns_subdomain(name)
}

_dns_subdomain(name) if {
	is_string(name)
	count(name) <= 253
	regex.match(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, name)
}

errors contains {"field": "spec", "msg": "Required value: spec must be an object"} if {
	not is_object(ws.get_field(ud, "spec", null))
}

# --- replicas (C2) and revisionHistoryLimit ----------------------------------------

replicas_set if spec.replicas != null

errors contains {"field": "spec.replicas", "msg": sprintf("Invalid value: %v: must be a whole number between 0 and 2147483647", [spec.replicas])} if {
	replicas_set
	not int32_at_least(spec.replicas, 0)
}

# The total the subset percentages are taken of, when it is usable.
total_replicas := spec.replicas if int32_at_least(spec.replicas, 0)

errors contains {"field": "spec.revisionHistoryLimit", "msg": sprintf("Invalid value: %v: must be a whole number between 0 and 2147483647", [limit])} if {
	limit := spec.revisionHistoryLimit
	limit != null
	not int32_at_least(limit, 0)
}

# --- selector (C3, C4, C5) ------------------------------------------------------------

selector := ws.get_field(spec, "selector", null)

errors contains {"field": "spec.selector", "msg": "Required value: selector is required"} if {
	is_object(spec)
	selector == null
}

errors contains {"field": "spec.selector", "msg": sprintf("Invalid value: %s", [p])} if {
	some p in ws.label_selector_problems(selector)
}

errors contains {"field": "spec.selector", "msg": "Invalid value: empty selector is invalid for a UnitedDeployment (it would claim every workload of the namespace)"} if {
	is_object(selector)
	count(ws.map_field(selector, "matchLabels")) == 0
	count(ws.list_field(selector, "matchExpressions")) == 0
}

# A selector the template labels can be compared with (Kruise skips those checks otherwise).
usable_selector if {
	is_object(selector)
	count(ws.label_selector_problems(selector)) == 0
	count(ws.map_field(selector, "matchLabels")) + count(ws.list_field(selector, "matchExpressions")) > 0
}

# Whether `labels` (a map) satisfies the selector: every matchLabels pair and every expression.
selector_matches(labels) if {
	every k, v in ws.map_field(selector, "matchLabels") {
		ws.get_field(labels, k, null) == v
	}
	every e in ws.list_field(selector, "matchExpressions") {
		_expression_matches(e, labels)
	}
}

_expression_matches(e, labels) if {
	e.operator == "In"
	ws.get_field(labels, e.key, null) in ws.list_field(e, "values")
}

_expression_matches(e, labels) if {
	e.operator == "NotIn"
	not ws.get_field(labels, e.key, null) in ws.list_field(e, "values")
}

_expression_matches(e, labels) if {
	e.operator == "Exists"
	ws.get_field(labels, e.key, null) != null
}

_expression_matches(e, labels) if {
	e.operator == "DoesNotExist"
	ws.get_field(labels, e.key, null) == null
}
