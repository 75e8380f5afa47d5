"""The UnitedDeployment policy as a second Gatekeeper ConstraintTemplate and Constraint.

Gatekeeper evaluates the same `violation` rule of `policies/uniteddeployment/`
that the webhook and `spreadgate validate` use. That policy calls the shared
helpers of the WorkloadSpread validation package (selector and name syntax,
node selector terms, tolerations, the subset patch allowlist); Gatekeeper loads
such helpers as template libraries, whose packages must start with `lib.`. So
the validation package travels as the library `lib.spreadgate.validation`, and
the UnitedDeployment module imports it under that name. Operators widen the
patch allowlist with the Constraint parameter `allowedPatchFields`, as for
WorkloadSpreads (docs/uniteddeployment-validation.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from py_engine.model.constants import GROUP, KRUISE_GROUP
from py_engine.policy.sources import PolicySource
from py_engine.validation.gatekeeper import TEMPLATE_VERSION, joined_module, to_yaml

UD_TEMPLATE_NAME = "spreadgateuniteddeployment"
UD_CONSTRAINT_KIND = "SpreadgateUnitedDeployment"
UD_CONSTRAINT_NAME = "uniteddeployments-are-valid"
UD_PACKAGE = "spreadgate.uniteddeployment"
LIB_PACKAGE = "lib.spreadgate.validation"
UD_TEMPLATE_FILE = "uniteddeployment-constraint-template.yaml"
UD_CONSTRAINT_FILE = "uniteddeployment-constraint.yaml"

_PACKAGE_LINE = re.compile(r"^package\s+\S+\s*$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^import\s+\S+(\s+as\s+\S+)?\s*$", re.MULTILINE)
_WS_IMPORT = "import data.spreadgate.validation as ws"


def ud_module(sources: Sequence[PolicySource]) -> str:
    """One Rego module holding every non-test file of the UnitedDeployment package, in path order,
    importing the validation helpers from the template library."""
    bodies = []
    for source in sorted(sources, key=lambda s: s.path):
        if source.is_test or not source.path.startswith("uniteddeployment/"):
            continue
        body = _IMPORT_LINE.sub("", _PACKAGE_LINE.sub("", source.text, count=1)).strip("\n")
        bodies.append(f"# --- {source.path} ---\n{body}")
    if not bodies:
        raise ValueError("no UnitedDeployment policy files found")
    header = f"package {UD_PACKAGE}\n\nimport data.{LIB_PACKAGE} as ws\nimport rego.v1\n\n"
    module = header + "\n\n".join(bodies) + "\n"
    return "\n".join(line.replace("\t", "    ").rstrip() for line in module.splitlines()) + "\n"


def ud_constraint_template(sources: Sequence[PolicySource]) -> dict[str, Any]:
    """The ConstraintTemplate carrying the UnitedDeployment policy and its helper library."""
    return {
        "apiVersion": "templates.gatekeeper.sh/v1",
        "kind": "ConstraintTemplate",
        "metadata": {
            "name": UD_TEMPLATE_NAME,
            "annotations": {
                "metadata.gatekeeper.sh/title": "Valid Spreadgate UnitedDeployments",
                "metadata.gatekeeper.sh/version": TEMPLATE_VERSION,
                "description": (
                    "Rejects UnitedDeployments (spreadgate.dev or apps.kruise.io) that break the spec rules: "
                    "selector and template labels, one workload template, subset names, node selector terms, "
                    "tolerations, replicas/minReplicas/maxReplicas and their sums, Adaptive settings, "
                    "partitions, the subset patch allowlist, and what an update may not change. "
                    "Generated from "
                    "policies/uniteddeployment by `spreadgate gatekeeper`; do not edit by hand."
                ),
            },
        },
        "spec": {
            "crd": {
                "spec": {
                    "names": {"kind": UD_CONSTRAINT_KIND},
                    "validation": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "allowedPatchFields": {
                                    "type": "array",
                                    "description": (
                                        "Pod fields a subset patch may set beyond the default allowlist."
                                    ),
                                    "items": {"type": "string"},
                                }
                            },
                        }
                    },
                }
            },
            "targets": [
                {
                    "target": "admission.k8s.gatekeeper.sh",
                    "code": [
                        {
                            "engine": "Rego",
                            "source": {
                                "version": "v1",
                                "rego": ud_module(sources),
                                "libs": [joined_module(sources, package=LIB_PACKAGE)],
                            },
                        }
                    ],
                }
            ],
        },
    }


def ud_constraint() -> dict[str, Any]:
    """The Constraint applying the template to every UnitedDeployment."""
    return {
        "apiVersion": "constraints.gatekeeper.sh/v1beta1",
        "kind": UD_CONSTRAINT_KIND,
        "metadata": {"name": UD_CONSTRAINT_NAME},
        "spec": {
            "enforcementAction": "deny",
            "match": {"kinds": [{"apiGroups": [GROUP, KRUISE_GROUP], "kinds": ["UnitedDeployment"]}]},
            "parameters": {"allowedPatchFields": []},
        },
    }


def ud_gatekeeper_documents(sources: Sequence[PolicySource]) -> dict[str, str]:
    """File name -> YAML text of the UnitedDeployment template and constraint (`manifests/gatekeeper/`)."""
    header = (
        "# Generated by `spreadgate gatekeeper` from policies/uniteddeployment and policies/validation; "
        "do not edit.\n"
    )
    template = to_yaml(ud_constraint_template(sources)).split("\n", 1)[1]
    constraint = to_yaml(ud_constraint()).split("\n", 1)[1]
    return {UD_TEMPLATE_FILE: header + template, UD_CONSTRAINT_FILE: header + constraint}
