"""Which objects of a snapshot belong to a UnitedDeployment.

An object is the UnitedDeployment's when its controller owner reference names it
(by uid; by kind and name when either uid is missing, as in hand-written
snapshots). An object without a controller owner is an orphan the controller may
adopt; one controlled by anything else is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from py_engine.model.ud_constants import UD_KIND
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics import objects
from py_engine.semantics.labels import SelectorError, labels_of, matches_label_selector

Obj = Mapping[str, Any]
Ownership = Literal["owned", "orphan", "foreign"]


def ownership(obj: Obj, ud: UnitedDeployment) -> Ownership:
    refs = objects.meta(obj).get("ownerReferences")
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, Mapping) or ref.get("controller") is not True:
            continue
        uid = ref.get("uid")
        if ud.uid and isinstance(uid, str) and uid:
            return "owned" if uid == ud.uid else "foreign"
        return "owned" if ref.get("kind") == UD_KIND and ref.get("name") == ud.name else "foreign"
    return "orphan"


def selected(obj: Obj, ud: UnitedDeployment) -> bool:
    """In the UnitedDeployment's namespace and matched by its selector."""
    if objects.namespace(obj, default="") != ud.namespace:
        return False
    try:
        return matches_label_selector(ud.selector, labels_of(obj))
    except SelectorError:
        return False


def reference(obj: Obj) -> dict[str, Any]:
    """The identity of an object to delete: apiVersion, kind, namespace and name."""
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {"namespace": objects.namespace(obj, default=""), "name": objects.meta(obj).get("name")}}
