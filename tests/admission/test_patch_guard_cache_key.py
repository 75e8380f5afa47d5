"""The patch guard's verdict cache (py_engine.admission.patch_guard) is keyed by everything a
verdict depends on: one guard serves every spread and workload of the webhook, so two workloads
with different selectors must never share a cached verdict."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment_chain, make_ctx, pod, spread, subset

from py_engine.admission.patch_guard import PatchGuard, inject_checked
from py_engine.policy import PolicyEngine, create_engine

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
def test_one_guard_two_selectors_two_verdicts(engine: PolicyEngine, order: tuple[dict[str, Any], ...]) -> None:
    guard = PatchGuard(engine)
    ws = _label_patch_spread()
    outcomes = []
    for selector in order:
        mutated, warnings = inject_checked(pod(), ws, "a", None, make_ctx(_chain(selector), patch_guard=guard))
        outcomes.append((selector is BY_APP, bool(warnings), mutated["metadata"]["labels"]["app"]))
    for refused_expected, refused, label in outcomes:
        assert refused == refused_expected
        assert label == ("web" if refused_expected else "other")
    assert guard.evaluations == 2, "each selector is its own cache entry"
    # Asking again with either selector is answered from the cache.
    for selector in order:
        inject_checked(pod(), ws, "a", None, make_ctx(_chain(selector), patch_guard=guard))
    assert guard.evaluations == 2
