"""Annotations Kubernetes itself defines and reads (not Spreadgate's own, which live in
`py_engine.model.constants`)."""

from __future__ import annotations

from typing import Final

DELETION_COST_ANNOTATION: Final = "controller.kubernetes.io/pod-deletion-cost"
"""The ReplicaSet controller removes pods with a lower cost first on scale-down (Kubernetes
1.22+, beta); the value is an int32 in decimal text."""
