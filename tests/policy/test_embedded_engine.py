"""The embedded regorus backend: loading, evaluation, threads, errors."""

from __future__ import annotations

import threading

import pytest

from py_engine.policy import PolicyError, PolicySource, create_engine, load_policy_sources
from py_engine.policy.embedded import EmbeddedEngine

POLICY = PolicySource(
    "demo.rego",
    'package demo\nimport rego.v1\nnames contains n if { some n in input.names; startswith(n, "a") }\n'
    "first := input.names[0]\n",
)


def test_sets_come_back_as_sorted_lists_and_undefined_as_none() -> None:
    engine = EmbeddedEngine((POLICY,))
    assert engine.evaluate("data.demo.names", {"names": ["ab", "b", "aa"]}) == ["aa", "ab"]
    assert engine.evaluate("data.demo.first", {"names": []}) is None


def test_each_thread_gets_its_own_engine() -> None:
    engine = EmbeddedEngine((POLICY,))
    results: dict[int, object] = {}

    def work(i: int) -> None:
        results[i] = engine.evaluate("data.demo.first", {"names": [f"x{i}"]})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == {i: f"x{i}" for i in range(8)}


def test_parse_errors_name_the_file_without_backtrace() -> None:
    with pytest.raises(PolicyError) as excinfo:
        EmbeddedEngine((PolicySource("broken.rego", "package x\nimport rego.v1\nallow if {\n"),))
    message = str(excinfo.value)
    assert "broken.rego" in message
    assert "Stack backtrace" not in message


def test_unknown_rule_is_a_policy_error() -> None:
    engine = EmbeddedEngine((POLICY,))
    with pytest.raises(PolicyError):
        engine.evaluate("data.demo.nope", {})


def test_shipped_policies_load_without_tests() -> None:
    sources = load_policy_sources()
    assert sources and not any(s.is_test for s in sources)
    assert any(s.path.startswith("validation/") for s in sources)
    engine = create_engine(sources=sources)
    assert engine.evaluate("data.spreadgate.validation.violation", {"kind": "ConfigMap"}) == []


def test_policy_dir_override(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "x.rego").write_text("package x\nimport rego.v1\nv := 1\n")
    monkeypatch.setenv("SPREADGATE_POLICY_DIR", str(tmp_path))
    assert [s.path for s in load_policy_sources()] == ["x.rego"]
    monkeypatch.setenv("SPREADGATE_POLICY_DIR", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError):
        load_policy_sources()


def test_engines_are_never_dropped_on_a_foreign_thread() -> None:
    """Interpreters built on worker threads are released by those threads, so neither
    closing nor garbage-collecting the engine elsewhere raises regorus's
    "dropped on another thread" error (an unraisable warning, hence a test error)."""
    import gc

    holder = [EmbeddedEngine((POLICY,))]
    evaluated, released = threading.Event(), threading.Event()
    results: list[object] = []

    def work() -> None:
        results.append(holder[0].evaluate("data.demo.first", {"names": ["w"]}))
        evaluated.set()
        released.wait(timeout=30)  # stay alive while the main thread drops the engine

    worker = threading.Thread(target=work)
    worker.start()
    assert evaluated.wait(timeout=30)
    holder[0].close()
    holder.clear()  # the last reference: the finalizer runs here, on the main thread
    gc.collect()
    released.set()
    worker.join(timeout=30)
    assert results == ["w"]
