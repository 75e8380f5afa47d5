"""The matched-workloadspread annotation is Spreadgate's alone.

A pod's DELETE or eviction gives its subset's slot back on the strength of the
annotation (Spreadgate's `spreadgate.dev/matched-workloadspread` or Kruise's
`apps.kruise.io/matched-workloadspread`). A pod that arrives at admission
already carrying one (copied from another pod, a template, a forged manifest)
and is admitted *without* a subset would later "release" a slot it never held,
and the subset would end over its cap. So admission without a subset removes
both keys through the JSON patch (README, "Where Spreadgate differs from
OpenKruise"); a pod admitted into a subset gets Spreadgate's key from `inject`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from py_engine.model.constants import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION

MATCHED_KEYS: tuple[str, ...] = (MATCHED_ANNOTATION, KRUISE_MATCHED_ANNOTATION)


def without_matched_annotations(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of `pod` without either matched-workloadspread key; None when it carries
    neither (nothing to change). The input is not mutated."""
    metadata = pod.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping) or not any(key in annotations for key in MATCHED_KEYS):
        return None
    stripped = copy.deepcopy(dict(pod))
    kept = stripped["metadata"]["annotations"]
    for key in MATCHED_KEYS:
        kept.pop(key, None)
    return stripped
