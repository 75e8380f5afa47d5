"""Reading a `/metrics` body as a scraper does, with prometheus_client's own parser, so a
test asserts on families, samples and label sets rather than on the text's layout."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


def exposed_types(text: str) -> dict[str, str]:
    """Each metric's name as its `# TYPE` line writes it, and its type. The parser drops a
    counter family's `_total`; it is put back, as the exposition (and docs/operations.md) name it."""
    return {
        family.name + "_total" if family.type == "counter" else family.name: family.type
        for family in text_string_to_metric_families(text)
    }


def label_names(text: str) -> dict[str, set[frozenset[str]]]:
    """Each metric's exposed name (as `exposed_types`) and the label-name sets of its samples
    (a histogram's `le` left out)."""
    return {
        family.name + "_total" if family.type == "counter" else family.name: {
            frozenset(sample.labels) - {"le"} for sample in family.samples
        }
        for family in text_string_to_metric_families(text)
    }


def samples(text: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def value(text: str, name: str, **labels: str) -> float | None:
    """The value of the one sample `name{labels}`, or None when the body has no such sample."""
    found = [s.value for s in samples(text) if s.name == name and s.labels == labels]
    assert len(found) <= 1, f"{name}{labels} appears {len(found)} times"
    return found[0] if found else None
