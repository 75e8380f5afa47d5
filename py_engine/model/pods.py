"""Facts about pods that both the webhook and the controller read the same way.

The matched-workloadspread annotation, the pod's version bucket, and whether a
pod is active. Kruise's annotation key is read too (a migration path), and its
JSON keys are matched case-insensitively as Go's decoder does; Spreadgate
always writes its own key with lower-case keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model.constants import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION, VERSION_IGNORED
from py_engine.semantics import objects
from py_engine.semantics.jsontext import compact
from py_engine.semantics.objects import JSON_OBJECT

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"


@dataclass(frozen=True)
class MatchedSpread:
    """The spread and subset a pod was admitted into; `uid` keys generateName pods."""

    name: str
    subset: str
    uid: str = ""

    def to_annotation(self) -> str:
        """Compact JSON with keys in the order name, subset, uid (uid only when set)."""
        value: dict[str, str] = {"name": self.name, "subset": self.subset}
        if self.uid:
            value["uid"] = self.uid
        return compact(value)


def matched_spread(pod: Mapping[str, Any]) -> MatchedSpread | None:
    """Read the pod's matched-workloadspread annotation (Spreadgate's key first, then Kruise's).

    Returns None when absent or unparsable; JSON keys match case-insensitively.
    """
    annotations = objects.annotations(pod)
    for key in (MATCHED_ANNOTATION, KRUISE_MATCHED_ANNOTATION):
        raw = annotations.get(key)
        if isinstance(raw, str):
            return _parse_matched(raw)
    return None


def _parse_matched(raw: str) -> MatchedSpread | None:
    """One annotation text's reading (a controller pass reads each pod's once, when grouping it;
    the status reads it again only while creations are recorded)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    folded = {str(k).lower(): v for k, v in value.items()}
    name, subset, uid = folded.get("name"), folded.get("subset"), folded.get("uid", "")
    if not isinstance(name, str) or not isinstance(subset, str) or not isinstance(uid, str):
        return None
    return MatchedSpread(name=name, subset=subset, uid=uid)


def pod_version(pod: Mapping[str, Any], *, versioned: bool) -> str:
    """The status bucket of a pod: its pod-template-hash when the owner kind is versioned
    (Deployment/ReplicaSet by default), else the controller-revision-hash suffix, else
    `versionIgnored`."""
    if not versioned:
        return VERSION_IGNORED
    metadata = pod.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, JSON_OBJECT) else None
    labels = labels if isinstance(labels, JSON_OBJECT) else {}
    template_hash = labels.get(POD_TEMPLATE_HASH_LABEL)
    if isinstance(template_hash, str) and template_hash:
        return template_hash
    revision = labels.get(CONTROLLER_REVISION_HASH_LABEL)
    if isinstance(revision, str) and revision:
        return revision.rsplit("-", 1)[-1]
    return VERSION_IGNORED


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """Not being deleted and not finished (phase Succeeded or Failed)."""
    metadata = pod.get("metadata")
    if isinstance(metadata, JSON_OBJECT) and metadata.get("deletionTimestamp"):
        return False
    status = pod.get("status")
    phase = status.get("phase") if isinstance(status, JSON_OBJECT) else None
    return phase not in ("Succeeded", "Failed")


def controller_owner(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ownerReference with controller=true, if any."""
    metadata = obj.get("metadata")
    refs = metadata.get("ownerReferences") if isinstance(metadata, JSON_OBJECT) else None
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, JSON_OBJECT) and ref.get("controller") is True:
            return ref
    return None
