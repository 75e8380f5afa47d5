"""The patch guard's verdict cache (py_engine.workloadspread.admission.patch_guard) is keyed by everything a
verdict depends on: one guard serves every spread and workload of the webhook, so two workloads
with different selectors must never share a cached verdict. Below: the guard's other promises that
mutation testing found no test pinned (docs/testing.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from admission_builders import deployment_chain, make_ctx, pod, spread, subset

from py_engine.model import MATCHED_ANNOTATION
from py_engine.policy import PolicyEngine, PolicyError, create_engine
from py_engine.workloadspread.admission.patch_guard import (
    PatchGuard,
    has_patch,
    inject_checked,
    parse_refusals,
    sets_labels,
    subset_index,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def engine() -> Any:
    eng = create_engine()
    yield eng
    eng.close()


def _label_patch_spread() -> dict[str, Any]:
    """One spread (same uid and generation throughout) whose subset patch sets label app=other."""
    ws = spread([subset("a", zone="z1", patch={"metadata": {"labels": {"app": "other"}}}), subset("b")])
    ws["metadata"]["generation"] = 1
    return ws


def _chain(selector: dict[str, Any]) -> list[dict[str, Any]]:
    chain = deployment_chain()
    chain[0]["spec"]["selector"] = selector
    return chain


BY_APP = {"matchLabels": {"app": "web"}}  # the patch would change a selector label: refused
BY_TIER = {"matchLabels": {"tier": "front"}}  # `app` is not in the selector: allowed


@pytest.mark.parametrize("order", [(BY_APP, BY_TIER), (BY_TIER, BY_APP)], ids=["app-first", "tier-first"])
def test_one_guard_two_selectors_two_verdicts(
    engine: PolicyEngine, order: tuple[dict[str, Any], ...]
) -> None:
    guard = PatchGuard(engine)
    ws = _label_patch_spread()
    outcomes = []
    for selector in order:
        mutated, warnings = inject_checked(
            pod(), ws, "a", None, make_ctx(_chain(selector), patch_guard=guard)
        )
        outcomes.append((selector is BY_APP, bool(warnings), mutated["metadata"]["labels"]["app"]))
    for refused_expected, refused, label in outcomes:
        assert refused == refused_expected
        assert label == ("web" if refused_expected else "other")
    assert guard.evaluations == 2, "each selector is its own cache entry"
    # Asking again with either selector is answered from the cache.
    for selector in order:
        inject_checked(pod(), ws, "a", None, make_ctx(_chain(selector), patch_guard=guard))
    assert guard.evaluations == 2


# ------------------------------------------------- what mutation testing found unpinned (docs/testing.md)

HOST_NETWORK = {"spec": {"hostNetwork": True}}


def _spread(patch: Any, **metadata: Any) -> dict[str, Any]:
    ws = spread([subset("a", zone="z1", patch=patch), subset("b")])
    ws["metadata"].update(metadata)
    return ws


def test_a_spread_with_a_uid_but_no_generation_is_keyed_by_its_spec(engine: PolicyEngine) -> None:
    guard = PatchGuard(engine)
    refused = _spread(HOST_NETWORK)
    assert "generation" not in refused["metadata"] and refused["metadata"]["uid"]
    assert guard.refusals(refused, "a", pod(), None) != ()
    allowed = _spread({"metadata": {"labels": {"x": "y"}}})
    assert guard.refusals(allowed, "a", pod(), None) == ()
    assert guard.evaluations == 2


def test_a_spec_with_its_keys_reordered_is_the_same_cache_entry(engine: PolicyEngine) -> None:
    guard = PatchGuard(engine)
    ws = _spread(HOST_NETWORK)
    del ws["metadata"]["uid"]
    reordered = dict(ws, spec={k: ws["spec"][k] for k in reversed(list(ws["spec"]))})
    assert guard.refusals(ws, "a", pod(), None) == guard.refusals(reordered, "a", pod(), None) != ()
    assert guard.evaluations == 1


def test_without_an_engine_the_refusal_says_so() -> None:
    assert PatchGuard(None).refusals(_spread(HOST_NETWORK), "a", pod(), None) == (
        "no policy engine is configured to check the patch against the allowlist",
    )


def test_a_selector_with_its_keys_reordered_is_the_same_cache_entry(engine: PolicyEngine) -> None:
    guard = PatchGuard(engine)
    ws = _label_patch_spread()
    one = {"matchLabels": {"app": "web", "tier": "front"}, "matchExpressions": []}
    other = {"matchExpressions": [], "matchLabels": {"tier": "front", "app": "web"}}
    for selector in (one, other):
        inject_checked(pod(), ws, "a", None, make_ctx(_chain(selector), patch_guard=guard))
    assert guard.evaluations == 1


def test_refusals_answer_an_empty_tuple_when_nothing_is_refused(engine: PolicyEngine) -> None:
    guard = PatchGuard(engine)
    ws = _spread({"metadata": {"labels": {"x": "y"}}}, generation=1)
    assert guard.refusals(ws, "a", pod(), None) == ()
    assert guard.refusals(ws, "b", pod(), None) == ()  # no patch
    assert guard.refusals(ws, "missing", pod(), None) == ()
    not_an_object = _spread(["not", "an", "object"], generation=1)
    assert guard.refusals(not_an_object, "a", pod(), None) == ()
    assert guard.evaluations == 1


def test_odd_spreads_have_no_patch() -> None:
    assert subset_index({"spec": 5}, "a") is None
    assert subset_index({"spec": {"subsets": "x"}}, "a") is None
    assert not has_patch(_spread(HOST_NETWORK), "missing")
    assert not has_patch(_spread("text"), "a")
    assert not sets_labels(_spread(HOST_NETWORK), "missing")
    assert sets_labels(_spread({"metadata": {"labels": {}}}), "a")


def test_a_cached_spread_without_kind_or_api_version_is_still_checked(engine: PolicyEngine) -> None:
    """Watch caches may hand over objects without `kind`/`apiVersion` (both groups are cached)."""
    for api_version in (None, "apps.kruise.io/v1alpha1"):
        ws = _spread(HOST_NETWORK, generation=1)
        del ws["kind"]
        if api_version is None:
            del ws["apiVersion"]
        else:
            ws["apiVersion"] = api_version
        assert PatchGuard(engine).refusals(ws, "a", pod(), None) == (
            "spec.subsets[0].patch.spec.hostNetwork",
        )


def test_the_workload_is_looked_up_in_the_pods_namespace(engine: PolicyEngine) -> None:
    ws = _spread({"metadata": {"labels": {"app": "other"}}}, generation=1, namespace="prod")
    chain = _chain(BY_APP)
    for obj in chain:
        obj["metadata"]["namespace"] = "prod"
    ctx = make_ctx(chain, patch_guard=PatchGuard(engine))
    _, warnings = inject_checked(pod(namespace="prod"), ws, "a", None, ctx)
    assert warnings and "spec.subsets[0].patch.metadata.labels[app]" in warnings[0]


def test_the_matched_uid_is_injected_with_or_without_the_patch(engine: PolicyEngine) -> None:
    ctx = make_ctx(deployment_chain(), patch_guard=PatchGuard(engine))
    for generation, patch in enumerate(({"metadata": {"labels": {"x": "y"}}}, HOST_NETWORK), start=1):
        mutated, warnings = inject_checked(
            pod(None), _spread(patch, generation=generation), "a", "uid-7", ctx
        )
        assert bool(warnings) == (patch is HOST_NETWORK)
        assert json.loads(mutated["metadata"]["annotations"][MATCHED_ANNOTATION])["uid"] == "uid-7"
    unguarded, _ = inject_checked(
        pod(None), _spread(HOST_NETWORK), "a", "uid-8", make_ctx(deployment_chain())
    )
    assert json.loads(unguarded["metadata"]["annotations"][MATCHED_ANNOTATION])["uid"] == "uid-8"


def test_the_refusal_warning_says_what_and_where(engine: PolicyEngine) -> None:
    ctx = make_ctx(deployment_chain(), patch_guard=PatchGuard(engine))
    patch = {"spec": {"hostNetwork": True, "hostPID": True}}
    _, warnings = inject_checked(
        pod(namespace="prod"), _spread(patch, generation=1, namespace="prod"), "a", None, ctx
    )
    assert warnings == (
        "WorkloadSpread prod/ws: the patch of subset 'a' was not applied, it sets what the subset "
        "patch allowlist refuses: spec.subsets[0].patch.spec.hostNetwork, "
        "spec.subsets[0].patch.spec.hostPID (`spreadgate validate` explains each)",
    )


def test_parse_refusals_skips_odd_items_anywhere_and_names_a_wrong_type() -> None:
    result = [
        {"details": "x"},
        7,
        {"msg": "m", "details": {"field": "spec.subsets[0].patch.spec.x", "subset": 0}},
    ]
    assert parse_refusals(result) == {0: ("spec.subsets[0].patch.spec.x",)}
    with pytest.raises(PolicyError, match=r"returned dict, expected a set"):
        parse_refusals({"not": "a set"})
