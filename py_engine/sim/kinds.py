"""Per-kind defaulting, create-time preparation and validation.

The emulator applies the subset of Kubernetes defaulting and validation that
clients visibly depend on: pod and workload defaults that controllers read
(`replicas`, `terminationGracePeriodSeconds`, strategies), Job selector
generation, namespace labels, and the 422s that catch real bugs (missing
containers, selectors that do not match the template, immutable selectors and
pod specs). Custom objects are treated as kube-apiserver treats them, in its
order: unknown fields pruned (`py_engine.sim.pruning`), defaults filled
(`py_engine.sim.defaulting`), then validated against the version's structural
schema (`py_engine.sim.structural`).

Causes are `(field, reason, message)` triples, rendered by `errors.invalid`.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from py_engine.semantics.labels import (
    SelectorError,
    selector_from_label_selector,
    validate_label_key,
    validate_label_value,
)
from py_engine.sim.crd_columns import printer_column_causes
from py_engine.sim.defaulting import default_custom_object
from py_engine.sim.interface import JSON
from py_engine.sim.pruning import prune_custom_object
from py_engine.sim.rbac_validation import rbac_causes
from py_engine.sim.resources import ResourceDef
from py_engine.sim.structural import validate_custom_object

Cause = tuple[str, str, str]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
_WORKLOADS = {"Deployment", "ReplicaSet", "StatefulSet", "Job"}


# ------------------------------------------------------------------ defaults


def _default_pod_spec(spec: JSON) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            image = str(c.get("image", ""))
            tag = image.rsplit("/", 1)[-1]
            latest = ":" not in tag or tag.endswith(":latest")
            c.setdefault("imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})


def apply_defaults(rd: ResourceDef, obj: JSON) -> None:
    """Fill defaults in place (on a fresh, caller-owned object); a custom object is
    pruned against its version's schema (`py_engine.sim.pruning`), then defaulted from it
    (`py_engine.sim.defaulting`)."""
    kind = rd.kind
    meta = obj.setdefault("metadata", {})
    if rd.crd:
        prune_custom_object(obj, rd.schema)
        default_custom_object(obj, rd.schema)
    if kind == "Pod":
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            _default_pod_spec(spec)
    elif kind in _WORKLOADS and not rd.crd:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        tmpl = spec.get("template")
        if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
            if kind == "Job":
                tmpl["spec"].setdefault("terminationGracePeriodSeconds", 30)
                saved = tmpl["spec"].get("restartPolicy")
                _default_pod_spec(tmpl["spec"])
                if saved is None:  # Jobs must choose Never/OnFailure explicitly
                    del tmpl["spec"]["restartPolicy"]
            else:
                _default_pod_spec(tmpl["spec"])
        if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
            spec.setdefault("replicas", 1)
        if kind == "Deployment":
            # Field by field, as SetDefaults_Deployment does: `kubectl create deployment` sends an
            # empty `strategy: {}`, which must still read RollingUpdate 25%/25%.
            strategy = spec.get("strategy")
            if not isinstance(strategy, dict):
                strategy = spec["strategy"] = {}
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.get("rollingUpdate")
                if not isinstance(rolling, dict):
                    rolling = strategy["rollingUpdate"] = {}
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
        elif kind == "StatefulSet":
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault(
                "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"}
            )
        elif kind == "Job":
            if spec.get("completions") is None and spec.get("parallelism") is None:
                spec["completions"] = 1
            spec.setdefault("parallelism", 1)
            spec.setdefault("backoffLimit", 6)
            spec.setdefault("completionMode", "NonIndexed")
            spec.setdefault("suspend", False)
    elif kind == "Namespace":
        labels = meta.setdefault("labels", {})
        if isinstance(labels, dict) and meta.get("name"):
            labels["kubernetes.io/metadata.name"] = meta["name"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])


def prepare_create(rd: ResourceDef, obj: JSON) -> None:
    """Create-time changes that need the uid and name (after mutating admission)."""
    if rd.has_status and rd.reset_status_on_create:
        obj.pop("status", None)
        if rd.kind == "Pod":
            obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj.get("spec") or {})}
        elif rd.kind == "Namespace":
            obj["status"] = {"phase": "Active"}
        elif not rd.crd:
            obj["status"] = {}
    if rd.kind == "Job" and not rd.crd:
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("manualSelector"):
            uid = obj["metadata"]["uid"]
            name = obj["metadata"]["name"]
            spec["selector"] = {"matchLabels": {JOB_UID_LABEL: uid}}
            tmpl = spec.setdefault("template", {})
            if isinstance(tmpl, dict):
                labels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
                labels.update(
                    {
                        JOB_UID_LABEL: uid,
                        "controller-uid": uid,
                        "batch.kubernetes.io/job-name": name,
                        "job-name": name,
                    }
                )


def rename(rd: ResourceDef, obj: JSON, name: str) -> None:
    """Give a prepared object another (generated) name, fixing name-derived fields."""
    obj["metadata"]["name"] = name
    if rd.kind == "Job" and not rd.crd:
        labels = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            for key in ("batch.kubernetes.io/job-name", "job-name"):
                if key in labels:
                    labels[key] = name


def _non_negative(path: str, value: Any) -> list[Cause]:
    """A count field must hold a whole number of at least 0 (kube's ValidateNonnegativeField)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return []
    return [(path, "FieldValueInvalid", f"Invalid value: {value!r}: must be greater than or equal to 0")]


def _qos_class(spec: JSON) -> str:
    reqs = [
        ((c.get("resources") or {}).get("requests") or {}, (c.get("resources") or {}).get("limits") or {})
        for c in spec.get("containers") or []
        if isinstance(c, dict)
    ]
    if not any(r or lim for r, lim in reqs):
        return "BestEffort"
    guaranteed = all(
        lim.get("cpu") and lim.get("memory") and all(r.get(k, lim[k]) == lim[k] for k in ("cpu", "memory"))
        for r, lim in reqs
    )
    return "Guaranteed" if guaranteed else "Burstable"


# ---------------------------------------------------------------- validation


def validate_name(rd: ResourceDef, name: str) -> list[Cause]:
    if rd.kind == "CustomResourceDefinition":
        return []
    if rd.kind == "Namespace":
        bad = len(name) > 63 or not _DNS_LABEL.match(name)
        rule = (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character"
        )
    elif rd.group == "rbac.authorization.k8s.io":  # RBAC names are path segments (`system:discovery`)
        bad = name in (".", "..") or "/" in name or "%" in name
        rule = "may not be '.' or '..' and may not contain '/' or '%'"
    else:
        bad = len(name) > 253 or not _DNS_SUBDOMAIN.match(name)
        rule = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return [("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {rule}')] if bad else []


def _validate_meta(meta: JSON) -> list[Cause]:
    causes: list[Cause] = []
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        return [("metadata.labels", "FieldValueInvalid", "Invalid value: must be a map of strings")]
    for k, v in labels.items():
        try:
            validate_label_key(k)
        except SelectorError as exc:
            causes.append(("metadata.labels", "FieldValueInvalid", f'Invalid value: "{k}": {exc}'))
        if not isinstance(v, str):
            causes.append((f"metadata.labels[{k}]", "FieldValueInvalid", "Invalid value: must be a string"))
            continue
        try:
            validate_label_value(v)
        except SelectorError as exc:
            causes.append(("metadata.labels", "FieldValueInvalid", f'Invalid value: "{v}": {exc}'))
    ann = meta.get("annotations") or {}
    if not isinstance(ann, dict) or not all(isinstance(v, str) for v in ann.values()):
        causes.append(
            ("metadata.annotations", "FieldValueInvalid", "Invalid value: must be a map of strings")
        )
    fin = meta.get("finalizers") or []
    if not isinstance(fin, list) or not all(isinstance(f, str) for f in fin):
        causes.append(
            ("metadata.finalizers", "FieldValueInvalid", "Invalid value: must be a list of strings")
        )
    return causes


def _validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    if not isinstance(spec, dict):
        return [(path, "FieldValueRequired", "Required value")]
    causes: list[Cause] = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        causes.append((f"{path}.containers", "FieldValueRequired", "Required value"))
        return causes
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            cpath = f"{path}.{key}[{i}]"
            if not isinstance(c, dict):
                causes.append((cpath, "FieldValueInvalid", "Invalid value: must be an object"))
                continue
            name = c.get("name")
            if not isinstance(name, str) or not name:
                causes.append((f"{cpath}.name", "FieldValueRequired", "Required value"))
            elif name in seen:
                causes.append((f"{cpath}.name", "FieldValueDuplicate", f'Duplicate value: "{name}"'))
            else:
                seen.add(name)
            if not c.get("image"):
                causes.append((f"{cpath}.image", "FieldValueRequired", "Required value"))
    if "nodeName" in spec and not isinstance(spec["nodeName"], str):
        causes.append((f"{path}.nodeName", "FieldValueInvalid", "Invalid value: must be a string"))
    return causes


_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


def _pod_spec_update_causes(new: JSON, old: JSON) -> list[Cause]:
    a = copy.deepcopy(new.get("spec") or {})
    b = copy.deepcopy(old.get("spec") or {})
    for s in (a, b):
        for k in _POD_MUTABLE:
            s.pop(k, None)
        for key in ("containers", "initContainers"):
            for c in s.get(key) or []:
                if isinstance(c, dict):
                    c.pop("image", None)
    if a != b:
        return [
            (
                "spec",
                "FieldValueForbidden",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
                "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only "
                "additions to existing tolerations), `spec.terminationGracePeriodSeconds` "
                "(allow it to be set to 1 if it was previously negative)",
            )
        ]
    return []


def validate(rd: ResourceDef, obj: JSON, old: JSON | None) -> list[Cause]:
    """Causes for a 422, empty if the object is acceptable."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [("metadata", "FieldValueRequired", "Required value")]
    causes = _validate_meta(meta)
    kind = rd.kind
    if rd.crd:
        return causes + validate_custom_object(obj, rd.schema, old)
    if kind == "CustomResourceDefinition":
        return causes + printer_column_causes(obj)
    spec = obj.get("spec")
    if kind == "Pod":
        causes += _validate_pod_spec(spec, "spec")
        if old is not None and not causes:
            causes += _pod_spec_update_causes(obj, old)
    elif kind in _WORKLOADS:
        if not isinstance(spec, dict):
            return [*causes, ("spec", "FieldValueRequired", "Required value")]
        tmpl = spec.get("template")
        if not isinstance(tmpl, dict):
            return [*causes, ("spec.template", "FieldValueRequired", "Required value")]
        causes += _validate_pod_spec(tmpl.get("spec"), "spec.template.spec")
        causes += _non_negative("spec.replicas", spec.get("replicas", 0))
        if kind == "Job":
            rp = (tmpl.get("spec") or {}).get("restartPolicy") if isinstance(tmpl.get("spec"), dict) else None
            if rp not in ("Never", "OnFailure"):
                causes.append(
                    (
                        "spec.template.spec.restartPolicy",
                        "FieldValueNotSupported",
                        f'Unsupported value: "{rp or "Always"}": supported values: "OnFailure", "Never"',
                    )
                )
        sel = spec.get("selector")
        if sel is None or sel == {}:
            causes.append(("spec.selector", "FieldValueRequired", "Required value"))
        else:
            try:
                compiled = selector_from_label_selector(sel)
            except SelectorError as exc:
                causes.append(("spec.selector", "FieldValueInvalid", f"Invalid value: {exc}"))
            else:
                tlabels = (tmpl.get("metadata") or {}).get("labels") or {}
                if compiled.empty():
                    causes.append(
                        (
                            "spec.selector",
                            "FieldValueInvalid",
                            "Invalid value: empty selector is invalid for deployment",
                        )
                    )
                elif not compiled.matches(tlabels):
                    causes.append(
                        (
                            "spec.template.metadata.labels",
                            "FieldValueInvalid",
                            f"Invalid value: {tlabels!r}: `selector` does not match template `labels`",
                        )
                    )
        if old is not None and kind != "Job" and (old.get("spec") or {}).get("selector") != sel:
            causes.append(
                ("spec.selector", "FieldValueInvalid", f"Invalid value: {sel!r}: field is immutable")
            )
    elif kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        causes += _validate_webhooks(obj)
    elif kind == "ControllerRevision":
        causes += _non_negative("revision", obj.get("revision", 0))
        if old is not None and obj.get("data") != old.get("data"):
            causes.append(("data", "FieldValueInvalid", "Invalid value: field is immutable"))
    elif kind == "CustomResourceDefinition":
        causes += _validate_crd(obj)
    else:
        causes += rbac_causes(kind, obj, old)
    return causes


def _validate_webhooks(obj: JSON) -> list[Cause]:
    causes: list[Cause] = []
    hooks = obj.get("webhooks") or []
    if not isinstance(hooks, list):
        return [("webhooks", "FieldValueInvalid", "Invalid value: must be a list")]
    names: set[str] = set()
    for i, wh in enumerate(hooks):
        p = f"webhooks[{i}]"
        if not isinstance(wh, dict):
            causes.append((p, "FieldValueInvalid", "Invalid value: must be an object"))
            continue
        name = wh.get("name")
        if not isinstance(name, str) or "." not in name:
            causes.append(
                (
                    f"{p}.name",
                    "FieldValueInvalid",
                    f"Invalid value: {name!r}: "
                    "should be a domain with at least three segments separated by dots",
                )
            )
        elif name in names:
            causes.append((f"{p}.name", "FieldValueDuplicate", f'Duplicate value: "{name}"'))
        else:
            names.add(name)
        cc = wh.get("clientConfig") or {}
        if bool(cc.get("url")) == bool(cc.get("service")):
            causes.append(
                (
                    f"{p}.clientConfig",
                    "FieldValueRequired",
                    "Required value: exactly one of url or service is required",
                )
            )
        if wh.get("sideEffects") not in ("None", "NoneOnDryRun", "Some", "Unknown"):
            causes.append(
                (
                    f"{p}.sideEffects",
                    "FieldValueNotSupported",
                    f'Unsupported value: {wh.get("sideEffects")!r}: supported values: "None", "NoneOnDryRun"',
                )
            )
        versions = wh.get("admissionReviewVersions") or []
        if "v1" not in versions:
            causes.append(
                (
                    f"{p}.admissionReviewVersions",
                    "FieldValueInvalid",
                    "Invalid value: must include at least one of v1",
                )
            )
        fp = wh.get("failurePolicy", "Fail")
        if fp not in ("Fail", "Ignore"):
            causes.append((f"{p}.failurePolicy", "FieldValueNotSupported", f"Unsupported value: {fp!r}"))
        for key in ("namespaceSelector", "objectSelector"):
            if wh.get(key) is not None:
                try:
                    selector_from_label_selector(wh[key])
                except SelectorError as exc:
                    causes.append((f"{p}.{key}", "FieldValueInvalid", f"Invalid value: {exc}"))
    return causes


def _validate_crd(obj: JSON) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [("spec", "FieldValueRequired", "Required value")]
    names = spec.get("names") or {}
    group = spec.get("group")
    causes: list[Cause] = []
    if not group or not isinstance(group, str):
        causes.append(("spec.group", "FieldValueRequired", "Required value"))
    plural = names.get("plural")
    if not plural or not names.get("kind"):
        causes.append(("spec.names", "FieldValueRequired", "Required value: plural and kind"))
    expected = f"{plural}.{group}"
    if obj["metadata"].get("name") != expected:
        causes.append(
            (
                "metadata.name",
                "FieldValueInvalid",
                f'Invalid value: "{obj["metadata"].get("name")}": must be spec.names.plural+"."+spec.group',
            )
        )
    if spec.get("scope", "Namespaced") not in ("Namespaced", "Cluster"):
        causes.append(("spec.scope", "FieldValueNotSupported", "Unsupported value"))
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        causes.append(("spec.versions", "FieldValueRequired", "Required value"))
    elif sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        causes.append(
            (
                "spec.versions",
                "FieldValueInvalid",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
    return causes
