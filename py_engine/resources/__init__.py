"""The files Spreadgate's commands read at run time, shipped inside the package.

The Rego policies, the CRDs and the example scenarios have one source of truth:
the repository's top-level `policies/` and `manifests/` folders, which reviewers,
`opa test`, conftest and kustomize read. This package reaches them through two
symbolic links (`policies`, `scenarios`, one per CRD in `crds/`, one per RBAC file in
`rbac/`, and the webhook configurations in `webhooks/`), so an
editable install reads the very
files in the checkout, and the wheel build copies the linked files listed in
`pyproject.toml` (`[tool.setuptools.package-data]`) into the installed package.
Everything is read through `importlib.resources`, so a non-editable install
(a container image) finds the same files without a checkout beside it.

`tests/packaging` builds the wheel and checks that it carries every file the
checkout has here, so a pattern that misses a new policy fails the suite.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import yaml

POLICIES = "policies"
WORKLOADSPREAD_CRD = "crds/workloadspread.yaml"
UNITEDDEPLOYMENT_CRD = "crds/uniteddeployment.yaml"
WEBHOOK_CONFIGURATIONS = "webhooks/configurations.yaml"
SCENARIOS = "scenarios"
RBAC_MANIFESTS = ("rbac/serviceaccounts.yaml", "rbac/webhook.yaml", "rbac/controller.yaml")
"""The base's ServiceAccounts and RBAC (`manifests/base/`), which the embedded stack applies so the
webhook and the controller run there under the identities and grants a real install gives them."""


def resource(relative: str) -> Traversable:
    """The shipped file or folder at `relative` (a `/`-separated path below this package)."""
    node: Traversable = files(__name__)
    for part in relative.split("/"):
        node = node.joinpath(part)
    return node


def read_text(relative: str) -> str:
    """The UTF-8 text of one shipped file; `FileNotFoundError` when the package lacks it."""
    return resource(relative).read_text(encoding="utf-8")


def read_yaml(relative: str) -> dict[str, Any]:
    """One shipped YAML document that holds an object (a CRD, a scenario)."""
    loaded = yaml.safe_load(read_text(relative))
    if not isinstance(loaded, dict):
        raise ValueError(f"{relative}: expected one YAML object")
    return loaded


def read_yaml_documents(relative: str) -> list[dict[str, Any]]:
    """Every object of a shipped multi-document YAML file (empty documents skipped)."""
    docs = [d for d in yaml.safe_load_all(read_text(relative)) if d is not None]
    if not all(isinstance(d, dict) for d in docs):
        raise ValueError(f"{relative}: expected YAML objects")
    return docs


def walk(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """Every file below `folder` as (`/`-separated path relative to it, file), sorted by path.

    `Traversable` has no `rglob`; this is the one recursive walk the policy
    loader and the packaging check share.
    """
    for child in sorted(folder.iterdir(), key=lambda entry: entry.name):
        name = f"{prefix}{child.name}"
        if child.is_dir():
            yield from walk(child, f"{name}/")
        elif child.is_file():
            yield name, child
