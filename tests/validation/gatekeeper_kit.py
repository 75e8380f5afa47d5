"""A Gatekeeper ConstraintTemplate's Rego run as Gatekeeper runs it: its own regorus engine
holding only the template's Rego and libraries, and the violations of one object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import regorus
import yaml

GATEKEEPER = Path(__file__).resolve().parents[2] / "manifests" / "gatekeeper"


def template_engine(template_file: str) -> Any:
    """A regorus engine holding the Rego (and any libraries) of `manifests/gatekeeper/<template_file>`."""
    template = yaml.safe_load((GATEKEEPER / template_file).read_text())
    source = template["spec"]["targets"][0]["code"][0]["source"]
    assert source["version"] == "v1"
    engine = regorus.Engine()
    engine.add_policy("template.rego", source["rego"])
    for i, lib in enumerate(source.get("libs") or []):
        assert lib.startswith("package lib.")  # Gatekeeper's rule for library packages
        engine.add_policy(f"lib{i}.rego", lib)
    return engine


def gatekeeper_violations(
    engine: Any, rule: str, obj: dict[str, Any], parameters: dict[str, Any] | None = None
) -> list[Any]:
    """The values of `rule` for a CREATE of `obj` with the constraint's `parameters`."""
    engine.set_input(
        {
            "review": {"object": obj, "operation": "CREATE", "kind": {"kind": obj.get("kind")}},
            "parameters": parameters or {},
        }
    )
    result: list[Any] = json.loads(engine.eval_rule_as_json(rule))
    return result
