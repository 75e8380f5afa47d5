"""Loading the reference vectors shipped in `shared/design/vectors/`.

The vectors sit beside the repository (`../shared/design/vectors`), as in CI's
checkout; `SPREADGATE_VECTORS_DIR` points elsewhere. Kruise's API group and
annotation key are mapped to Spreadgate's by the loaders that need it.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def vectors_dir() -> Path:
    override = os.environ.get("SPREADGATE_VECTORS_DIR")
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "design" / "vectors"


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
