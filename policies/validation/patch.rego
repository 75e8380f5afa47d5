# Subset patch allowlist: a subset `patch` is a strategic-merge patch of every pod
# admitted into the subset, so whoever may edit a WorkloadSpread could otherwise
# change anything about the workload's pods (identity, service account, host
# namespaces, privileges, volumes, scheduling). A patch may touch only what a
# per-subset customisation needs:
#   * pod labels and annotations, except reserved keys (Spreadgate's and Kruise's
#     bookkeeping, controller-managed labels, annotation forms of security
#     settings) and the labels the target workload's selector or the spread's
#     targetFilter select on;
#   * for the pod template's own containers and init containers (matched by
#     name): resources, and env entries with a literal `value` (an entry with
#     `valueFrom` reads a Secret or ConfigMap: refused);
#   * spec.priorityClassName, topologySpreadConstraints, schedulerName.
# Not by default (issue 24: each one lends the author a power of the workload's own
# editors): a container's `image` (other code under the workload's ServiceAccount),
# `env[].valueFrom` and `envFrom` (any Secret or ConfigMap of the namespace),
# `dnsConfig` (name resolution) and `runtimeClassName` (the sandbox). Operators
# re-allow each with its field path (docs/operations.md, "Subset patch allowlist").
# Everything else, and every strategic-merge directive ($patch, $retainKeys,
# $setElementOrder/..., $deleteFromPrimitiveList/...), is refused with its field
# path. Operators widen the allowlist with field paths in
# `input.context.allowedPatchFields` (webhook `--allow-patch-field`) or
# `input.parameters.allowedPatchFields` (Gatekeeper): "spec.nodeSelector",
# "spec.containers[].volumeMounts", "spec.containers[]" (new containers), ...
# An entry also allows everything below it. On UPDATE a patch left as stored is
# not refused again (ratcheting, `_patch_kept`).
#
# The target workload comes from `input.context.workload` (webhook, `spreadgate
# validate` when the file holds it) or Gatekeeper's synced `data.inventory`.
# When it is unknown (conftest on a bare file), selector labels and container
# names cannot be checked here; the mutating webhook checks both at admission,
# against the workload's selector and the pod's actual containers
# (`patch_violation`, see docs/operations.md).
#
# Public functions, shared with the UnitedDeployment policy
# (policies/uniteddeployment/patch.rego applies the same allowlist):
#   * touched_paths(p): every field patch `p` sets, as {"at": concrete path, "key": allowlist path};
#   * is_directive(k): whether key `k` is a strategic-merge directive ("$patch", "$retainKeys", ...);
#   * may_hold_directive(p): a cheap test before looking for directive keys in patch `p`;
#   * render_path(path): a walk() path as a field path (["spec", "containers", 0] -> "spec.containers[0]");
#   * patch_field_allowed(key), reserved_patch_key(k): the allowlist and the reserved keys.
# Names with a leading underscore are this package's own and may change.
package spreadgate.validation

import rego.v1

container_lists := {"containers", "initContainers"}

default_patch_fields := {
	"metadata.labels",
	"metadata.annotations",
	"spec.priorityClassName",
	"spec.topologySpreadConstraints",
	"spec.schedulerName",
	"spec.containers[].resources",
	"spec.containers[].env",
	"spec.initContainers[].resources",
	"spec.initContainers[].env",
}

# What a WorkloadSpread patch may not set by default but a UnitedDeployment patch may
# (policies/uniteddeployment/patch.rego): a UnitedDeployment's author must be allowed to
# create and update the workload kind itself (the webhook's authorization check,
# docs/operations.md), so setting these per subset lends them nothing their template
# could not already do; a WorkloadSpread's author may not be able to edit the workload.
workload_author_patch_fields := {
	"spec.runtimeClassName",
	"spec.dnsConfig",
	"spec.containers[].image",
	"spec.containers[].envFrom",
	"spec.containers[].env[].valueFrom",
	"spec.initContainers[].image",
	"spec.initContainers[].envFrom",
	"spec.initContainers[].env[].valueFrom",
}

