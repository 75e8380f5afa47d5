"""`UuidSource`: version-4 UUIDs, unique, from entropy drawn in batches, never shared with a fork."""

from __future__ import annotations

import os
import threading
import uuid
from unittest import mock

import pytest

from py_engine.semantics.uids import UuidSource, uuid_texts

pytestmark = pytest.mark.timeout(30)


def test_uuids_are_version_4_rfc_4122_and_unique() -> None:
    source = UuidSource(batch=8)
    made = [uuid.UUID(source()) for _ in range(5000)]
    assert len(set(made)) == 5000
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in made)


def test_entropy_is_drawn_once_per_batch() -> None:
    source = UuidSource(batch=64)
    with mock.patch("py_engine.semantics.uids.os.urandom", wraps=os.urandom) as urandom:
        for _ in range(200):
            source()
    assert urandom.call_count == 4  # ceil(200 / 64)
    assert all(call.args == (16 * 64,) for call in urandom.call_args_list)


def test_a_forked_child_never_repeats_its_parents_next_uuids() -> None:
    source = UuidSource(batch=256)
    source()  # the pool is filled
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, "".join(source() for _ in range(10)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read()
    os.waitpid(pid, 0)
    parent = "".join(source() for _ in range(10))
    assert len(child) == len(parent) == 360 and child != parent
    assert not {child[i : i + 36] for i in range(0, 360, 36)} & {
        parent[i : i + 36] for i in range(0, 360, 36)
    }


def test_batch_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"^batch must be at least 1$"):
        UuidSource(batch=0)


def test_texts_are_those_the_uuid_module_writes_for_the_same_bytes() -> None:
    entropy = os.urandom(16 * 512) + bytes(16) + b"\xff" * 16
    chunks = [entropy[i : i + 16] for i in range(0, len(entropy), 16)]
    assert uuid_texts(entropy) == [str(uuid.UUID(bytes=chunk, version=4)) for chunk in chunks]


def test_concurrent_callers_never_share_a_uuid() -> None:
    source = UuidSource(batch=16)  # small: the threads refill it often, also together
    drawn: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def draw(into: list[str]) -> None:
        start.wait(timeout=10)
        into.extend(source() for _ in range(2000))

    threads = [threading.Thread(target=draw, args=(into,)) for into in drawn]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    texts = [text for into in drawn for text in into]
    assert len(texts) == 16000 and len(set(texts)) == 16000


def test_a_batch_of_one_draws_per_call_and_the_default_batch_is_256() -> None:
    one = UuidSource(batch=1)
    with mock.patch("py_engine.semantics.uids.os.urandom", wraps=os.urandom) as urandom:
        one()
        one()
        UuidSource()()
    assert [call.args for call in urandom.call_args_list] == [(16,), (16,), (16 * 256,)]


def test_the_fork_handler_empties_every_pool() -> None:
    from py_engine.semantics import uids

    source = UuidSource(batch=4)
    source()  # three texts left in the pool
    uids._after_fork_in_child()
    with mock.patch("py_engine.semantics.uids.os.urandom", wraps=os.urandom) as urandom:
        source()
    assert urandom.call_count == 1
