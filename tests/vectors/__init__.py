"""Loading the reference vectors that live beside this module.

The JSON files in this folder are the project's own copy of the upstream test
vectors (see README.md here for their provenance); `SPREADGATE_VECTORS_DIR`
points the loader at another copy. Kruise's API group and annotation key are
mapped to Spreadgate's by the loaders that need it.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

VECTORS_DIR = Path(__file__).resolve().parent


def vectors_dir() -> Path:
    override = os.environ.get("SPREADGATE_VECTORS_DIR")
    if override:
        return Path(override)
    return VECTORS_DIR


@cache
def load_vector_file(name: str) -> dict[str, Any]:
    path = vectors_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"reference vectors not found at {path} (set SPREADGATE_VECTORS_DIR)")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def workloadspread_cases(kind: str) -> list[dict[str, Any]]:
    """Every `workloadspread_cases.json` vector of one kind (e.g. "validate")."""
    return [c for c in load_vector_file("workloadspread_cases.json")["cases"] if c["kind"] == kind]


def uniteddeployment_cases(kind: str) -> list[dict[str, Any]]:
    """Every `uniteddeployment_cases.json` vector of one kind ("allocate", "adaptive", "validate")."""
    return [c for c in load_vector_file("uniteddeployment_cases.json")["cases"] if c["kind"] == kind]
