"""Shared vocabulary for explaining an order: which criterion put a pod before the next.

`spreadgate rank -o json` reports, for each pod, the first comparison criterion
that distinguishes it from the pod that follows it in the final order. The
comparators describe each pod as a tuple of per-criterion values (the same
values their sort keys are built from) and a parallel tuple of criterion names;
the first position where two such tuples differ names the deciding criterion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

LAST = "last"
EQUAL = "equal"
# Upstream skips sorting when every pod of a group goes; those pods keep input order.
UNSORTED = "unsorted"


class Placement(NamedTuple):
    """One pod of a computed order: its input position, its rank, and why it precedes the next."""

    # Position of the pod in the input sequence.
    item: int
    # None when upstream builds no rank for the pod (its group is not sorted).
    rank: float | None
    criterion: str


def first_difference(a: Sequence[Any], b: Sequence[Any], names: Sequence[str]) -> str:
    """Name of the first criterion whose values differ, or EQUAL when none does."""
    for name, left, right in zip(names, a, b, strict=True):
        if left != right:
            return name
    return EQUAL


def explain_sorted(
    order: Sequence[int],
    components: Callable[[int], Sequence[Any]],
    names: Sequence[str],
    ranks: Sequence[float | None],
) -> list[Placement]:
    """Placements for a sorted order: criterion against the next pod, LAST for the final one."""
    placements: list[Placement] = []
    following = components(order[0]) if order else ()
    for position, index in enumerate(order):
        current = following
        if position + 1 < len(order):
            following = components(order[position + 1])
            criterion = first_difference(current, following, names)
        else:
            criterion = LAST
        placements.append(Placement(index, ranks[index], criterion))
    return placements
