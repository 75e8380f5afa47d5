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


def joined_module(sources: Sequence[PolicySource], package: str = "spreadgate.validation") -> str:
    """One Rego module holding every non-test file of the validation package, in path order."""
    bodies = []
    for source in sorted(sources, key=lambda s: s.path):
        if source.is_test or not source.path.startswith("validation/"):
            continue
        body = _IMPORT_LINE.sub("", _PACKAGE_LINE.sub("", source.text, count=1), count=1).strip("\n")
        bodies.append(f"# --- {source.path} ---\n{body}")
    if not bodies:
        raise ValueError("no validation policy files found")
    module = f"package {package}\n\nimport rego.v1\n\n" + "\n\n".join(bodies) + "\n"
    # Spaces instead of tabs and no trailing blanks, so YAML can hold it as a readable `|` block.
    return "\n".join(line.replace("\t", "    ").rstrip() for line in module.splitlines()) + "\n"


def constraint_template(sources: Sequence[PolicySource]) -> dict[str, Any]:
    """The ConstraintTemplate carrying the validation policy."""
    return {
        "apiVersion": "templates.gatekeeper.sh/v1",
        "kind": "ConstraintTemplate",
        "metadata": {
            "name": TEMPLATE_NAME,
            "annotations": {
                "metadata.gatekeeper.sh/title": "Valid Spreadgate WorkloadSpreads",
                "metadata.gatekeeper.sh/version": TEMPLATE_VERSION,
                "description": (
                    "Rejects WorkloadSpreads (spreadgate.dev or apps.kruise.io) that break the spec rules: "
                    "subset names, node selector terms, tolerations, maxReplicas types and sums, Adaptive "
                    "settings, target kinds and namespace, one spread per workload, the subset patch "
                    "allowlist (widened by the parameter allowedPatchFields). Generated from "
                    "policies/validation by `spreadgate gatekeeper`; do not edit by hand."
                ),
            },
        },
        "spec": {
            "crd": {
                "spec": {
                    "names": {"kind": CONSTRAINT_KIND},
                    "validation": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "customWorkloads": {
                                    "type": "array",
                                    "description": "Custom workload kinds a WorkloadSpread may target.",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "group": {"type": "string"},
                                            "kind": {"type": "string"},
                                        },
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
                            },
                        }
                    },
                }
            },
            "targets": [
                {
                    "target": "admission.k8s.gatekeeper.sh",
                    "code": [{"engine": "Rego", "source": {"version": "v1", "rego": joined_module(sources)}}],
                }
            ],
        },
    }


def constraint(
    custom_workloads: Sequence[dict[str, str]] = (), allowed_patch_fields: Sequence[str] = ()
) -> dict[str, Any]:
    """The Constraint applying the template to every WorkloadSpread."""
    return {
        "apiVersion": "constraints.gatekeeper.sh/v1beta1",
        "kind": CONSTRAINT_KIND,
        "metadata": {"name": CONSTRAINT_NAME},
        "spec": {
            "enforcementAction": "deny",
            "match": {"kinds": [{"apiGroups": [GROUP, KRUISE_GROUP], "kinds": [KIND]}]},
            "parameters": {
                "customWorkloads": list(custom_workloads),
                "allowedPatchFields": list(allowed_patch_fields),
            },
        },
    }


class _LiteralDumper(yaml.SafeDumper):
    """Writes multi-line strings (the Rego source) as readable `|` blocks."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _str_presenter)


def to_yaml(obj: dict[str, Any]) -> str:
    header = "# Generated by `spreadgate gatekeeper` from policies/validation; do not edit.\n"
    return header + yaml.dump(obj, Dumper=_LiteralDumper, sort_keys=False, width=120)
