"""`tune_collector`: the young generation's threshold set, the older ones kept, 0 a no-op;
`freeze_when_ready`."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from webhook.collector import YOUNG_THRESHOLD, freeze_when_ready, tune_collector

pytestmark = pytest.mark.timeout(10)


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_young_threshold_is_set_and_the_older_ones_kept() -> None:
    gc.set_threshold(700, 11, 12)
    tune_collector(YOUNG_THRESHOLD)
    assert gc.get_threshold() == (10_000, 11, 12)


def test_zero_leaves_the_interpreters_setting_and_negative_is_refused() -> None:
    gc.set_threshold(700, 10, 10)
    tune_collector(0)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(ValueError, match="0 \\(unchanged\\) or positive"):
        tune_collector(-1)
    assert gc.get_threshold() == (700, 10, 10)


def test_the_cached_objects_are_frozen_once_the_caches_are_ready_and_not_before() -> None:
    """`freeze_when_ready` (issue 28): live objects leave the cyclic collector's generations once
    `ready` says the caches hold their first list; a `ready` that never becomes true freezes nothing."""
    gc.unfreeze()
    cached = [{"metadata": {"name": f"p{i}"}} for i in range(1000)]
    try:
        freeze_when_ready(lambda timeout: False, timeout=0.0).join(5)
        assert gc.get_freeze_count() == 0
        asked: list[float] = []
        freeze_when_ready(lambda timeout: asked.append(timeout) or True, timeout=7.0).join(5)
        assert asked == [7.0]
        assert gc.get_freeze_count() >= len(cached)  # the cache's dicts among them
        assert not any(obj is cached[0] for obj in gc.get_objects())  # out of every generation
    finally:
        gc.unfreeze()
