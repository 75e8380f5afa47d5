"""`controller.kubernetes.io/pod-deletion-cost`, parsed exactly as Kubernetes parses it.

The annotation is the one lever users (and Spreadgate) have over which pod a
ReplicaSet or CloneSet deletes first, so the parser must agree with the API
machinery bit for bit: a value Kubernetes treats as 0 must be 0 here too, or a
preview would promise a victim the controller never picks.

Kubernetes (and Kruise's copy of the helper) accept a base-10 int32 whose first
character is `-`, a digit 1-9, or which is exactly `"0"`; anything else is
invalid and counts as 0. That rejects `"+10"`, `"008"`, `""`, spaces, non-ASCII
digits and values outside int32, while `"-007"` is -7 (only the first character
is vetted, the rest goes to `strconv.ParseInt`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

# ASCII digits only: str.isdigit() would also accept e.g. Arabic-Indic digits,
# which Go's ParseInt rejects.
_DIGITS = re.compile(r"[0-9]+")


def parse_deletion_cost(value: str | None) -> int:
    """The cost a controller uses for an annotation value; 0 when absent or invalid."""
    if not value:
        return 0
    first = value[0]
    if first == "-":
        digits = value[1:]
    elif value == "0" or "1" <= first <= "9":
        digits = value
    else:
        return 0
    if _DIGITS.fullmatch(digits) is None:
        return 0
    number = int(digits)
    if first == "-":
        number = -number
    if number < INT32_MIN or number > INT32_MAX:
        return 0
    return number


def deletion_cost(annotations: Mapping[str, str] | None) -> int:
    """The deletion cost carried by a pod's annotations (0 when there is none)."""
    if not annotations:
        return 0
    return parse_deletion_cost(annotations.get(DELETION_COST_ANNOTATION))
