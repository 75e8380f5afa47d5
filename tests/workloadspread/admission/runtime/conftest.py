"""Fixtures of the committer's conflict tests (`replica_kit`).

- `env`      the embedded API server over HTTPS (`webhook_testkit.kube_env`).
- `replica`  a `replica_kit.Replica` on a spread `default/ws` with one subset (closed at teardown).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from replica_kit import Replica
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401


@pytest.fixture
def env(request: pytest.FixtureRequest) -> KubeEnv:
    """`kube_env` from webhook_testkit under a local name (no shadowed import)."""
    return request.getfixturevalue("kube_env")  # type: ignore[no-any-return]


@pytest.fixture
def replica(env: KubeEnv) -> Iterator[Replica]:
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    made = Replica(env)
    yield made
    made.close()
