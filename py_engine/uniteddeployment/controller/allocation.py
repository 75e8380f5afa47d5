"""The result of an allocator, and the error of one that refuses the spec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


class AllocationError(ValueError):
    """The spec cannot be allocated (e.g. fixed subset replicas above `spec.replicas`).

    The controller then touches no subset and keeps the stored status, as Kruise
    does (docs/uniteddeployment.md, "Allocation").
    """


@dataclass(frozen=True)
class Allocation:
    """Next replicas of every spec subset. `order` is the order the allocator walked
    the subsets in (the specified allocator sorts them), used only by `describe`."""

    replicas: Mapping[str, int]
    order: tuple[str, ...]

    def describe(self) -> str:
        """`" a -> 1; b -> 2;"`: the allocator's own rendering, in walk order."""
        return "".join(f" {name} -> {self.replicas[name]};" for name in self.order)

    @property
    def total(self) -> int:
        return sum(self.replicas.values())
