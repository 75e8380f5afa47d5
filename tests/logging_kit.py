"""Putting the root logger back after a test that configured it (py_engine.logsetup does)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def root_logger_restored() -> Iterator[logging.Logger]:
    """The root logger; on exit its handlers (pytest's among them) and level are what they were."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    try:
        yield root
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
