"""Server-side printing: `meta.k8s.io/v1` Tables for `kubectl get`.

kubectl asks every list and get for `application/json;as=Table;v=v1;g=meta.k8s.io`
and prints the columns the server sends. As kube-apiserver does:

* **custom resources**: a `Name` column, then the version's
  `additionalPrinterColumns` (type, format, priority and description as
  declared; a column's JSONPath is evaluated over the object and only its first
  match is printed; `string` columns print any JSON value, other types print
  only a value of that type, `date` prints the age). A version that declares no
  column gets `Age`.
* **built-in kinds**: the columns of kube-apiserver's printers
  (`py_engine.sim.printers`), including the wide ones (`priority: 1`, shown by
  `-o wide`); every cell is computed, the client picks the columns. Kinds
  without a printer there get `Name` and `Age`.

Rows carry the object as `PartialObjectMetadata` (`includeObject=Metadata`, the
default), the whole object (`Object`) or nothing (`None`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from py_engine.semantics.objects import meta as object_meta
from py_engine.semantics.timeutil import TimestampError, parse_time
from py_engine.sim import errors
from py_engine.sim.interface import JSON
from py_engine.sim.jsonpath import JsonPathError, compile_path
from py_engine.sim.printers import AGE_DESC, NAME_DESC, Printer, builtin_columns, human_duration
from py_engine.sim.resources import ResourceDef

__all__ = ["TABLE_CONTENT_TYPE", "go_float", "human_duration", "to_table", "wants_table"]

TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def wants_table(accept: str | None) -> bool:
    """Whether an Accept header asks for a `meta.k8s.io` Table (v1 or v1beta1)."""
    for part in (accept or "").split(","):
        params = {
            p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in part.split(";")[1:] if "=" in p
        }
        if params.get("as") == "Table" and params.get("g", "meta.k8s.io") == "meta.k8s.io":
            return True
    return False


# ---------------------------------------------------------- custom resources


def _printer_columns(rd: ResourceDef) -> list[JSON]:
    declared = [c for c in rd.printer_columns if isinstance(c, dict)]
    return declared or [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": AGE_DESC}
    ]


def go_float(value: float) -> str:
    """Go's `fmt.Print` of a float64 (`%v`: shortest digits, exponent form below 1e-4 or from 1e6)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    if value == 0:
        return "-0" if repr(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exp = len(digits) + int(exponent) - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return minus + format(Decimal(text).scaleb(exp - len(text) + 1), "f")


def _go_text(value: Any) -> str:
    """How Kubernetes' JSONPath prints one value (JSON for maps and lists, Go's `%v` otherwise)."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def _crd_cell(kind: str, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    if kind == "string":
        return _go_text(value)
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value)
    if kind == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        try:
            return human_duration((now - parse_time(value)).total_seconds())
        except TimestampError:
            return "<invalid>"
    return None


def _custom(rd: ResourceDef) -> tuple[list[JSON], Printer]:
    declared = _printer_columns(rd)
    compiled: list[Any] = []
    for col in declared:
        try:
            compiled.append(compile_path(str(col.get("jsonPath", ""))))
        except JsonPathError:
            compiled.append(None)
    defs: list[JSON] = [
        {"name": "Name", "type": "string", "format": "name", "description": NAME_DESC, "priority": 0}
    ]
    for col in declared:
        path = col.get("jsonPath", "")
        defs.append(
            {
                "name": str(col.get("name", "")),
                "type": str(col.get("type", "")),
                "format": str(col.get("format", "")),
                "description": str(
                    col.get("description")
                    or f"Custom resource definition column (in JSONPath format): {path}"
                ),
                "priority": _int(col.get("priority")),
            }
        )

    def row(obj: JSON, now: datetime) -> list[Any]:
        cells: list[Any] = [object_meta(obj).get("name", "")]
        for col, path in zip(declared, compiled, strict=True):
            found = path.evaluate(obj) if path is not None else []
            cells.append(_crd_cell(str(col.get("type", "")), found[0], now) if found else None)
        return cells

    return defs, row


def _columns(rd: ResourceDef) -> tuple[list[JSON], Printer]:
    if rd.crd:
        return _custom(rd)
    return builtin_columns(rd.group, rd.kind)


def to_table(
    rd: ResourceDef,
    objects: Sequence[JSON],
    now: datetime,
    resource_version: str,
    include_object: str | None = None,
    *,
    headers: bool = True,
) -> JSON:
    """A `meta.k8s.io/v1` Table of `objects` (a list's items, or one object)."""
    include = include_object or "Metadata"
    if include not in ("Metadata", "Object", "None"):
        raise errors.bad_request(f'unrecognized includeObject value: "{include}"')
    defs, printer = _columns(rd)
    rows: list[JSON] = []
    for obj in objects:
        row: JSON = {"cells": printer(obj, now)}
        if include == "Object":
            row["object"] = {"apiVersion": rd.api_version, "kind": rd.kind, **obj}
        elif include == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": object_meta(obj),
            }
        else:
            row["object"] = None
        if not rd.crd and rd.kind == "Pod":
            status = obj.get("status")
            phase = status.get("phase") if isinstance(status, dict) else None
            if phase == "Succeeded":
                row["conditions"] = [
                    {
                        "type": "Completed",
                        "status": "True",
                        "reason": "Succeeded",
                        "message": "The pod has completed successfully.",
                    }
                ]
            elif phase == "Failed":
                row["conditions"] = [
                    {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
                ]
        rows.append(row)
    table: JSON = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": defs if headers else [],
        "rows": rows,
    }
    return table
