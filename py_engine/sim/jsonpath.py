"""The JSONPath that CRD printer columns use, evaluated over a JSON object.

Kubernetes evaluates `additionalPrinterColumns[].jsonPath` with its own
JSONPath dialect (the expression is wrapped in `{...}`, missing keys are
allowed). This module covers what that dialect offers inside one expression:
`.field`, `['field']`, `[n]` (negative counts from the end), `[start:end]`,
`[*]` and `.*`, recursive descent `..field`, and filters
`[?(@.path)]` / `[?(@.path OP literal)]` with `==`, `!=`, `<`, `<=`, `>`, `>=`.
`evaluate` returns every match in document order (map keys sorted); the table
builder takes the first one, as the API server's CRD table converter does. An
expression outside this grammar raises `JsonPathError`, and a CRD declaring
such a column is refused (`py_engine.sim.crd_columns`), so the emulator never
accepts a column it cannot print.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonPathError", "compile_path", "evaluate"]


class JsonPathError(ValueError):
    """The expression is not in the supported grammar."""


Step = Callable[[list[Any]], list[Any]]

_NAME = re.compile(r"[A-Za-z0-9_\-$/]+")
_FILTER = re.compile(r"\?\(\s*@((?:\.[A-Za-z0-9_\-/]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)")


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    if isinstance(value, list):
        return list(value)
    return []


def _field(name: str) -> Step:
    return lambda values: [v[name] for v in values if isinstance(v, dict) and name in v]


def _wildcard(values: list[Any]) -> list[Any]:
    return [c for v in values for c in _children(v)]


def _recursive(values: list[Any]) -> list[Any]:
    out: list[Any] = []

    def walk(v: Any, depth: int) -> None:
        if depth > 100:
            return
        out.append(v)
        for c in _children(v):
            walk(c, depth + 1)

    for v in values:
        walk(v, 0)
    return out


def _slice(start: int | None, end: int | None, single: bool) -> Step:
    def step(values: list[Any]) -> list[Any]:
        out: list[Any] = []
        for v in values:
            if not isinstance(v, list):
                continue
            if single:
                assert start is not None
                i = start + len(v) if start < 0 else start
                if 0 <= i < len(v):
                    out.append(v[i])
            else:
                out.extend(v[start:end])
        return out

    return step


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise JsonPathError(f"unsupported filter literal {text!r}") from None


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    numeric = (int, float)
    if isinstance(left, bool) or isinstance(right, bool):
        return False
    if not (isinstance(left, numeric) and isinstance(right, numeric)):
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _filter(path: str, op: str | None, literal: str | None) -> Step:
    names = [p for p in path.split(".") if p]
    right = _literal(literal) if literal is not None else None

    def matches(item: Any) -> bool:
        cur = item
        for name in names:
            if not isinstance(cur, dict) or name not in cur:
                return False
            cur = cur[name]
        return True if op is None else _compare(cur, op, right)

    return lambda values: [c for v in values if isinstance(v, list) for c in v if matches(c)]


@dataclass(frozen=True)
class CompiledPath:
    source: str
    steps: tuple[Step, ...]

    def evaluate(self, obj: Any) -> list[Any]:
        values = [obj]
        for step in self.steps:
            values = step(values)
            if not values:
                break
        return values


def _bracket(inner: str) -> Step:
    inner = inner.strip()
    if inner == "*":
        return _wildcard
    if inner[:1] in "'\"" and inner[-1:] == inner[:1] and len(inner) >= 2:
        return _field(inner[1:-1])
    filt = _FILTER.fullmatch(inner)
    if filt:
        return _filter(filt.group(1), filt.group(2), filt.group(3))
    if ":" in inner:
        parts = inner.split(":")
        if len(parts) > 3:
            raise JsonPathError(f"invalid array slice [{inner}]")
        try:
            start = int(parts[0]) if parts[0].strip() else None
            end = int(parts[1]) if parts[1].strip() else None
        except ValueError:
            raise JsonPathError(f"invalid array slice [{inner}]") from None
        return _slice(start, end, False)
    try:
        return _slice(int(inner), None, True)
    except ValueError:
        raise JsonPathError(f"unsupported bracket expression [{inner}]") from None


def compile_path(expression: str) -> CompiledPath:
    """Parse `.a.b[*].c` (optionally wrapped in `{}`); `JsonPathError` when unsupported."""
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text.startswith((".", "[", "$")):
        raise JsonPathError(f"{expression!r} must start with '.'")
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    i = 0
    while i < len(text):
        if text.startswith("..", i):
            steps.append(_recursive)
            i += 2
            m = _NAME.match(text, i)
            if m:
                steps.append(_field(m.group()))
                i = m.end()
            elif text.startswith("*", i):
                steps.append(_wildcard)
                i += 1
            continue
        ch = text[i]
        if ch == ".":
            i += 1
            if text.startswith("*", i):
                steps.append(_wildcard)
                i += 1
                continue
            if i == len(text):
                break
            m = _NAME.match(text, i)
            if not m:
                raise JsonPathError(f"unexpected {text[i]!r} at {i} in {expression!r}")
            steps.append(_field(m.group()))
            i = m.end()
        elif ch == "[":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "[":
                    depth += 1
                elif text[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= len(text):
                raise JsonPathError(f"unterminated '[' in {expression!r}")
            steps.append(_bracket(text[i + 1 : j]))
            i = j + 1
        else:
            raise JsonPathError(f"unexpected {ch!r} at {i} in {expression!r}")
    return CompiledPath(expression, tuple(steps))


def evaluate(expression: str, obj: Any) -> list[Any]:
    """Every value `expression` selects in `obj`, in document order (missing keys: no value)."""
    return compile_path(expression).evaluate(obj)