# What the Forbidden message says the default allowlist is.
default_allowlist_text := "pod labels and annotations; the template's containers' resources and env entries with a literal value; priorityClassName, topologySpreadConstraints, schedulerName"

extra_patch_fields contains f if {
	some f in list_field(get_field(input, "parameters", {}), "allowedPatchFields")
	is_string(f)
}

extra_patch_fields contains f if {
	some f in list_field(get_field(input, "context", {}), "allowedPatchFields")
	is_string(f)
}

patch_field_allowed(key) if key in default_patch_fields

patch_field_allowed(key) if {
	some f in extra_patch_fields
	_covers(f, key)
}

_covers(f, key) if f == key

_covers(f, key) if startswith(key, concat("", [f, "."]))

_covers(f, key) if startswith(key, concat("", [f, "["]))

# --- reserved label and annotation keys -------------------------------------------

reserved_patch_keys := {
	"apps.kruise.io/matched-workloadspread",
	"controller.kubernetes.io/pod-deletion-cost",
	"pod-template-hash",
	"controller-revision-hash",
	"controller-uid",
	"job-name",
	"statefulset.kubernetes.io/pod-name",
	"apps.kubernetes.io/pod-index",
	"apps.kruise.io/cloneset-instance-id",
}

reserved_patch_prefixes := {
	"spreadgate.dev",
	"batch.kubernetes.io",
	"container.apparmor.security.beta.kubernetes.io",
	"seccomp.security.alpha.kubernetes.io",
	"container.seccomp.security.alpha.kubernetes.io",
}

# Keys other admission controllers act on: service-mesh injection (a pod taken out of the
# mesh, or given another proxy configuration) and secret-injection agents (a pod given
# another Vault role or secret). Reserved with every subdomain, as labels and annotations
# (Istio reads `sidecar.istio.io/inject` in both). docs/operations.md lists them.
admission_controller_domains := {
	"istio.io",
	"linkerd.io",
	"kuma.io",
	"openservicemesh.io",
	"appmesh.k8s.aws",
	"hashicorp.com",
	"banzaicloud.io",
	"conjur.org",
	"secrets-store.csi.k8s.io",
	"injector.tumblr.com",
	"dapr.io",
	"opentelemetry.io",
}

reserved_patch_key(k) if k in reserved_patch_keys

reserved_patch_key(k) if _key_prefix(k) in reserved_patch_prefixes

reserved_patch_key(k) if endswith(_key_prefix(k), ".spreadgate.dev")

reserved_patch_key(k) if _admission_controller_key(k)

_admission_controller_key(k) if lower(_key_prefix(k)) in admission_controller_domains

_admission_controller_key(k) if {
	some d in admission_controller_domains
	endswith(lower(_key_prefix(k)), concat("", [".", d]))
}

_key_prefix(k) := split(k, "/")[0] if {
	is_string(k)
	contains(k, "/")
}

# --- the target workload, when known -----------------------------------------------

target_workload := w if {
	w := input.context.workload
	is_object(w)
} else := w if {
	w := data.inventory.namespace[namespace][target_ref.apiVersion][target_ref.kind][target_ref.name]
	is_object(w)
}

template_pod_spec := map_field(map_field(map_field(target_workload, "spec"), "template"), "spec")

# Container names are checked only when the workload has a pod template to check them against.
template_known if is_object(target_workload.spec.template.spec)

template_container_names(k) := {n |
	some c in list_field(template_pod_spec, k)
	n := get_field(c, "name", "")
}

_selector := map_field(map_field(target_workload, "spec"), "selector")

_filter_selector := map_field(map_field(spec, "targetFilter"), "selector")

# Labels the workload's selector or the spread's targetFilter select on: a pod
# patched out of its owner's selector is orphaned and replaced, endlessly.
protected_label_keys contains k if some k, _ in map_field(_selector, "matchLabels")

protected_label_keys contains k if some k, _ in map_field(_filter_selector, "matchLabels")

protected_label_keys contains k if {
	some e in list_field(_selector, "matchExpressions")
	k := get_field(e, "key", "")
}

protected_label_keys contains k if {
	some e in list_field(_filter_selector, "matchExpressions")
	k := get_field(e, "key", "")
}

