"""The embedded stack (demo, playground, simulate, e2e tests) registers the shipped webhook configurations.

A second, hand-written copy had drifted from `manifests/base/webhook-configurations.yaml` (no
UnitedDeployment validation, another failure policy, other side effects), so the playground ran
an admission setup no cluster has. Only `clientConfig` may differ: a URL instead of the Service,
and the throwaway CA instead of the one cert-manager injects.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from py_engine.assembled_stack import MUTATING, VALIDATING, Stack
from py_engine.sim.interface import ApiError
from py_engine.sim.nodepool import default_pool

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "manifests" / "base" / "webhook-configurations.yaml"
INVALID = REPO / "manifests" / "examples" / "invalid"


def _without_client_config(config: dict[str, Any]) -> dict[str, Any]:
    stripped = copy.deepcopy({key: config[key] for key in ("apiVersion", "kind", "webhooks")})
    stripped["metadata"] = {"name": config["metadata"]["name"], "labels": config["metadata"].get("labels")}
    for hook in stripped["webhooks"]:
        hook.pop("clientConfig")
    return stripped


@pytest.fixture(scope="module")
def stack() -> Any:
    with Stack(default_pool()) as running:
        yield running


def test_registered_configurations_are_the_shipped_ones_but_for_the_client_config(stack: Stack) -> None:
    shipped = {doc["kind"]: doc for doc in yaml.safe_load_all(SHIPPED.read_text(encoding="utf-8"))}
    assert stack.hook is not None
    for resource, kind in (
        (MUTATING, "MutatingWebhookConfiguration"),
        (VALIDATING, "ValidatingWebhookConfiguration"),
    ):
        registered = stack.api.get(resource, None, "spreadgate")
        # The API server fills in defaults the file leaves out; compare the fields the file sets.
        expected = _without_client_config(shipped[kind])
        actual = _without_client_config(registered)
        for want, got in zip(expected["webhooks"], actual["webhooks"], strict=True):
            assert {key: got.get(key) for key in want} == want, want["name"]
        assert [hook["name"] for hook in actual["webhooks"]] == [
            hook["name"] for hook in expected["webhooks"]
        ]
        for hook, source in zip(registered["webhooks"], shipped[kind]["webhooks"], strict=True):
            assert hook["clientConfig"]["url"] == stack.hook.url + source["clientConfig"]["service"]["path"]
            assert hook["clientConfig"]["caBundle"]


@pytest.mark.parametrize(
    "example", ["ud-min-above-max.yaml", "ud-two-templates.yaml", "ud-partition-deployment.yaml"]
)
def test_an_invalid_uniteddeployment_is_refused_as_on_a_real_install(stack: Stack, example: str) -> None:
    obj = yaml.safe_load((INVALID / example).read_text(encoding="utf-8"))
    with pytest.raises(ApiError) as refused:
        stack.api.create("spreadgate.dev/v1beta1/uniteddeployments", "default", obj)
    assert "vud.spreadgate.dev" in str(refused.value)
