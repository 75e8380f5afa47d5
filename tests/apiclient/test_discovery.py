"""Finding a kind's resource in a discovery listing (the webhook and the controller share it)."""

from __future__ import annotations

from py_engine.apiclient.discovery import resource_in_listing
from py_engine.apiclient.resources import Resource

LISTING = {
    "resources": [
        {"name": "gameserversets/scale", "kind": "Scale", "namespaced": True},
        {"name": "gameserversets/status", "kind": "GameServerSet", "namespaced": True},
        {"kind": "GameServerSet"},  # no name: not a resource one can address
        {"name": "gameserversets", "kind": "GameServerSet", "namespaced": True},
        {"name": "fleets", "kind": "Fleet", "namespaced": False},
    ]
}


def test_the_kind_is_found_and_sub_resources_are_skipped() -> None:
    found = resource_in_listing(LISTING, "game.kruise.io", "v1alpha1", "GameServerSet")
    assert found == Resource("game.kruise.io", "v1alpha1", "gameserversets", True, "GameServerSet")


def test_scope_comes_from_the_listing_and_an_unknown_kind_is_none() -> None:
    fleets = resource_in_listing(LISTING, "game.kruise.io", "v1alpha1", "Fleet")
    assert fleets is not None and fleets.namespaced is False
    assert resource_in_listing(LISTING, "game.kruise.io", "v1alpha1", "GameServer") is None
    assert resource_in_listing({}, "game.kruise.io", "v1alpha1", "GameServerSet") is None
