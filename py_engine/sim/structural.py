"""Validating custom objects against a structural `openAPIV3Schema`, as kube-apiserver does.

kube-apiserver validates every write of a custom object (create, update,
patch, status, scale) against the schema of the version it was written at,
after pruning and defaulting, and answers 422 with one cause per fault. The
causes here are worded as kube-apiserver words them (its schema validator's
"<path> in body ..." details wrapped in the field-error forms `Invalid value`,
`Unsupported value`, `Required value`, `Too long`, `Too many`, `Duplicate
value`), and each carries the field path (`spec.subsets[0].name`).

Enforced: `type` (an integer is a JSON integer, or a float with no fraction as
Go's decoder reads it; a number is either), `nullable`, `enum`, `required`,
`minimum`/`maximum` (+ `exclusiveMinimum`/`exclusiveMaximum`), `multipleOf`,
`minLength`/`maxLength` (in characters), `pattern`, `minItems`/`maxItems`,
`minProperties`/`maxProperties`, `format` for `date-time`, `date`, `uuid`,
`ipv4`, `ipv6`, `cidr` and `byte` (other formats are accepted unchecked, as
kube-apiserver ignores unknown ones), `allOf`/`anyOf`/`oneOf`/`not`,
`x-kubernetes-int-or-string`, `x-kubernetes-list-type: set|map` with
`x-kubernetes-list-map-keys`, `additionalProperties`, and `apiVersion`/`kind`
of an `x-kubernetes-embedded-resource`. Updates are ratcheted as kube-apiserver
(1.30 on) ratchets them: a value equal to the stored one is not checked again
(object fields correlate by name, map-list items by their keys, set items by
value, atomic-list items not at all). Not enforced: CEL
(`x-kubernetes-validations`), and `metadata` beyond what `py_engine.sim.kinds`
checks for every kind.

Patterns run on RE2 (`google-re2`), the engine and syntax of Go's `regexp` that
kube-apiserver uses: linear in the input, so a pattern cannot make a request
spin; a pattern RE2 rejects is not checked (kube-apiserver refuses such a CRD
when it is created). Work is bounded: the
walk stops `MAX_DEPTH` levels down with a cause saying so, and at
`MAX_CAUSES` causes.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import math
import uuid
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

import re2

from py_engine.sim.pruning import MAX_DEPTH

Cause = tuple[str, str, str]
Schema = Mapping[str, Any]

_COMPOSITION = frozenset({"allOf", "anyOf", "oneOf", "not"})

ABSENT: Any = object()
"""No earlier value to compare with (a create, or a field the stored object lacks)."""

MAX_CAUSES = 100
"""A request that breaks more rules than this is answered with the first ones only."""


# ------------------------------------------------------------ rendering values


def go_value(value: Any) -> str:
    """A value as Go's field errors print it (`%v` for scalars, `%q` for strings,
    `%#v` for maps and lists decoded from JSON)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return _go_literal(value)


def go_number(value: float | int) -> str:
    """Go's `%v` of a float64: no trailing `.0`, exponent from 1e21 on."""
    if isinstance(value, (bool, int)):
        return str(int(value))
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    return text


def _go_literal(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(
            f"{json.dumps(str(k), ensure_ascii=False)}:{_go_literal(v)}"
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        )
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_literal(v) for v in value) + "}"
    if value is None:
        return "interface {}(nil)"
    return go_value(value)


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)
"""bool before int: in Python a bool is an int, in JSON it is not."""


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    return next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), type(value).__name__)


