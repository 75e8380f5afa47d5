"""`metadata.managedFields`: reading and writing the entries, naming managers, conflict errors.

The ownership rules themselves are py_engine/sim/apply.py's; this module is their edge to the
object and to clients:

- `read(obj)` / `write(obj, managers)`: the entries of an object as `apply.Manager` records and
  back, ordered as kube-apiserver orders them (`Apply` before `Update`, then by time, manager,
  apiVersion, subresource), at most `MAX_UPDATE_MANAGERS` `Update` entries (older ones are
  folded into `ancient-changes`, as kube-apiserver caps them).
- `manager_name(...)`: the `fieldManager` query parameter, else the User-Agent's product
  (`kubectl/v1.32 ...` -> `kubectl`), as kube-apiserver names a writer that gave none.
- `validate_field_manager(...)`, `apply_needs_manager()`: the 422s kube-apiserver answers.
- `conflict_error(conflicts)`: the 409 Status of an apply that conflicts, byte for byte the
  message, reason and causes kube-apiserver gives (kubectl prints them to the user).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

from py_engine.sim import errors
from py_engine.sim.apply import Conflict, Manager
from py_engine.sim.fieldsets import path_string, union, valid
from py_engine.sim.interface import JSON, ApiError

MAX_UPDATE_MANAGERS = 10
"""kube-apiserver keeps at most this many `Update` entries per object."""
ANCIENT_CHANGES = "ancient-changes"
MAX_MANAGER_LENGTH = 128
IN_PROCESS_MANAGER = "kube-controller-manager"
"""Writes made inside the process (the emulated controllers, kubelet, scheduler and tests' direct
calls) carry no User-Agent; they are recorded under this name."""


def read(obj: Mapping[str, Any]) -> list[Manager]:
    """The managers of a stored object (its entries were checked when it was written)."""
    raw = (obj.get("metadata") or {}).get("managedFields")
    return read_entries(raw, trusted=True) or []


def read_entries(raw: Any, *, trusted: bool = False) -> list[Manager] | None:
    """Entries as managers, or None when `raw` is not a valid list of entries (a client's
    entries are checked through; kube-apiserver then keeps the stored ones)."""
    if not isinstance(raw, list):
        return None
    out = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            return None
        operation = entry.get("operation")
        fields = entry.get("fieldsV1", {})
        if (
            operation not in ("Apply", "Update")
            or entry.get("fieldsType", "FieldsV1") != "FieldsV1"
            or not (trusted or valid(fields))
        ):
            return None
        out.append(
            Manager(
                str(entry.get("manager") or ""),
                str(operation),
                str(entry.get("apiVersion") or ""),
                str(entry.get("subresource") or ""),
                entry.get("time"),
                fields,
            )
        )
    return out


def is_reset(raw: Any) -> bool:
    """`managedFields: []` or `[{}]` in a write: the writer asks for the entries to be cleared."""
    return isinstance(raw, list) and (raw == [] or raw == [{}])


def _cap(managers: list[Manager]) -> list[Manager]:
    updates = sorted((m for m in managers if m.operation == "Update"), key=lambda m: m.time or "")
    if len(updates) <= MAX_UPDATE_MANAGERS:
        return managers
    folded = updates[: len(updates) - MAX_UPDATE_MANAGERS + 1]
    gone = {id(m) for m in folded}
    fields: dict[str, Any] = {}
    for m in folded:
        fields = union(fields, m.fields)
    bucket = Manager(ANCIENT_CHANGES, "Update", folded[-1].api_version, "", folded[-1].time, fields)
    return [m for m in managers if id(m) not in gone] + [bucket]


def _order(m: Manager) -> tuple[str, str, str, str, str]:
    return m.operation, m.time or "", m.name, m.api_version, m.subresource


def entries(managers: list[Manager]) -> list[JSON]:
    """`managedFields` as kube-apiserver writes it."""
    out = []
    for m in sorted(_cap(managers), key=_order):
        if not m.fields:
            continue
        entry: JSON = {"manager": m.name, "operation": m.operation, "apiVersion": m.api_version}
        if m.time:
            entry["time"] = m.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = m.fields
        if m.subresource:
            entry["subresource"] = m.subresource
        out.append(entry)
    return out


def write(obj: dict[str, Any], managers: list[Manager]) -> None:
    """Set (or, with no manager left, remove) `obj`'s `metadata.managedFields`, in place."""
    meta = obj.setdefault("metadata", {})
    found = entries(managers)
    if found:
        meta["managedFields"] = found
    else:
        meta.pop("managedFields", None)