# --- what a patch touches -------------------------------------------------------------

_patch_map(s, m) := map_field(map_field(map_field(s, "patch"), "metadata"), m)

_patch_list(s, k) := list_field(map_field(map_field(s, "patch"), "spec"), k)

# Whether `p` may hold a directive key: its JSON text has a string starting with "$". One
# native pass over the patch that spares almost every patch the walk below (a value starting
# with "$" makes it walk in vain, never miss a key).
may_hold_directive(p) if contains(json.marshal(p), "\"$")

# A strategic-merge directive key: "$patch", "$retainKeys", "$setElementOrder/...", ...
is_directive(k) if {
	is_string(k)
	startswith(k, "$")
}

# Every field patch `p` sets, as {"at": concrete path, "key": allowlist path}: the
# concrete path names list positions (spec.containers[0].image), the allowlist path
# does not (spec.containers[].image). Directive keys are left to is_directive.
touched_paths(p) := (
	{t |
		some k, _ in p
		not k in {"metadata", "spec"}
		not is_directive(k)
		t := {"at": k, "key": k}
	} |
	{t |
		some k, v in p
		k in {"metadata", "spec"}
		not is_object(v)
		t := {"at": k, "key": k}
	} |
	{t |
		some k, _ in map_field(p, "metadata")
		not k in {"labels", "annotations"}
		not is_directive(k)
		f := sprintf("metadata.%s", [k])
		t := {"at": f, "key": f}
	} |
	{t |
		some k, v in map_field(p, "spec")
		not is_directive(k)
		not _container_list(k, v)
		f := sprintf("spec.%s", [k])
		t := {"at": f, "key": f}
	} |
	{t |
		some k in container_lists
		some j, c in list_field(map_field(p, "spec"), k)
		not is_object(c)
		t := {"at": sprintf("spec.%s[%d]", [k, j]), "key": sprintf("spec.%s[]", [k])}
	} |
	{t |
		some k in container_lists
		some j, c in list_field(map_field(p, "spec"), k)
		is_object(c)
		some f, _ in c
		f != "name"
		not is_directive(f)
		t := {"at": sprintf("spec.%s[%d].%s", [k, j, f]), "key": sprintf("spec.%s[].%s", [k, f])}
	} |
	{t |
		# An env entry that reads a Secret or ConfigMap (`valueFrom`) is a field of its own.
		some k in container_lists
		some j, c in list_field(map_field(p, "spec"), k)
		some e, entry in list_field(c, "env")
		some f, _ in entry
		not f in {"name", "value"}
		not is_directive(f)
		t := {"at": sprintf("spec.%s[%d].env[%d].%s", [k, j, e, f]), "key": sprintf("spec.%s[].env[].%s", [k, f])}
	}
)

_container_list(k, v) if {
	k in container_lists
	is_array(v)
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.%s", [subset_path(i), t.at]), "msg": sprintf("Forbidden: %s is not on the subset patch allowlist (%s); operators widen it with --allow-patch-field or the Gatekeeper parameter allowedPatchFields", [t.key, default_allowlist_text])} if {
	some i, s in subsets
	p := get_field(s, "patch", null)
	is_object(p)
	some t in touched_paths(p)
	not patch_field_allowed(t.key)
	not _new_container_field(s, t)
}

