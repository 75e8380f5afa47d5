"""Validation of a CRD's `additionalPrinterColumns`, as kube-apiserver does on create and update.

Each column needs a name, a type among `integer`, `number`, `string`,
`boolean`, `date`, an optional format among the OpenAPI formats the API server
accepts, and a JSONPath that starts with `.` and that the Table builder can
evaluate (`py_engine.sim.jsonpath`). A CRD breaking one of these is refused
with a 422 naming the field, so a column never silently prints nothing.
"""

from __future__ import annotations

from typing import Any

from py_engine.sim.jsonpath import JsonPathError, compile_path

Cause = tuple[str, str, str]

TYPES = ("boolean", "date", "integer", "number", "string")
FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")


def _column_causes(column: Any, where: str) -> list[Cause]:
    if not isinstance(column, dict):
        return [(where, "FieldValueInvalid", "Invalid value: must be an object")]
    causes: list[Cause] = []
    if not column.get("name"):
        causes.append((f"{where}.name", "FieldValueRequired", "Required value"))
    kind = column.get("type")
    if not kind:
        causes.append((f"{where}.type", "FieldValueRequired", "Required value"))
    elif kind not in TYPES:
        causes.append(
            (
                f"{where}.type",
                "FieldValueNotSupported",
                f'Unsupported value: "{kind}": supported values: ' + ", ".join(f'"{t}"' for t in TYPES),
            )
        )
    fmt = column.get("format")
    if fmt and fmt not in FORMATS:
        causes.append(
            (
                f"{where}.format",
                "FieldValueNotSupported",
                f'Unsupported value: "{fmt}": supported values: ' + ", ".join(f'"{f}"' for f in FORMATS),
            )
        )
    path = column.get("jsonPath")
    if not path:
        causes.append((f"{where}.jsonPath", "FieldValueRequired", "Required value"))
    elif not isinstance(path, str) or not path.startswith("."):
        causes.append(
            (
                f"{where}.jsonPath",
                "FieldValueInvalid",
                f'Invalid value: "{path}": must be a simple json path starting with .',
            )
        )
    else:
        try:
            compile_path(path)
        except JsonPathError as exc:
            causes.append((f"{where}.jsonPath", "FieldValueInvalid", f'Invalid value: "{path}": {exc}'))
    return causes


def printer_column_causes(crd: dict[str, Any]) -> list[Cause]:
    """Causes for a 422 in `spec.versions[*].additionalPrinterColumns`; empty when they are valid."""
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    causes: list[Cause] = []
    for i, version in enumerate(versions if isinstance(versions, list) else []):
        columns = version.get("additionalPrinterColumns") if isinstance(version, dict) else None
        for j, column in enumerate(columns if isinstance(columns, list) else []):
            causes += _column_causes(column, f"spec.versions[{i}].additionalPrinterColumns[{j}]")
    return causes
