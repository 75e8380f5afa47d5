"""The Spreadgate objects of the YAML files under a directory, for tests that check every shipped
example (tests/manifests/test_crd_schema.py, tests/sim/test_crd_shipped_schemas.py)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import yaml


def spreadgate_objects(
    directory: Path, base: Path, kinds: Collection[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Every object of these kinds in the `spreadgate.dev` group in the `*.yaml` files below
    `directory` (a List's items count one by one), named `<file relative to base>:<name>`, in file order."""
    out = []
    for path in sorted(directory.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            items = doc.get("items", [doc]) if isinstance(doc, dict) else []
            out += [
                (f"{path.relative_to(base)}:{d['metadata']['name']}", d)
                for d in items
                if isinstance(d, dict)
                and d.get("kind") in kinds
                and str(d.get("apiVersion", "")).startswith("spreadgate.dev/")
            ]
    return out