# A field of a container the patch adds is reported once, as the added container (below).
_new_container_field(s, t) if {
	template_known
	some k in container_lists
	some j, c in _patch_list(s, k)
	non_empty_string(get_field(c, "name", ""))
	not c.name in template_container_names(k)
	not patch_field_allowed(sprintf("spec.%s[]", [k]))
	startswith(t.at, sprintf("spec.%s[%d].", [k, j]))
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.%s", [subset_path(i), render_path(array.concat(path, [k]))]), "msg": sprintf("Forbidden: strategic-merge directive %s may not be used in a subset patch (it can delete, replace or reorder fields the allowlist protects)", [k])} if {
	some i, s in subsets
	p := get_field(s, "patch", null)
	is_object(p)
	may_hold_directive(p)
	walk(p, [path, v])
	is_object(v)
	some k, _ in v
	is_directive(k)
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.metadata.%s", [subset_path(i), m]), "msg": sprintf("Forbidden: metadata.%s must be a map of keys to set; %v would replace or delete every pod %s", [m, v, m])} if {
	some i, s in subsets
	some m, v in map_field(map_field(s, "patch"), "metadata")
	m in {"labels", "annotations"}
	not is_object(v)
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.metadata.%s[%s]", [subset_path(i), m, k]), "msg": sprintf("Forbidden: %s is a reserved key (Spreadgate's or Kruise's bookkeeping, a controller-managed label, a security setting, or a key a service mesh or secret injector acts on); a subset patch may not set it", [k])} if {
	some i, s in subsets
	some m in ["labels", "annotations"]
	some k, _ in _patch_map(s, m)
	reserved_patch_key(k)
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.metadata.labels[%s]", [subset_path(i), k]), "msg": sprintf("Forbidden: %s is a label the workload's selector or the spread's targetFilter selects on; a patched pod would leave its owner (or the spread) and be replaced", [k])} if {
	some i, s in subsets
	some k, _ in _patch_map(s, "labels")
	k in protected_label_keys
	not reserved_patch_key(k)
}

patch_errors contains {"subset": i, "field": sprintf("%s.patch.spec.%s[%d]", [subset_path(i), k, j]), "msg": sprintf("Forbidden: adds %s entry \"%v\", which the pod template does not have; a subset patch may only change the template's own containers (allow with spec.%s[])", [k, c.name, k])} if {
	template_known
	some i, s in subsets
	some k in container_lists
	some j, c in _patch_list(s, k)
	non_empty_string(get_field(c, "name", ""))
	not c.name in template_container_names(k)
	not patch_field_allowed(sprintf("spec.%s[]", [k]))
}

errors contains {"field": e.field, "msg": e.msg} if {
	some e in patch_errors
	not _patch_kept(e.subset)
}

# Ratcheting: an UPDATE that leaves a subset's patch as stored (same subset name, same
# patch) is not refused for it, so a spread stored before the allowlist can still be
# edited (or have a finalizer removed); the mutating webhook leaves such a patch out of
# pods all the same. A patch that changes is checked in full.
_patch_kept(i) if {
	operation == "UPDATE"
	old := _old_subset_by_name[subsets[i].name]
	get_field(old, "patch", null) == subsets[i].patch
}

# The stored subsets by name (the first of a duplicated name): one lookup per refused
# patch instead of a scan of every stored subset.
_old_subset_by_name := {name: old_subsets[i] | some name, i in first_index_by_name(old_subsets)} if {
	old_subsets := list_field(map_field(get_field(review, "oldObject", {}), "spec"), "subsets")
}

# The patch rules alone, with the subset index: what the mutating webhook
# evaluates once per spread generation before it applies a subset's patch.
patch_violation contains {"msg": sprintf("%s: %s", [e.field, e.msg]), "details": {"field": e.field, "reason": e.msg, "subset": e.subset}} if {
	is_workloadspread
	some e in patch_errors
}

# At admission a stored patch must also pass validation's own checks of its shape
# (subsets.rego, rule 11: label keys and values, annotation values, container names,
# quantities): a spread stored without the validating webhook is otherwise applied as is,
# and the API server then rejects every pod (issue 24). Any validation error under a
# subset's patch counts.
patch_violation contains {"msg": sprintf("%s: %s", [e.field, e.msg]), "details": {"field": e.field, "reason": e.msg, "subset": i}} if {
	is_workloadspread
	some e in errors
	some i, _ in subsets
	_under_patch(e.field, i)
}

_under_patch(field, i) if field == sprintf("%s.patch", [subset_path(i)])

_under_patch(field, i) if startswith(field, sprintf("%s.patch.", [subset_path(i)]))

# A walk() path as a field path: ["spec", "containers", 0, "$patch"] -> "spec.containers[0].$patch"
render_path(path) := concat("", [seg |
	some n, e in path
	seg := _segment(n, e)
])

_segment(n, e) := sprintf("[%v]", [e]) if is_number(e)

else := e if n == 0

else := concat("", [".", e])
