"""The running controller reads and watches custom workload kinds given with `--custom-workload`.

On the embedded cluster with a GameServerSet CRD: without the flag a spread over a
GameServerSet reports `KindNotAllowed`; with it the controller finds the kind's resource
by discovery, reads the workload (replicas from the flag's path) and writes the status
without `TargetNotFound`, both from fresh lists (`--once`) and from watch caches, where a
change of the custom replicas path triggers a sync.
"""

from __future__ import annotations

from typing import Any

import pytest
import webhook_testkit
from cli_kit import run_cli
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, spread

from benchmarks.kube_objects import container_spec, controller_ref, custom_resource_definition, placed_pod
from py_engine.apiclient import CRDS, PODS, Resource
from py_engine.apiclient.discovery import discover_resource
from py_engine.model.workloads import whitelist_from_flags
from py_engine.runtime.manager import Manager
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller
from py_engine.workloadspread.controller.runtime.loop import SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource
from py_engine.workloadspread.controller.target import CONDITION, KIND_NOT_ALLOWED

kube_env = webhook_testkit.kube_env  # the fixture, used by name
GAME_SERVER_SETS = Resource("game.kruise.io", "v1alpha1", "gameserversets", True, "GameServerSet")
FLAG = "game.kruise.io/GameServerSet=spec.replicas"


def install_game_server_set(env: KubeEnv, replicas: int) -> None:
    """The CRD, a GameServerSet `gss` and three pods it owns: two placed in subset a, one in b."""
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd = custom_resource_definition(
        "game.kruise.io", "GameServerSet", versions=("v1alpha1",), schema=schema, subresources={}
    )
    env.client.create(CRDS, None, crd)
    gss = wait_until(lambda: _create_gss(env, replicas), what="the GameServerSet resource to be served")
    owner = controller_ref("GameServerSet", "gss", gss["metadata"]["uid"], "game.kruise.io/v1alpha1")
    for name, subset in (("gss-0", "a"), ("gss-1", "a"), ("gss-2", "b")):
        env.client.create(
            PODS, "default", placed_pod(name, owner, subset, spec=container_spec("game", "game:1"))
        )
    env.client.create(
        SPREADS,
        "default",
        spread(
            "ws",
            [{"name": "a", "maxReplicas": "50%"}, {"name": "b"}],
            target="gss",
            kind="GameServerSet",
            api_version="game.kruise.io/v1alpha1",
        ),
    )


def _create_gss(env: KubeEnv, replicas: int) -> dict[str, Any] | None:
    if discover_resource(env.client, "game.kruise.io", "GameServerSet") is None:
        return None
    return dict(
        env.client.create(
            GAME_SERVER_SETS,
            "default",
            {
                "apiVersion": "game.kruise.io/v1alpha1",
                "kind": "GameServerSet",
                "metadata": {"name": "gss", "namespace": "default"},
                "spec": {"replicas": replicas},
            },
        )
    )


def subsets(env: KubeEnv) -> dict[str, tuple[int, int]]:
    status = env.client.get(SPREADS, "default", "ws").get("status") or {}
    return {s["name"]: (s["replicas"], s["missingReplicas"]) for s in status.get("subsetStatuses") or []}


def target_conditions(env: KubeEnv) -> list[str]:
    status = env.client.get(SPREADS, "default", "ws").get("status") or {}
    return [c["reason"] for c in status.get("conditions") or [] if c.get("type") == CONDITION]


def test_discovery_finds_the_custom_kind_and_not_an_unserved_one(kube_env: KubeEnv) -> None:
    install_game_server_set(kube_env, 3)
    assert discover_resource(kube_env.client, "game.kruise.io", "GameServerSet") == GAME_SERVER_SETS
    assert discover_resource(kube_env.client, "game.kruise.io", "GameServer") is None
    assert discover_resource(kube_env.client, "absent.example.com", "Thing") is None


def test_fresh_lists_read_the_custom_workload_only_when_it_is_listed(kube_env: KubeEnv) -> None:
    install_game_server_set(kube_env, 3)
    unlisted = ListedSource(kube_env.client)
    unlisted.refresh()
    [report] = SpreadController(kube_env.client, unlisted, RealClock()).step()
    assert report.outcome == "synced" and target_conditions(kube_env) == [KIND_NOT_ALLOWED]

    source = ListedSource(kube_env.client, whitelist=whitelist_from_flags([FLAG]))
    source.refresh()
    [report] = SpreadController(kube_env.client, source, RealClock()).step()
    assert report.outcome == "synced" and report.result is not None
    assert report.result.target_problem is None and report.result.replicas == 3
    assert target_conditions(kube_env) == []
    assert subsets(kube_env) == {"a": (2, 0), "b": (1, -1)}  # 50% of 3 is 2 (ceiling)


def test_the_running_controller_watches_the_custom_kind(kube_env: KubeEnv) -> None:
    install_game_server_set(kube_env, 3)
    manager = Manager(kube_env.client)
    add_spread_controller(manager, whitelist=whitelist_from_flags([FLAG]))
    with manager:
        wait_until(lambda: subsets(kube_env) == {"a": (2, 0), "b": (1, -1)}, what="the spread's status")
        assert target_conditions(kube_env) == []
        kube_env.client.patch(GAME_SERVER_SETS, "default", "gss", {"spec": {"replicas": 6}})
        # 50% of 6 is 3: subset a misses one pod, seen through the GameServerSet's watch.
        wait_until(lambda: subsets(kube_env).get("a") == (2, 1), what="the status after the scale")


def test_the_controller_cli_accepts_the_flag(kube_env: KubeEnv, capsys: pytest.CaptureFixture[str]) -> None:
    install_game_server_set(kube_env, 3)
    once = ["--once", "--no-united-deployments", "--custom-workload", FLAG]
    code, out, _ = run_cli(capsys, "controller", "--kubeconfig", kube_env.kubeconfig, *once)
    assert code == 0
    assert "default/ws: synced" in out and "TargetNotFound" not in out
    assert subsets(kube_env) == {"a": (2, 0), "b": (1, -1)} and target_conditions(kube_env) == []
