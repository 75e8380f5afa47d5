"""Wrapping the Rego validation policy into a Gatekeeper ConstraintTemplate and Constraint.

Gatekeeper evaluates the same `violation` rule the webhook and conftest use:
its input is `input.review.object` (the admission request), parameters arrive
as `input.parameters` (here: the allowed custom workload kinds and the fields
added to the subset patch allowlist), and the "one spread per workload" rule
reads `data.inventory` when the WorkloadSpreads are synced into Gatekeeper's
cache (the patch rules read the target workload's selector and template from
it too, when the workload kinds are synced). The policy files of one package are joined
into the single module a template carries; Rego v1 syntax is declared through
`code[].source.version` (Gatekeeper 3.19 and later).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from py_engine.model.constants import GROUP, KIND, KRUISE_GROUP
from py_engine.policy.sources import PolicySource

TEMPLATE_NAME = "spreadgateworkloadspread"
CONSTRAINT_KIND = "SpreadgateWorkloadSpread"
CONSTRAINT_NAME = "workloadspreads-are-valid"
TEMPLATE_VERSION = "1.0.0"

_PACKAGE_LINE = re.compile(r"^package\s+\S+\s*$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^import\s+rego\.v1\s*$", re.MULTILINE)


def rego_module(
    sources: Sequence[PolicySource], folder: str, header: str, imports: re.Pattern[str], nothing: str
) -> str:
    """`header`, then every non-test file of `folder` in path order without its `package` line
    and the import lines `imports` matches (the header declares what the module needs), as one
    module. Spaces instead of tabs and no trailing blanks, so YAML holds it as a readable `|`
    block. `nothing` is the error when the folder has no policy file."""
    bodies = []
    for source in sorted(sources, key=lambda s: s.path):
        if source.is_test or not source.path.startswith(folder):
            continue
        body = imports.sub("", _PACKAGE_LINE.sub("", source.text, count=1)).strip("\n")
        bodies.append(f"# --- {source.path} ---\n{body}")
    if not bodies:
        raise ValueError(nothing)
    module = header + "\n\n".join(bodies) + "\n"
    return "\n".join(line.replace("\t", "    ").rstrip() for line in module.splitlines()) + "\n"


def joined_module(sources: Sequence[PolicySource], package: str = "spreadgate.validation") -> str:
    """One Rego module holding every non-test file of the validation package, in path order."""
    header = f"package {package}\n\nimport rego.v1\n\n"
    return rego_module(sources, "validation/", header, _IMPORT_LINE, "no validation policy files found")


def template_object(
    name: str, described: tuple[str, str], kind: str, parameters: dict[str, Any], source: dict[str, Any]
) -> dict[str, Any]:
    """A ConstraintTemplate: its title and description (`described`), the Constraint `kind` it
    defines with the schema of its `parameters`, and the Rego `source` (module, libraries)."""
    title, description = described
    annotations = {
        "metadata.gatekeeper.sh/title": title,
        "metadata.gatekeeper.sh/version": TEMPLATE_VERSION,
        "description": description,
    }
    return {
        "apiVersion": "templates.gatekeeper.sh/v1",
        "kind": "ConstraintTemplate",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "crd": {
                "spec": {
                    "names": {"kind": kind},
                    "validation": {"openAPIV3Schema": {"type": "object", "properties": parameters}},
                }
            },
            "targets": [
                {
                    "target": "admission.k8s.gatekeeper.sh",
                    "code": [{"engine": "Rego", "source": {"version": "v1", **source}}],
                }
            ],
        },
    }


def constraint_object(kind: str, name: str, target_kind: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A Constraint of `kind` denying every `target_kind` (spreadgate.dev and apps.kruise.io)
    that breaks the template's rules, with the template's `parameters`."""
    return {
        "apiVersion": "constraints.gatekeeper.sh/v1beta1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "enforcementAction": "deny",
            "match": {"kinds": [{"apiGroups": [GROUP, KRUISE_GROUP], "kinds": [target_kind]}]},
            "parameters": parameters,
        },
    }


def constraint_template(sources: Sequence[PolicySource]) -> dict[str, Any]:
    """The ConstraintTemplate carrying the validation policy."""
    described = (
        "Valid Spreadgate WorkloadSpreads",
        (
            "Rejects WorkloadSpreads (spreadgate.dev or apps.kruise.io) that break the spec rules: "
            "subset names, node selector terms, tolerations, maxReplicas types and sums, Adaptive "
            "settings, target kinds and namespace, one spread per workload, the subset patch "
            "allowlist (widened by the parameter allowedPatchFields). Generated from "
            "policies/validation by `spreadgate gatekeeper`; do not edit by hand."
        ),
    )
    parameters = {
        "customWorkloads": {
            "type": "array",
            "description": "Custom workload kinds a WorkloadSpread may target.",
            "items": {
                "type": "object",
                "properties": {"group": {"type": "string"}, "kind": {"type": "string"}},
            },
        },
        "allowedPatchFields": {
            "type": "array",
            "description": (
                "Pod fields a subset patch may set beyond the default "
                "allowlist, as paths such as spec.nodeSelector or "
                "spec.containers[].volumeMounts (an entry allows "
                "everything below it)."
            ),
            "items": {"type": "string"},
        },
    }
    source = {"rego": joined_module(sources)}
    return template_object(TEMPLATE_NAME, described, CONSTRAINT_KIND, parameters, source)


def constraint(
    custom_workloads: Sequence[dict[str, str]] = (), allowed_patch_fields: Sequence[str] = ()
) -> dict[str, Any]:
    """The Constraint applying the template to every WorkloadSpread."""
    parameters = {"customWorkloads": list(custom_workloads), "allowedPatchFields": list(allowed_patch_fields)}
    return constraint_object(CONSTRAINT_KIND, CONSTRAINT_NAME, KIND, parameters)


class _LiteralDumper(yaml.SafeDumper):
    """Writes multi-line strings (the Rego source) as readable `|` blocks."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _str_presenter)


def to_yaml(obj: dict[str, Any]) -> str:
    header = "# Generated by `spreadgate gatekeeper` from policies/validation; do not edit.\n"
    return header + yaml.dump(obj, Dumper=_LiteralDumper, sort_keys=False, width=120)
