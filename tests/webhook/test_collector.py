"""`tune_collector`: the young generation's threshold set, the older ones kept, 0 a no-op."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from webhook.collector import YOUNG_THRESHOLD, tune_collector

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
