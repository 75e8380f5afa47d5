"""How deep a JSON document nests, measured without recursion.

The admission code walks objects recursively (copies, strategic merge, policy input), so a
document nested a few hundred levels deep would fail deep inside it with a RecursionError.
The webhook refuses a review nested deeper than `MAX_REVIEW_DEPTH` (webhook/review.py), and
admission holds an object it did not read from a review (a stored spread from the watch
cache) to the depth it could have had inside one (py_engine/workloadspread/admission/patch_guard.py).
A pod is about 15 levels deep inside its review.
"""

from __future__ import annotations

from typing import Any

MAX_REVIEW_DEPTH = 64
"""The deepest AdmissionReview the webhook reads (the review itself is level 1)."""


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests arrays and objects more than `limit` levels deep (a scalar is 0,
    `{}` is 1). An explicit stack, stopping at the first container too deep."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False
