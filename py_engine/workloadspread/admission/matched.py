"""The matched-workloadspread annotation is Spreadgate's alone.

A pod's DELETE or eviction gives its subset's slot back on the strength of the
annotation (Spreadgate's `spreadgate.dev/matched-workloadspread` or Kruise's
`apps.kruise.io/matched-workloadspread`). A pod that arrives at admission
already carrying one (copied from another pod, a template, a forged manifest)
and is admitted *without* a subset would later "release" a slot it never held,
and the subset would end over its cap. So admission without a subset removes
both keys through the JSON patch (docs/kruise-compatibility.md,
"WorkloadSpread"); a pod admitted into a subset gets Spreadgate's key from `inject`.
A pod no spread governs loses Spreadgate's key only (`SPREADGATE_KEY`): during
a migration Kruise's own webhook may have set Kruise's key for a Kruise spread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.model.constants import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.semantics import objects
from py_engine.semantics.objects import JSON_OBJECT

MATCHED_KEYS: tuple[str, ...] = (MATCHED_ANNOTATION, KRUISE_MATCHED_ANNOTATION)
SPREADGATE_KEY: tuple[str, ...] = (MATCHED_ANNOTATION,)


def without_matched_annotations(
    pod: Mapping[str, Any], keys: tuple[str, ...] = MATCHED_KEYS
) -> dict[str, Any] | None:
    """A copy of `pod` without the matched-workloadspread `keys` (both by default); None
    when it carries none of them (nothing to change). The input is not mutated; the copy
    shares every member but the path to `metadata.annotations` with it (callers diff it
    against `pod` and mutate neither)."""
    metadata = objects.meta(pod)
    annotations = metadata.get("annotations")
    if not isinstance(annotations, JSON_OBJECT) or not any(key in annotations for key in keys):
        return None
    kept = {key: value for key, value in annotations.items() if key not in keys}
    return {**pod, "metadata": {**metadata, "annotations": kept}}
