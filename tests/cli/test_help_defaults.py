"""Every command's `--help` shows the defaults of its options and keeps the hand-laid description."""

from __future__ import annotations

import argparse

import pytest

from py_engine.cli import build_parser
from py_engine.cli.helpformat import DefaultsHelpFormatter, WrappedDefaultsHelpFormatter, meaningful_default


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((f"{prefix}{name}", child))
                found.extend(_commands(child, f"{prefix}{name} "))
    return found


def test_every_option_with_a_default_shows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "2000")  # no wrapping inside a default
    commands = _commands(build_parser())
    assert {"rank", "gatekeeper", "validate", "demo", "webhook", "controller", "united plan"} <= {
        n for n, _ in commands
    }
    for name, parser in commands:
        assert parser.formatter_class in (DefaultsHelpFormatter, WrappedDefaultsHelpFormatter), name
        parser.format_help()  # renders without error
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.option_strings and meaningful_default(action):
                shown = formatter._expand_help(action)
                assert "default" in shown.lower(), (name, shown)  # the value, or words for it ("a free port")


def test_the_rank_help_names_its_defaults_and_keeps_the_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "2000")
    rank = dict(_commands(build_parser()))["rank"]
    text = rank.format_help()
    assert "whose order to model (default: replicaset)" in text
    assert "output format (default: names)" in text
    assert "  kubectl get pods -l app=web -o json | spreadgate rank -\n" in text  # RawDescription layout


def test_nothing_is_added_for_flags_and_empty_defaults() -> None:
    parser = argparse.ArgumentParser(formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--flag", action="store_true", help="a flag")
    parser.add_argument("--many", action="append", default=[], help="repeatable")
    parser.add_argument("--level", default="info", help="already says so (default info)")
    text = parser.format_help()
    assert "a flag\n" in text and "repeatable\n" in text and "(default: info)" not in text