def manager_name(field_manager: str | None, user_agent: str | None, username: str = "") -> str:
    """Who is writing, as kube-apiserver records it."""
    if field_manager:
        return field_manager
    if user_agent:
        return user_agent.split("/", 1)[0]
    if username == "system:kube-scheduler":
        return "kube-scheduler"
    if username.startswith("system:node:"):
        return "kubelet"
    return IN_PROCESS_MANAGER


def validate_field_manager(value: str | None, options_kind: str) -> None:
    """kube-apiserver's checks of `fieldManager` on a create, update or patch (422 Invalid)."""
    if not value:
        return
    causes = []
    if len(value.encode()) > MAX_MANAGER_LENGTH:
        causes.append(
            (
                "fieldManager",
                "FieldValueTooLong",
                f"Too long: may not be more than {MAX_MANAGER_LENGTH} bytes",
            )
        )
    for i, ch in enumerate(value):
        if not ch.isprintable() and unicodedata.category(ch) != "Zs":
            causes.append(
                (
                    "fieldManager",
                    "FieldValueInvalid",
                    f"Invalid value: {json.dumps(value)}: invalid character U+{ord(ch):04X} "
                    f"(at position {i})",
                )
            )
            break
    if causes:
        raise errors.invalid("meta.k8s.io", options_kind, "", causes)


def _invalid_patch_options(field: str, reason: str, message: str) -> ApiError:
    """kube-apiserver's 422 for PatchOptions that do not go together."""
    return errors.invalid("meta.k8s.io", "PatchOptions", "", [(field, reason, message)])


def apply_needs_manager() -> ApiError:
    """An apply patch without `fieldManager` (kube-apiserver: 422, PatchOptions is invalid)."""
    return _invalid_patch_options(
        "fieldManager", "FieldValueRequired", "Required value: is required for apply patch"
    )


def force_needs_apply() -> ApiError:
    return _invalid_patch_options(
        "force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch"
    )


def _printed(m: Manager) -> str:
    out = json.dumps(m.name, ensure_ascii=False)
    if m.subresource:
        out += f" with subresource {json.dumps(m.subresource)}"
    if m.operation == "Update":
        out += f" using {m.api_version}"
    return out


def conflict_error(conflicts: list[Conflict]) -> ApiError:
    """409 Conflict: `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply"
    using apps/v1: .spec.replicas`, one `FieldManagerConflict` cause per field."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_printed(c.manager)}",
            "field": path_string(c.path),
        }
        for c in conflicts
    ]
    if len(conflicts) == 1:
        c = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_printed(c.manager)}: {path_string(c.path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for c in conflicts:
            by_manager.setdefault(_printed(c.manager), []).append(path_string(c.path))
        lines = []
        for printed in sorted(by_manager):
            lines.append(f"conflicts with {printed}:")
            lines.extend(f"- {p}" for p in by_manager[printed])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(errors.status(409, "Conflict", message, {"causes": causes}))


__all__ = [
    "ANCIENT_CHANGES",
    "IN_PROCESS_MANAGER",
    "MAX_UPDATE_MANAGERS",
    "apply_needs_manager",
    "conflict_error",
    "entries",
    "force_needs_apply",
    "is_reset",
    "manager_name",
    "read",
    "read_entries",
    "validate_field_manager",
    "write",
]
