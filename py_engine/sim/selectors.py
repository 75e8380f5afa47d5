"""Field selectors (`spec.nodeName=n1,status.phase!=Running`) for list and watch.

Kubernetes supports only `=`, `==` and `!=` on a per-resource set of fields;
an unsupported field is a 400 (`field label not supported`). A missing field
compares as the empty string, so `spec.nodeName=` selects unscheduled pods.
Label selectors live in `py_engine.semantics.labels` (pure, shared with the webhook).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from py_engine.sim.interface import JSON
from py_engine.sim.resources import get_path


class FieldSelectorError(ValueError):
    """A malformed field selector or one naming an unsupported field."""


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    path: str
    equal: bool
    value: str

    def matches(self, obj: JSON) -> bool:
        raw = get_path(obj, self.path)
        have = "" if raw is None else (str(raw).lower() if isinstance(raw, bool) else str(raw))
        return (have == self.value) == self.equal


def parse_field_selector(text: str | None, allowed: Iterable[str]) -> tuple[FieldRequirement, ...]:
    """Parse and check against the resource's supported fields."""
    if text is None or not text.strip():
        return ()
    allowed_set = set(allowed)
    reqs: list[FieldRequirement] = []
    for term in text.split(","):
        term = term.strip()
        if not term:
            raise FieldSelectorError(f"invalid field selector {text!r}: empty term")
        if "!=" in term:
            key, value = term.split("!=", 1)
            equal = False
        elif "==" in term:
            key, value = term.split("==", 1)
            equal = True
        elif "=" in term:
            key, value = term.split("=", 1)
            equal = True
        else:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        key = key.strip()
        if key not in allowed_set:
            raise FieldSelectorError(f"field label not supported: {key}")
        reqs.append(FieldRequirement(key, equal, value.strip()))
    return tuple(reqs)


def field_predicate(reqs: tuple[FieldRequirement, ...]) -> Callable[[JSON], bool] | None:
    if not reqs:
        return None

    def pred(obj: JSON) -> bool:
        return all(r.matches(obj) for r in reqs)

    return pred
