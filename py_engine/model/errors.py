"""The error raised when an object does not have the shape a view needs."""

from __future__ import annotations


class ModelError(ValueError):
    """A field of a Kubernetes object is missing or has the wrong type.

    `field` is the path in Kubernetes' notation (`spec.subsets[1].maxReplicas`)
    so messages point at the offending line of the user's manifest.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
