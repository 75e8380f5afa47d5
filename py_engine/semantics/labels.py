"""Kubernetes label selectors: the string syntax and the `LabelSelector` dict.

The API server filters lists and watches with the string form
(`app=web,tier in (a,b),!canary`); workload specs, webhook configurations and
WorkloadSpread subsets carry the structured form (`matchLabels` +
`matchExpressions`). Both compile to one `Selector` so every layer matches
labels identically. Everything here is pure and the compiled selector is
immutable, so callers can precompile once and match many times.

Semantics follow Kubernetes exactly where it matters:
- `!=` and `notin` match objects that lack the key;
- `in` and `=` require the key;
- an empty selector matches everything; a *nil* `LabelSelector` (None) matches
  nothing (`LabelSelectorAsSelector(nil)` is `Nothing()`);
- `In`/`NotIn` expressions need at least one value, `Exists`/`DoesNotExist` none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Requirement",
    "Selector",
    "SelectorError",
    "everything",
    "format_label_selector",
    "matches_label_selector",
    "nothing",
    "parse_selector",
    "selector_from_label_selector",
    "validate_label_key",
    "validate_label_value",
]


class SelectorError(ValueError):
    """A selector that cannot be parsed or whose keys/values are invalid."""


_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

OPERATORS = frozenset({"=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"})


def validate_label_key(key: str) -> None:
    """Raise `SelectorError` unless `key` is a qualified name (`[prefix/]name`)."""
    if not key:
        raise SelectorError("label key must not be empty")
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise SelectorError(f"invalid label key {key!r}: prefix must be a DNS subdomain")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise SelectorError(
            f"invalid label key {key!r}: name part must be 63 characters or less, "
            "begin and end with an alphanumeric character and contain only [-_.a-zA-Z0-9]"
        )


def validate_label_value(value: str) -> None:
    """Raise `SelectorError` unless `value` is a valid label value (may be empty)."""
    if value == "":
        return
    if len(value) > 63 or not _NAME_RE.match(value):
        raise SelectorError(
            f"invalid label value {value!r}: must be 63 characters or less, begin and end "
            "with an alphanumeric character and contain only [-_.a-zA-Z0-9]"
        )


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a selector. `op` is one of `=`, `!=`, `in`, `notin`, `exists`,
    `!` (does not exist), `gt`, `lt`; `==` is normalised to `=`."""

    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        # A label value that is not a string (only in objects the API server has not
        # validated yet) equals no selector value.
        value = labels.get(self.key)
        text = value if isinstance(value, str) else None
        if op in ("=", "in"):
            return text is not None and text in self.values
        if op in ("!=", "notin"):
            return text is None or text not in self.values
        if text is None:
            return False
        try:
            have = int(text)
        except ValueError:
            return False
        (bound,) = self.values
        return have > int(bound) if op == "gt" else have < int(bound)

    def to_string(self) -> str:
        vals = sorted(self.values)
        if self.op == "exists":
            return self.key
        if self.op == "!":
            return "!" + self.key
        if self.op in ("=", "!="):
            return f"{self.key}{self.op}{vals[0]}"
        if self.op in ("gt", "lt"):
            return f"{self.key}{'>' if self.op == 'gt' else '<'}{vals[0]}"
        return f"{self.key} {self.op} ({','.join(vals)})"


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of requirements. `match_nothing` marks the nil selector."""

    requirements: tuple[Requirement, ...] = ()
    match_nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.match_nothing:
            return False
        lab: Mapping[str, str] = labels or {}
        return all(r.matches(lab) for r in self.requirements)

    def empty(self) -> bool:
        """True if it selects everything."""
        return not self.requirements and not self.match_nothing

    def to_string(self) -> str:
        return ",".join(r.to_string() for r in self.requirements)

    def __str__(self) -> str:
        return self.to_string()


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(match_nothing=True)


# ---------------------------------------------------------------- string syntax

_TOKEN_RE = re.compile(r"\s*(==|!=|=|\(|\)|,|!|>|<|[^\s=!(),<>]+)")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if not m:  # pragma: no cover - the regex accepts every non-space char
            raise SelectorError(f"unable to parse selector {text!r} at position {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def parse_selector(text: str | None) -> Selector:
    """Parse the string syntax; `None`/empty selects everything."""
    if text is None or text.strip() == "":
        return Selector()
    tokens = _tokenize(text)
    reqs: list[Requirement] = []
    i = 0

    def expect_value(idx: int) -> str:
        if idx >= len(tokens) or tokens[idx] in ("(", ")", ",", "=", "==", "!=", "!", ">", "<"):
            raise SelectorError(f"unable to parse requirement in selector {text!r}: expected a value")
        return tokens[idx]

    while i < len(tokens):
        tok = tokens[i]
        if tok == "!":
            i += 1
            if i >= len(tokens) or tokens[i] in ("(", ")", ",", "=", "==", "!=", "!"):
                raise SelectorError(f"unable to parse selector {text!r}: '!' must be followed by a key")
            key = tokens[i]
            validate_label_key(key)
            reqs.append(Requirement(key, "!"))
            i += 1
        else:
            key = tok
            if key in ("(", ")", ",", "=", "==", "!=", ">", "<"):
                raise SelectorError(f"unable to parse selector {text!r}: unexpected {key!r}")
            validate_label_key(key)
            i += 1
            nxt = tokens[i] if i < len(tokens) else ","
            if nxt == ",":
                reqs.append(Requirement(key, "exists"))
            elif nxt in ("=", "==", "!="):
                i += 1
                if i >= len(tokens) or tokens[i] == ",":
                    value = ""  # `key=` selects the empty value
                else:
                    value = expect_value(i)
                    i += 1
                validate_label_value(value)
                reqs.append(Requirement(key, "!=" if nxt == "!=" else "=", frozenset({value})))
            elif nxt in (">", "<"):
                i += 1
                value = expect_value(i)
                i += 1
                try:
                    int(value)
                except ValueError:
                    raise SelectorError(f"selector {text!r}: {nxt} needs an integer, got {value!r}") from None
                reqs.append(Requirement(key, "gt" if nxt == ">" else "lt", frozenset({value})))
            elif nxt in ("in", "notin"):
                i += 1
                if i >= len(tokens) or tokens[i] != "(":
                    raise SelectorError(f"unable to parse selector {text!r}: expected '(' after {nxt!r}")
                i += 1
                values: list[str] = []
                while True:
                    if i >= len(tokens):
                        raise SelectorError(f"unable to parse selector {text!r}: missing ')'")
                    if tokens[i] == ")":
                        i += 1
                        break
                    if tokens[i] == ",":
                        i += 1
                        continue
                    value = expect_value(i)
                    validate_label_value(value)
                    values.append(value)
                    i += 1
                if not values:
                    raise SelectorError(f"selector {text!r}: {nxt} needs at least one value")
                reqs.append(Requirement(key, nxt, frozenset(values)))
            else:
                raise SelectorError(
                    f"unable to parse selector {text!r}: unexpected {nxt!r} after key {key!r}"
                )
        if i < len(tokens):
            if tokens[i] != ",":
                raise SelectorError(
                    f"unable to parse selector {text!r}: expected ',' but found {tokens[i]!r}"
                )
            i += 1
            if i >= len(tokens):
                raise SelectorError(f"unable to parse selector {text!r}: trailing ','")
    return Selector(tuple(reqs))


# ------------------------------------------------------------- LabelSelector dict

_EXPR_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def selector_from_label_selector(selector: Mapping[str, Any] | None) -> Selector:
    """Compile a `metav1.LabelSelector` dict. None selects nothing, `{}` everything."""
    if selector is None:
        return nothing()
    if not isinstance(selector, Mapping):
        raise SelectorError(f"label selector must be an object, got {type(selector).__name__}")
    reqs: list[Requirement] = []
    match_labels = selector.get("matchLabels")
    if match_labels is None:
        match_labels = {}
    if not isinstance(match_labels, Mapping):
        raise SelectorError("matchLabels must be an object")
    for key in sorted(match_labels):
        value = match_labels[key]
        if not isinstance(value, str):
            raise SelectorError(f"matchLabels[{key!r}] must be a string")
        validate_label_key(key)
        validate_label_value(value)
        reqs.append(Requirement(key, "=", frozenset({value})))
    exprs = selector.get("matchExpressions")
    if exprs is None:
        exprs = []
    if not isinstance(exprs, list):
        raise SelectorError("matchExpressions must be a list")
    for expr in exprs:
        if not isinstance(expr, Mapping):
            raise SelectorError("each matchExpression must be an object")
        key = expr.get("key")
        operator = expr.get("operator")
        values = expr.get("values") or []
        if not isinstance(key, str):
            raise SelectorError("matchExpression key must be a string")
        validate_label_key(key)
        if operator not in _EXPR_OPS:
            raise SelectorError(f"{operator!r} is not a valid label selector operator")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise SelectorError("matchExpression values must be a list of strings")
        if operator in ("In", "NotIn") and not values:
            raise SelectorError(f"values: Required value: must be specified when `operator` is {operator!r}")
        if operator in ("Exists", "DoesNotExist") and values:
            raise SelectorError(f"values: Forbidden: may not be specified when `operator` is {operator!r}")
        for v in values:
            validate_label_value(v)
        reqs.append(Requirement(key, _EXPR_OPS[operator], frozenset(values)))
    return Selector(tuple(reqs))


def matches_label_selector(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """One-shot convenience: does a `LabelSelector` dict select these labels?"""
    return selector_from_label_selector(selector).matches(labels)


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """The string form of a `LabelSelector` dict, as a Scale's `status.selector` carries it."""
    return selector_from_label_selector(selector).to_string()


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """`metadata.labels` of an object, `{}` if absent."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def union_keys(selectors: Iterable[Selector]) -> set[str]:
    """Every label key any of the selectors mentions (for index building)."""
    return {r.key for s in selectors for r in s.requirements}
