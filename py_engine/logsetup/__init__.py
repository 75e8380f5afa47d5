"""One logging setup for both daemons: level, text or JSON lines, structured fields.

The webhook and the controller run side by side in a cluster and an operator
reads them together (`kubectl logs`, a log pipeline), so both write the same
shape: a UTC timestamp, the level, the logger, the message, and the structured
fields of the event (namespace, pod, spread, subset, decision, duration...).

Fields travel in the standard `extra` mapping under one key, so call sites stay
plain `logging` calls::

    log.info("admitted", extra=fields(namespace="default", pod="web-1", subset="zone-a"))

`--log-format text` (the default, for people) renders them as `key=value`
after the message; `--log-format json` writes one JSON object per line (for a
pipeline), fields as top-level keys. Exceptions are rendered in both formats;
a JSON record keeps its traceback in one `exception` string, so a line is
always one event.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

FIELDS_KEY = "spreadgate_fields"
LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")
DEFAULT_LEVEL = "info"
DEFAULT_FORMAT = "text"


def fields(**values: Any) -> dict[str, Any]:
    """The `extra` argument that attaches structured fields to one log record (None values dropped)."""
    return {FIELDS_KEY: {key: value for key, value in values.items() if value is not None}}


def record_fields(record: logging.LogRecord) -> Mapping[str, Any]:
    """The structured fields attached to `record` (empty when there are none)."""
    attached = getattr(record, FIELDS_KEY, None)
    return attached if isinstance(attached, Mapping) else {}


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _text_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), default=str)
    if text == "" or any(c.isspace() or c in '"=' for c in text):
        return json.dumps(text)
    return text


class TextFormatter(logging.Formatter):
    """`2026-01-02T03:04:05.678Z INFO logger: message key=value ...`, then any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        extra = " ".join(f"{key}={_text_value(value)}" for key, value in record_fields(record).items())
        if extra:
            line = f"{line} {extra}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, the fields, and `exception` if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, separators=(",", ":"))


def add_arguments(parser: argparse.ArgumentParser, *, level: str = DEFAULT_LEVEL) -> None:
    """The `--log-level` and `--log-format` flags every daemon takes (`level`: the default level)."""
    parser.add_argument(
        "--log-level", choices=LEVELS, default=level, help="least severe level written (default: %(default)s)"
    )
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default=DEFAULT_FORMAT,
        help="text for people, json (one object per line) for a log pipeline (default: %(default)s)",
    )


def configure(level: str = DEFAULT_LEVEL, fmt: str = DEFAULT_FORMAT, stream: TextIO | None = None) -> None:
    """Route the root logger to `stream` (stderr) in the chosen format; replaces earlier handlers."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # The Kubernetes client and urllib3 log every retry at INFO/WARNING; keep them at WARNING
    # unless debugging, so the daemons' own events stay readable.
    quiet = logging.DEBUG if level == "debug" else logging.WARNING
    for noisy in ("urllib3", "kubernetes", "werkzeug"):
        logging.getLogger(noisy).setLevel(quiet)


def configure_from(args: argparse.Namespace) -> None:
    """`configure` with the flags `add_arguments` added."""
    configure(getattr(args, "log_level", DEFAULT_LEVEL), getattr(args, "log_format", DEFAULT_FORMAT))
