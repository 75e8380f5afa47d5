"""Embedded backend: regorus, Microsoft's Rust Rego interpreter, in-process.

A regorus `Engine` is bound to the thread that created it (using or cloning it
from another thread panics), so each thread gets its own engine, built lazily
from the same policy sources. Building one takes milliseconds; evaluating a
small decision takes microseconds.
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import regorus

from py_engine.policy.interface import PolicyError
from py_engine.policy.sources import PolicySource

UNDEFINED_JSON = '"<undefined>"'


def build_regorus_engine(sources: tuple[PolicySource, ...], *, coverage: bool = False) -> Any:
    """A fresh regorus engine with every source loaded (Rego v1 syntax)."""
    engine = regorus.Engine()
    if coverage:
        engine.set_enable_coverage(True)
    for source in sources:
        try:
            engine.add_policy(source.path, source.text)
        except RuntimeError as exc:  # regorus reports parse errors as RuntimeError
            raise PolicyError(f"cannot load {source.path}: {error_summary(str(exc))}") from exc
    return engine


def error_summary(message: str, limit: int = 8) -> str:
    """The human part of a regorus error: regorus appends a Rust backtrace to errors; keep the human part only."""
    head = message.split("Stack backtrace:", 1)[0]
    return "\n".join(head.strip().splitlines()[:limit])


# Every thread's interpreters, keyed by EmbeddedEngine serial number. A regorus
# engine must also be *dropped* on the thread that built it (dropping it elsewhere
# panics), so interpreters live in the owning thread's local storage, which the
# thread clears itself when it exits, and are otherwise only removed by code
# running on that thread (`close`, or the finalizer when it happens to run there).
_THREAD_ENGINES = threading.local()
_SERIALS = itertools.count()


def _thread_engines() -> dict[int, Any]:
    engines: dict[int, Any] | None = getattr(_THREAD_ENGINES, "engines", None)
    if engines is None:
        engines = {}
        _THREAD_ENGINES.engines = engines
    return engines


def _drop_current_thread_engine(serial: int) -> None:
    _thread_engines().pop(serial, None)


class EmbeddedEngine:
    """`PolicyEngine` on regorus, one interpreter per thread."""

    def __init__(self, sources: tuple[PolicySource, ...]) -> None:
        self._sources = sources
        self._serial = next(_SERIALS)
        weakref.finalize(self, _drop_current_thread_engine, self._serial)
        # Fail at construction, not on the first request, if a policy does not load.
        self._engine()

    def _engine(self) -> Any:
        engines = _thread_engines()
        engine = engines.get(self._serial)
        if engine is None:
            engine = build_regorus_engine(self._sources)
            engines[self._serial] = engine
        return engine

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        engine = self._engine()
        try:
            engine.set_input(dict(input_document))
            # JSON out: regorus cannot hand back a Rego set of objects as a Python set.
            raw = engine.eval_rule_as_json(rule)
        except RuntimeError as exc:
            raise PolicyError(f"evaluating {rule}: {error_summary(str(exc))}") from exc
        # regorus spells an undefined rule as this JSON string; OPA omits "result".
        return None if raw == UNDEFINED_JSON else json.loads(raw)

    def health(self, timeout: float = 1.0) -> str | None:
        """None: the policies are loaded (they were when the engine was built; this thread's
        interpreter is built from them if it has none yet). Else why not."""
        try:
            self._engine()
        except PolicyError as exc:
            return str(exc)
        return None

    def close(self) -> None:
        """Release this thread's interpreter; other threads release theirs when they exit."""
        _drop_current_thread_engine(self._serial)
