"""The daemons' shared logging setup: levels, text and JSON lines, structured fields."""

from __future__ import annotations

import argparse
import io
import json
import logging
from collections.abc import Iterator

import pytest

from py_engine.logsetup import add_arguments, configure, configure_from, fields


@pytest.fixture(autouse=True)
def _restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def _emit(level: str, fmt: str) -> str:
    stream = io.StringIO()
    configure(level, fmt, stream)
    log = logging.getLogger("spreadgate.test")
    log.debug("hidden unless debug", extra=fields(pod="p"))
    log.info(
        "admitted",
        extra=fields(namespace="default", pod="web-1", subset="zone a", duration_ms=1.5, skipped=None),
    )
    return stream.getvalue()


def test_text_lines_carry_time_level_logger_message_and_fields() -> None:
    (line,) = _emit("info", "text").splitlines()
    stamp, level, logger, rest = line.split(" ", 3)
    assert stamp.endswith("Z") and "T" in stamp
    assert (level, logger) == ("INFO", "spreadgate.test:")
    assert rest == 'admitted namespace=default pod=web-1 subset="zone a" duration_ms=1.5'


def test_json_lines_are_one_object_per_event_with_fields_at_top_level() -> None:
    (line,) = _emit("info", "json").splitlines()
    entry = json.loads(line)
    assert entry["level"] == "info" and entry["logger"] == "spreadgate.test" and entry["msg"] == "admitted"
    assert entry["namespace"] == "default" and entry["subset"] == "zone a" and entry["duration_ms"] == 1.5
    assert "skipped" not in entry


def test_debug_level_shows_debug_records() -> None:
    assert len(_emit("debug", "json").splitlines()) == 2


def test_an_exception_stays_inside_one_json_line() -> None:
    stream = io.StringIO()
    configure("info", "json", stream)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("x").exception("write failed", extra=fields(spread="s"))
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert "RuntimeError: boom" in entry["exception"] and entry["spread"] == "s"


def test_flags_default_to_info_text_and_reject_unknown_values() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([])
    assert (args.log_level, args.log_format) == ("info", "text")
    with pytest.raises(SystemExit):
        parser.parse_args(["--log-format", "xml"])
    configure_from(parser.parse_args(["--log-level", "warning"]))
    assert logging.getLogger().level == logging.WARNING


def test_configure_replaces_earlier_handlers() -> None:
    configure("info", "text", io.StringIO())
    configure("info", "json", io.StringIO())
    assert len(logging.getLogger().handlers) == 1
    with pytest.raises(ValueError, match="log level"):
        configure("loud", "text")
