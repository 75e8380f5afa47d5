"""Fixtures of the committer's conflict tests (`replica_kit`).

- `env`      the embedded API server over HTTPS (`webhook_testkit.env`).
- `replica`  a `replica_kit.Replica` for the conflict tests (`CONFLICT_OPTIONS`) on a spread
             `default/ws` with one subset (closed at teardown).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import webhook_testkit
from replica_kit import CONFLICT_OPTIONS, Replica
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

env = webhook_testkit.env  # the fixture, used by name


@pytest.fixture
def replica(env: KubeEnv) -> Iterator[Replica]:
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    made = Replica(env, **CONFLICT_OPTIONS)
    yield made
    made.close()
