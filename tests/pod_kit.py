"""A pod object for the pure-core tests (controller reconcile, UnitedDeployment plan): the
`v1` Pod envelope in namespace `default`, each test file giving the metadata, spec and status
its rules read."""

from __future__ import annotations

from typing import Any


def pod_object(
    name: str, spec: dict[str, Any], status: dict[str, Any] | None = None, **metadata: Any
) -> dict[str, Any]:
    """Pod `name` in `default` with these metadata fields, `spec` and (when given) `status`."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", **metadata},
        "spec": spec,
    }
    if status is not None:
        pod["status"] = status
    return pod
