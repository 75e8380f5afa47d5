"""`admission_context`: the same `AdmissionContext` as the dataclass's own constructor."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from py_engine.model.workloads import EMPTY_WHITELIST, whitelist_from_entries
from py_engine.workloadspread.admission.context import AdmissionContext, admission_context, no_lookup

pytestmark = pytest.mark.timeout(10)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_every_field_given_is_the_same_context_as_the_constructor_builds() -> None:
    values = {
        f.name: getattr(AdmissionContext(now=NOW, lookup=no_lookup), f.name)
        for f in dataclasses.fields(AdmissionContext)
    }
    values["whitelist"] = whitelist_from_entries([{"group": "x", "kind": "Y"}])
    built = admission_context(**values)
    assert type(built) is AdmissionContext
    assert built == AdmissionContext(**values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.now = NOW  # type: ignore[misc]


def test_a_missing_or_unknown_field_goes_through_the_constructor() -> None:
    partial = admission_context(now=NOW, lookup=no_lookup)
    assert partial == AdmissionContext(now=NOW, lookup=no_lookup)
    assert partial.caches is None and partial.whitelist == EMPTY_WHITELIST
    with pytest.raises(TypeError):
        admission_context(now=NOW, lookup=no_lookup, unknown=1)
