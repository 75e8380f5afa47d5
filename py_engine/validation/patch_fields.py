"""Widening the subset patch allowlist: the field paths an operator adds.

The allowlist itself is policy (`policies/validation/patch.rego`); this module
only checks the syntax of the extra entries operators give on the command line
(`--allow-patch-field`) before they reach the policy as
`context.allowedPatchFields` (Gatekeeper: the Constraint parameter
`allowedPatchFields`). An entry is a dotted path from `metadata` or `spec` of
the pod, with `[]` after a container list: `spec.nodeSelector`,
`spec.containers[].volumeMounts`, `spec.containers[]` (new containers). An
entry allows everything below it. Reserved label/annotation keys, selector
labels and strategic-merge directives cannot be allowed (docs/operations.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PATCH_VIOLATION_RULE = "data.spreadgate.validation.patch_violation"
"""The patch rules alone, each violation with `details.subset` (the subset's index)."""

_FIELD_PATH = re.compile(r"^(metadata|spec)(\.[A-Za-z][A-Za-z0-9]*(\[\])?)*$")


def parse_patch_fields(values: Iterable[str]) -> tuple[str, ...]:
    """The entries, deduplicated and sorted; ValueError names the first malformed one."""
    fields: set[str] = set()
    for value in values:
        entry = value.strip()
        if not _FIELD_PATH.match(entry):
            raise ValueError(
                f"--allow-patch-field {value!r} must be a pod field path such as spec.nodeSelector, "
                "spec.containers[].volumeMounts or spec.containers[]"
            )
        fields.add(entry)
    return tuple(sorted(fields))
