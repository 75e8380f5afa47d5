"""Compact JSON text from one encoder built at import.

`json.dumps` with any option constructs a new `JSONEncoder` on every call, which costs
more than encoding the small documents of an admission (an annotation value, a patch,
the AdmissionReview answer), several of which are encoded per pod.
"""

from __future__ import annotations

import json
from typing import Any

_COMPACT = json.JSONEncoder(separators=(",", ":"))


def compact(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"))`."""
    return _COMPACT.encode(value)