def _type_matches(want: str, value: Any) -> bool:
    got = _type_of(value)
    if want == "integer":
        return got == "integer" or (got == "number" and math.isfinite(value) and float(value).is_integer())
    if want == "number":
        return got in ("integer", "number")
    return got == want


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, `1` equals `1.0` (both numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _canonical(value: Any) -> Any:
    """`value` with every whole float as an int, so that equal JSON (`same_json`) dumps equal."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _json_key(value: Any) -> str:
    """A text equal for two values exactly when `same_json` says they are equal (`true` stays
    apart from `1`), so duplicates in a list are found with a set in one pass, not pairwise."""
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"))


# ------------------------------------------------------------------ causes


def _required(path: str, detail: str = "") -> Cause:
    return (path, "FieldValueRequired", f"Required value: {detail}" if detail else "Required value")


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueInvalid", f"Invalid value: {go_value(value)}: {detail}")


def _type_invalid(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueTypeInvalid", f"Invalid value: {go_value(value)}: {detail}")


def _not_supported(path: str, value: Any, allowed: list[Any]) -> Cause:
    names = [v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in allowed]
    quoted = ", ".join(json.dumps(n, ensure_ascii=False) for n in names)
    return (
        path,
        "FieldValueNotSupported",
        f"Unsupported value: {go_value(value)}: supported values: {quoted}",
    )


def _too_long(path: str, limit: int) -> Cause:
    return (path, "FieldValueTooLong", f"Too long: may not be longer than {limit}")


def _too_many(path: str, actual: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items")


def _duplicate(path: str, value: Any) -> Cause:
    return (path, "FieldValueDuplicate", f"Duplicate value: {go_value(value)}")


# ----------------------------------------------------------------- formats


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _date_time(text: str) -> object:
    if "T" not in text.upper() and " " not in text:
        raise ValueError(text)
    return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))


def _fixed_length(parse: Callable[[str], object], length: int) -> Callable[[str], object]:
    def check(text: str) -> object:
        if len(text) != length:
            raise ValueError(text)
        return parse(text)

    return check


def _cidr(text: str) -> object:
    if "/" not in text:
        raise ValueError(text)
    return ipaddress.ip_network(text, strict=False)


def _base64(text: str) -> object:
    return base64.b64decode(text, validate=True)


_FORMATS: dict[str, Callable[[str], object]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _fixed_length(date.fromisoformat, 10),
    "uuid": _fixed_length(uuid.UUID, 36),
    "ipv4": ipaddress.IPv4Address,
    "ipv6": ipaddress.IPv6Address,
    "cidr": _cidr,
    "byte": _base64,
}


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a rejected pattern is an answer here, not a log line on stderr


def _pattern(text: str) -> Any:
    """The compiled pattern (an RE2 object), None when RE2 rejects it (compiled per use: RE2
    compiles a CRD's short patterns in microseconds, and nothing module-wide is cached)."""
    try:
        return re2.compile(text, options=_RE2_OPTIONS)
    except re2.error:
        return None


# -------------------------------------------------------------- the walker


class _Walk:
    """One validation: collects causes, stops at `MAX_CAUSES`."""

    def __init__(self) -> None:
        self.causes: list[Cause] = []

    @property
    def full(self) -> bool:
        return len(self.causes) >= MAX_CAUSES

    def add(self, cause: Cause) -> None:
        if not self.full:
            self.causes.append(cause)

    def value(
        self, value: Any, schema: Schema, path: str, depth: int, *, root: bool = False, old: Any = ABSENT
    ) -> None:
        """`old`: the value at the same place in the object being updated (`ABSENT`: none,
        or a create); an unchanged value is not checked again (ratcheting)."""
        if self.full or (old is not ABSENT and same_json(value, old)):
            return
        if depth > MAX_DEPTH:
            self.add(
                (
                    path,
                    "FieldValueForbidden",
                    f"Forbidden: nested more than {MAX_DEPTH} levels deep (the embedded API server's limit)",
                )
            )
            return
        if value is None and schema.get("nullable") is True:
            return
        if not self._type(value, schema, path):
            return
        self._composition(value, schema, path, depth)
        if isinstance(value, str):
            self._string(value, schema, path)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self._number(value, schema, path)
        elif isinstance(value, list):
            self._array(value, schema, path, depth, old)
        elif isinstance(value, dict):
            self._object(value, schema, path, depth, root=root, old=old)
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and not any(same_json(value, e) for e in enum):
            self.add(_not_supported(path, value, enum))

    def _type(self, value: Any, schema: Schema, path: str) -> bool:
        if schema.get("x-kubernetes-int-or-string") is True:
            if _type_of(value) in ("integer", "string"):
                return True
            want = "integer,string"
        else:
            declared = schema.get("type")
            if not isinstance(declared, str) or not declared or _type_matches(declared, value):
                return True
            want = declared
        got = _type_of(value)
        self.add(_type_invalid(path, got, f"{path} in body must be of type {want}: {json.dumps(got)}"))
        return False

    def _composition(self, value: Any, schema: Schema, path: str, depth: int) -> None:
        if _COMPOSITION.isdisjoint(schema):
            return
        for sub in schema.get("allOf") or []:
            if isinstance(sub, dict):
                self.value(value, sub, path, depth + 1)
        if schema.get("x-kubernetes-int-or-string") is True:
            return  # the int-or-string type check already decided; its anyOf only restates it
        any_of = [s for s in schema.get("anyOf") or [] if isinstance(s, dict)]
        if any_of and not any(_passes(value, s, path, depth + 1) for s in any_of):
            self.add(
                _invalid(
                    path,
                    value if not isinstance(value, (dict, list)) else "",
                    f"{path} in body must validate at least one schema (anyOf)",
                )
            )
        one_of = [s for s in schema.get("oneOf") or [] if isinstance(s, dict)]
        if one_of:
            passing = sum(1 for s in one_of if _passes(value, s, path, depth + 1))
            if passing != 1:
                how = "at least one" if passing == 0 else "one and only one"
                self.add(
                    _invalid(
                        path,
                        value if not isinstance(value, (dict, list)) else "",
                        f"{path} in body must validate {how} schema (oneOf)",
                    )
                )
        not_ = schema.get("not")
        if isinstance(not_, dict) and _passes(value, not_, path, depth + 1):
            self.add(
                _invalid(
                    path,
                    value if not isinstance(value, (dict, list)) else "",
                    f"{path} in body must not validate the schema (not)",
                )
            )

    def _string(self, value: str, schema: Schema, path: str) -> None:
        max_len = schema.get("maxLength")
        if isinstance(max_len, int) and len(value) > max_len:
            self.add(_too_long(path, max_len))
        min_len = schema.get("minLength")
        if isinstance(min_len, int) and len(value) < min_len:
            self.add(_invalid(path, value, f"{path} in body should be at least {min_len} chars long"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            compiled = _pattern(pattern)
            if compiled is not None and compiled.search(value) is None:
                self.add(_invalid(path, value, f"{path} in body should match '{pattern}'"))
        fmt = schema.get("format")
        parse = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        if parse is not None and not _parses(parse, value):
            self.add(_type_invalid(path, value, f"{path} in body must be of type {fmt}: {json.dumps(value)}"))

    def _number(self, value: float, schema: Schema, path: str) -> None:
        maximum = _num(schema.get("maximum"))
        if maximum is not None:
            if schema.get("exclusiveMaximum") is True and value >= maximum:
                self.add(_invalid(path, value, f"{path} in body should be less than {go_number(maximum)}"))
            elif value > maximum:
                self.add(
                    _invalid(
                        path, value, f"{path} in body should be less than or equal to {go_number(maximum)}"
                    )
                )
        minimum = _num(schema.get("minimum"))
        if minimum is not None:
            if schema.get("exclusiveMinimum") is True and value <= minimum:
                self.add(_invalid(path, value, f"{path} in body should be greater than {go_number(minimum)}"))
            elif value < minimum:
                self.add(
                    _invalid(
                        path, value, f"{path} in body should be greater than or equal to {go_number(minimum)}"
                    )
                )
        factor = _num(schema.get("multipleOf"))
        if factor is not None and factor > 0:
            quotient = value / factor
            if not (math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9):
                self.add(_invalid(path, value, f"{path} in body should be a multiple of {go_number(factor)}"))

    def _array(self, value: list[Any], schema: Schema, path: str, depth: int, old: Any) -> None:
        max_items = schema.get("maxItems")
        if isinstance(max_items, int) and len(value) > max_items:
            self.add(_too_many(path, len(value), max_items))
        min_items = schema.get("minItems")
        if isinstance(min_items, int) and len(value) < min_items:
            self.add(_invalid(path, len(value), f"{path} in body should have at least {min_items} items"))
        items = schema.get("items")
        list_type = schema.get("x-kubernetes-list-type")
        keys = [k for k in schema.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
        if isinstance(items, dict):
            previous = _correlated_items(old, list_type, keys)
            for i, item in enumerate(value):
                if self.full:
                    return
                self.value(item, items, f"{path}[{i}]", depth + 1, old=previous(item))
        if list_type == "set":
            self._set(value, path)
        elif list_type == "map":
            self._map_list(value, keys, path)

    def _set(self, value: list[Any], path: str) -> None:
        seen: set[str] = set()
        for i, item in enumerate(value):
            text = _json_key(item)
            if text in seen:
                self.add(_duplicate(f"{path}[{i}]", item))
            else:
                seen.add(text)

    def _map_list(self, value: list[Any], keys: list[str], path: str) -> None:
        for i, item in enumerate(value):
            if item is not None and not isinstance(item, dict):
                self.add(_invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map"))
                return
        seen: set[str] = set()
        for i, item in enumerate(value):
            if item is None:
                continue
            key = {k: item[k] for k in keys if k in item}
            text = _json_key(key)
            if text in seen:
                self.add(_duplicate(f"{path}[{i}]", key))
            else:
                seen.add(text)

    def _object(
        self, value: Mapping[str, Any], schema: Schema, path: str, depth: int, *, root: bool, old: Any
    ) -> None:
        count = len(value)
        max_props = schema.get("maxProperties")
        if isinstance(max_props, int) and count > max_props:
            self.add(_too_many(path, count, max_props))
        min_props = schema.get("minProperties")
        if isinstance(min_props, int) and count < min_props:
            self.add(_invalid(path, count, f"{path} in body should have at least {min_props} properties"))
        for key in schema.get("required") or []:
            if isinstance(key, str) and key not in value:
                self.add(_required(_child(path, key)))
        if schema.get("x-kubernetes-embedded-resource") is True and not root:
            for key in ("apiVersion", "kind"):
                if key not in value:
                    self.add(_required(_child(path, key), "must not be empty"))
                elif not isinstance(value[key], str) or not value[key]:
                    self.add(_invalid(_child(path, key), value[key], "must be a non-empty string"))
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        extra = schema.get("additionalProperties")
        before = old if isinstance(old, dict) else {}
        for key, child in value.items():
            if self.full:
                return
            if root and key == "metadata":
                continue  # checked for every kind by py_engine.sim.kinds
            sub = properties.get(key)
            was = before.get(key, ABSENT)
            if isinstance(sub, dict):
                self.value(child, sub, _child(path, key), depth + 1, old=was)
            elif isinstance(extra, dict) and key not in properties:
                self.value(child, extra, _child(path, key), depth + 1, old=was)


def _correlated_items(old: Any, list_type: Any, keys: list[str]) -> Callable[[Any], Any]:
    """How an item of a list finds its earlier self, as kube-apiserver's ratcheting
    correlates them: a map list's by its keys, a set's by value, an atomic list's not at all."""
    if not isinstance(old, list) or list_type not in ("map", "set"):
        return lambda item: ABSENT
    if list_type == "set":
        return lambda item: item if any(same_json(item, o) for o in old) else ABSENT

    def by_keys(item: Any) -> Any:
        if not isinstance(item, dict):
            return ABSENT
        key = {k: item.get(k) for k in keys}
        return next(
            (o for o in old if isinstance(o, dict) and same_json({k: o.get(k) for k in keys}, key)), ABSENT
        )

    return by_keys


def _num(value: Any) -> float | None:
    """A schema bound that is a JSON number, else None."""
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else value


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _passes(value: Any, schema: Schema, path: str, depth: int) -> bool:
    walk = _Walk()
    walk.value(value, schema, path, depth)
    return not walk.causes


def validate_value(value: Any, schema: Schema, path: str = "") -> list[Cause]:
    """Causes for `value` under `schema` at field path `path` (empty: valid)."""
    walk = _Walk()
    walk.value(value, schema, path, 0)
    return walk.causes


def validate_custom_object(
    obj: Mapping[str, Any], schema: Schema | None, old: Mapping[str, Any] | None = None
) -> list[Cause]:
    """Causes for a whole custom object under its version's `openAPIV3Schema`.

    `metadata` is checked for every kind by `py_engine.sim.kinds`, so the schema is
    applied to the other fields. On an update (`old`: the stored object), values left
    as they were are not checked again, as kube-apiserver's validation ratcheting
    does: an object stored under an older, looser schema can still be written to."""
    if schema is None:
        return []
    walk = _Walk()
    walk.value(obj, schema, "", 0, root=True, old=ABSENT if old is None else old)
    return walk.causes
