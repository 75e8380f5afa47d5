"""Metadata-only answers (`as=PartialObjectMetadata`): the Accept rule, and what the emulated
API server answers over HTTPS to get, update of the status subresource, patch and delete."""

from __future__ import annotations

import pytest
import webhook_testkit
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from py_engine.apiclient import Conflict
from py_engine.apiclient.client import METADATA_ONLY
from py_engine.sim.negotiation import partial_metadata_version

pytestmark = pytest.mark.timeout(30)


env = webhook_testkit.env  # the fixture, used by name


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (None, None),
        ("application/json", None),
        ("*/*", None),
        (METADATA_ONLY, "v1"),
        ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", "v1beta1"),
        ("application/json, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", None),
        ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json", None),
        ("application/json;as=PartialObjectMetadata;g=other.io;v=v1, application/json", None),
        ("application/yaml, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "v1"),
    ],
)
def test_the_first_form_the_server_can_produce_wins(accept: str | None, version: str | None) -> None:
    assert partial_metadata_version(accept) == version


def test_writes_and_reads_answer_the_stored_metadata_alone(env: KubeEnv) -> None:
    created = env.client.create(SPREADS, "default", spread("ws", [{"name": "a"}]))
    marker = {
        "conditions": [{"type": "Marker", "status": "True", "message": "x" * 1000}]
    }  # declared: not pruned
    obj = dict(created, status=marker)
    answer = env.client.replace_status(SPREADS, "default", "ws", obj, metadata_only=True)
    stored = env.client.get(SPREADS, "default", "ws")
    assert answer == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": stored["metadata"],
    }
    assert stored["status"] == marker
    assert answer["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert (
        env.client.request("GET", SPREADS.object_path("default", "ws"), accept=METADATA_ONLY)["kind"]
        == "PartialObjectMetadata"
    )
    # The precondition still holds: a stale write is a 409, not a metadata answer.
    with pytest.raises(Conflict):
        env.client.replace_status(SPREADS, "default", "ws", obj, metadata_only=True)
    assert env.client.replace_status(SPREADS, "default", "ws", stored)["status"] == marker
    gone = env.client.request("DELETE", SPREADS.object_path("default", "ws"), accept=METADATA_ONLY)
    assert gone["kind"] == "PartialObjectMetadata" and gone["metadata"]["name"] == "ws"
