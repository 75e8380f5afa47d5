# Subset patches: like a WorkloadSpread subset patch, a UnitedDeployment subset
# `patch` is a strategic-merge patch of the pod template, so the same allowlist
# applies (policies/validation/patch.rego: what a patch may touch, reserved keys,
# no merge directives, operators' extra fields). What differs is where the pod
# template and the protected labels come from: the UnitedDeployment's own
# template and selector, plus the labels Kruise's controller writes on subsets;
# and a UnitedDeployment patch may also set `ws.workload_author_patch_fields`
# (image, envFrom, env valueFrom, runtimeClassName, dnsConfig), since its author
# must be allowed to create and update the workload kind itself.
package spreadgate.uniteddeployment

import data.spreadgate.validation as ws
import rego.v1

# Labels the subset workloads and their pods are told apart by.
ud_reserved_labels := {
	"apps.kruise.io/subset-name",
	"apps.kruise.io/controller-revision-hash",
	"apps.kruise.io/united-deployment-reserved-pod",
}

subset_patch(s) := p if {
	p := ws.get_field(s, "patch", null)
	is_object(p)
}

errors contains {"field": sprintf("%s.patch", [subset_path(i)]), "msg": "Invalid value: patch must be an object (a strategic-merge patch of the pod template)"} if {
	some i, s in subsets
	ws.get_field(s, "patch", null) != null
	not subset_patch(s)
}

errors contains {"field": sprintf("%s.patch.%s", [subset_path(i), t.at]), "msg": sprintf("Forbidden: %s is not on the subset patch allowlist (%s; for a UnitedDeployment also image, envFrom, env valueFrom, runtimeClassName, dnsConfig)", [t.key, ws.default_allowlist_text])} if {
	some i, s in subsets
	some t in ws.touched_paths(subset_patch(s))
	not ws.patch_field_allowed(t.key)
	not t.key in ws.workload_author_patch_fields
}

errors contains {"field": sprintf("%s.patch.%s", [subset_path(i), ws.render_path(array.concat(path, [k]))]), "msg": sprintf("Forbidden: strategic-merge directive %s may not be used in a subset patch", [k])} if {
	some i, s in subsets
	p := subset_patch(s)
	ws.may_hold_directive(p)
	walk(p, [path, v])
	is_object(v)
	some k, _ in v
	ws.is_directive(k)
}

patch_metadata(s, m) := ws.get_field(ws.map_field(subset_patch(s), "metadata"), m, null)

errors contains {"field": sprintf("%s.patch.metadata.%s", [subset_path(i), m]), "msg": sprintf("Forbidden: metadata.%s must be a map of keys to set", [m])} if {
	some i, s in subsets
	some m in ["labels", "annotations"]
	patch_metadata(s, m) != null
	not is_object(patch_metadata(s, m))
}

errors contains {"field": sprintf("%s.patch.metadata.%s[%s]", [subset_path(i), m, k]), "msg": sprintf("Forbidden: %s is a reserved key (Spreadgate's or Kruise's bookkeeping, a controller-managed label or a security setting); a subset patch may not set it", [k])} if {
	some i, s in subsets
	some m in ["labels", "annotations"]
	some k, _ in ws.map_field(ws.map_field(subset_patch(s), "metadata"), m)
	_reserved(k)
}

_reserved(k) if ws.reserved_patch_key(k)

_reserved(k) if k in ud_reserved_labels

selector_label_keys contains k if some k, _ in ws.map_field(selector, "matchLabels")

selector_label_keys contains k if {
	some e in ws.list_field(selector, "matchExpressions")
	k := ws.get_field(e, "key", "")
}

errors contains {"field": sprintf("%s.patch.metadata.labels[%s]", [subset_path(i), k]), "msg": sprintf("Forbidden: %s is a label spec.selector selects on; a patched pod would leave its subset workload and be replaced", [k])} if {
	some i, s in subsets
	some k, _ in ws.map_field(ws.map_field(subset_patch(s), "metadata"), "labels")
	k in selector_label_keys
	not _reserved(k)
}

errors contains {"field": sprintf("%s.patch.metadata.labels[%s]", [subset_path(i), k]), "msg": sprintf("Invalid value: %v: not a valid label value", [v])} if {
	some i, s in subsets
	some k, v in ws.map_field(ws.map_field(subset_patch(s), "metadata"), "labels")
	v != null
	not ws.valid_label_value(v)
}

template_container_names(k) := {n |
	some c in ws.list_field(pod_spec, k)
	n := ws.get_field(c, "name", "")
}

errors contains {"field": sprintf("%s.patch.spec.%s[%d]", [subset_path(i), k, j]), "msg": sprintf("Forbidden: adds %s entry \"%v\", which the pod template does not have; a subset patch may only change the template's own containers", [k, ws.get_field(c, "name", "")])} if {
	template_key
	some i, s in subsets
	some k in {"containers", "initContainers"}
	some j, c in ws.list_field(ws.map_field(subset_patch(s), "spec"), k)
	not ws.get_field(c, "name", "") in template_container_names(k)
	not ws.patch_field_allowed(sprintf("spec.%s[]", [k]))
}
