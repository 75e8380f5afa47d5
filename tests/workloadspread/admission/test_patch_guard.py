"""The subset patch allowlist at admission (py_engine.workloadspread.admission.patch_guard): the
same Rego rule as validation, a refused patch left out of the pod with a warning, one evaluation per spread
generation, and fail-closed when the policy cannot be evaluated."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from admission_builders import NOW, Objects, deployment_chain, make_ctx, pod, spread, subset

from py_engine.model import MATCHED_ANNOTATION
from py_engine.policy import PolicyEngine, PolicyError, create_engine
from py_engine.validation import build_review_input, validate_spread
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.patch_guard import (
    PatchGuard,
    checked_workload,
    inject_checked,
    parse_refusals,
)

# One engine for the module's lifetime (see tests/workloadspread/admission/test_service.py).
ENGINE = create_engine()
EXAMPLES = Path(__file__).resolve().parents[3] / "manifests" / "examples" / "invalid"
HOST_NETWORK = {"spec": {"hostNetwork": True}}


class CountingEngine:
    """The real engine, counting evaluations; `fail` makes every evaluation raise PolicyError."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        self.calls += 1
        if self.fail:
            raise PolicyError("OPA is unreachable")
        return ENGINE.evaluate(rule, input_document)

    def close(self) -> None:
        pass


def web(patch: Any, *, generation: int = 1, **subset_extra: Any) -> dict[str, Any]:
    ws = spread([subset("a", zone="z1", patch=patch, **subset_extra), subset("b")])
    ws["metadata"]["generation"] = generation
    return ws


def guarded(
    engine: PolicyEngine | None = ENGINE,
    allowed: tuple[str, ...] = (),
    objects: list[dict[str, Any]] | None = None,
) -> tuple[PatchGuard, Any]:
    guard = PatchGuard(engine, allowed)
    return guard, make_ctx(deployment_chain() if objects is None else objects, patch_guard=guard)


def test_allowed_patch_is_applied() -> None:
    _, ctx = guarded()
    patch = {
        "metadata": {"labels": {"cost": "spot"}},
        "spec": {"containers": [{"name": "main", "env": [{"name": "POOL", "value": "spot"}]}]},
    }
    mutated, warnings = inject_checked(pod(), web(patch), "a", None, ctx)
    assert warnings == ()
    assert mutated["metadata"]["labels"]["cost"] == "spot"
    assert mutated["spec"]["containers"][0]["env"] == [{"name": "POOL", "value": "spot"}]


def test_refused_patch_is_left_out_and_the_pod_still_placed() -> None:
    _, ctx = guarded()
    patch = {"metadata": {"labels": {"cost": "spot"}}, "spec": {"hostNetwork": True}}
    mutated, warnings = inject_checked(pod(), web(patch), "a", None, ctx)
    assert "hostNetwork" not in mutated["spec"]
    assert "cost" not in mutated["metadata"]["labels"], "the whole patch is left out, not half of it"
    assert mutated["spec"]["affinity"]["nodeAffinity"], "the subset's own fields are still injected"
    assert MATCHED_ANNOTATION in mutated["metadata"]["annotations"]
    assert len(warnings) == 1
    assert "spec.subsets[0].patch.spec.hostNetwork" in warnings[0] and "'a'" in warnings[0]


def test_only_the_chosen_subsets_patch_matters() -> None:
    _, ctx = guarded()
    ws = spread([subset("a", patch=HOST_NETWORK), subset("b", patch={"metadata": {"labels": {"x": "y"}}})])
    mutated, warnings = inject_checked(pod(), ws, "b", None, ctx)
    assert warnings == () and mutated["metadata"]["labels"]["x"] == "y"


def _patch_examples() -> list[Path]:
    """The invalid examples whose fault is in a subset patch that applies as a patch."""
    return [p for p in sorted(EXAMPLES.glob("patch-*.yaml")) if p.stem != "patch-not-object"]


@pytest.mark.parametrize("path", _patch_examples(), ids=lambda p: p.stem)
def test_every_forbidden_class_is_refused_at_admission_as_in_validation(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    ws, workloads = docs[0], docs[1:]
    ws["metadata"].update(uid="u1", generation=1)
    validated = {
        v.field
        for v in validate_spread(ENGINE, build_review_input(ws, workload=workloads[0] if workloads else None))
    }
    chain = deployment_chain()
    if workloads:
        chain[0] = workloads[0]
    the_pod = pod(labels={"app": "web", "pod-template-hash": "abc123"})
    _, ctx = guarded(objects=chain)
    mutated, warnings = inject_checked(the_pod, ws, "a", None, ctx)
    assert validated and len(warnings) == 1
    for field in validated:
        assert field in warnings[0]
    assert (
        mutated
        == inject_checked(
            the_pod,
            spread(
                [
                    subset(
                        "a",
                        **{k: v for k, v in ws["spec"]["subsets"][0].items() if k not in ("name", "patch")},
                    )
                ],
                name=ws["metadata"]["name"],
            ),
            "a",
            None,
            ctx,
        )[0]
    )


def test_containers_are_checked_against_the_actual_pod() -> None:
    # The target is not in the caches (template unknown): the pod's own containers decide.
    _, ctx = guarded(objects=[])
    ws = web({"spec": {"containers": [{"name": "sidecar", "resources": {"requests": {"cpu": "2"}}}]}})
    _, warnings = inject_checked(pod(), ws, "a", None, ctx)
    assert "spec.subsets[0].patch.spec.containers[0]" in warnings[0]
    with_sidecar = pod(
        spec={"containers": [{"name": "main", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}]}
    )
    mutated, warnings = inject_checked(with_sidecar, ws, "a", None, ctx)
    assert warnings == () and mutated["spec"]["containers"][1]["resources"] == {"requests": {"cpu": "2"}}


def test_selector_labels_come_from_the_target_workload() -> None:
    ws = web({"metadata": {"labels": {"app": "other"}}})
    chain = deployment_chain()
    chain[0]["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    _, ctx = guarded(objects=chain)
    assert "spec.subsets[0].patch.metadata.labels[app]" in inject_checked(pod(), ws, "a", None, ctx)[1][0]
    # Controller-managed labels are reserved whether or not the workload is found.
    _, no_workload = guarded(objects=[])
    reserved = web({"metadata": {"labels": {"pod-template-hash": "x"}}})
    assert inject_checked(pod(), reserved, "a", None, no_workload)[1] != ()


def test_the_workload_is_looked_up_only_for_label_patches() -> None:
    objects = Objects(deployment_chain())
    ctx = AdmissionContext(now=NOW, lookup=objects.lookup, patch_guard=PatchGuard(ENGINE))
    inject_checked(pod(), web({"spec": {"containers": [{"name": "main", "resources": {}}]}}), "a", None, ctx)
    assert objects.calls == []
    inject_checked(pod(), web({"metadata": {"labels": {"x": "y"}}}, generation=2), "a", None, ctx)
    assert objects.calls == [("apps/v1", "Deployment", "default", "web")]


def test_checked_workload_is_the_selector_and_the_pods_containers() -> None:
    the_pod = pod(spec={"containers": [{"name": "main"}, "junk"], "initContainers": [{"name": "init"}]})
    checked = checked_workload(
        the_pod, {"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 3}}
    )
    assert checked == {
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "main"}], "initContainers": [{"name": "init"}]}},
        }
    }
    assert checked_workload({"spec": 5}, None) == {
        "spec": {"template": {"spec": {"containers": [], "initContainers": []}}}
    }


def test_one_evaluation_per_spread_generation() -> None:
    engine = CountingEngine()
    guard, ctx = guarded(engine)
    ws = web(HOST_NETWORK)
    for i in range(5):
        assert inject_checked(pod(f"web-abc123-{i}"), ws, "a", None, ctx)[1]
    assert engine.calls == 1 == guard.evaluations
    edited = web({"metadata": {"labels": {"x": "y"}}}, generation=2)
    assert inject_checked(pod(), edited, "a", None, ctx)[1] == ()
    assert engine.calls == 2
    # A subset without a patch costs nothing.
    inject_checked(pod(), ws, "b", None, ctx)
    assert engine.calls == 2


def test_spread_without_uid_or_generation_is_keyed_by_its_spec() -> None:
    engine = CountingEngine()
    _, ctx = guarded(engine)
    ws = web(HOST_NETWORK)
    del ws["metadata"]["uid"]
    assert inject_checked(pod(), ws, "a", None, ctx)[1]
    assert inject_checked(pod(), copy.deepcopy(ws), "a", None, ctx)[1]
    assert engine.calls == 1
    ws["spec"]["subsets"][0]["patch"] = {"metadata": {"labels": {"x": "y"}}}
    assert inject_checked(pod(), ws, "a", None, ctx)[1] == ()
    assert engine.calls == 2


def test_cache_is_bounded() -> None:
    guard = PatchGuard(ENGINE, max_entries=2)
    for generation in range(1, 5):
        guard.refusals(web(HOST_NETWORK, generation=generation), "a", pod(), None)
    assert len(guard._cache) == 2


def test_operators_widen_the_allowlist() -> None:
    _, ctx = guarded(allowed=("spec.hostNetwork",))
    mutated, warnings = inject_checked(pod(), web(HOST_NETWORK), "a", None, ctx)
    assert warnings == () and mutated["spec"]["hostNetwork"] is True
    # ... but never to strategic-merge directives or reserved keys
    _, wide = guarded(allowed=("metadata", "spec"))
    smuggled = web(
        {"spec": {"$retainKeys": ["containers"]}, "metadata": {"annotations": {MATCHED_ANNOTATION: "{}"}}}
    )
    assert inject_checked(pod(), smuggled, "a", None, wide)[1] != ()


def test_policy_failure_refuses_the_patch_and_is_not_cached() -> None:
    engine = CountingEngine(fail=True)
    _, ctx = guarded(engine)
    ws = web({"metadata": {"labels": {"x": "y"}}})
    for _ in range(2):
        mutated, warnings = inject_checked(pod(), ws, "a", None, ctx)
        assert "could not be checked" in warnings[0] and "OPA is unreachable" in warnings[0]
        assert "x" not in mutated["metadata"]["labels"]
    assert engine.calls == 2


def test_without_an_engine_every_patch_is_refused() -> None:
    _, ctx = guarded(engine=None)
    _, warnings = inject_checked(pod(), web({"metadata": {"labels": {"x": "y"}}}), "a", None, ctx)
    assert "no policy engine" in warnings[0]


def test_without_a_guard_the_patch_is_applied_unchecked() -> None:
    mutated, warnings = inject_checked(pod(), web(HOST_NETWORK), "a", None, make_ctx(deployment_chain()))
    assert warnings == () and mutated["spec"]["hostNetwork"] is True


def test_a_failing_lookup_only_loses_the_selector_check() -> None:
    def broken(api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        raise OSError("cache gone")

    guard = PatchGuard(ENGINE)
    ctx = AdmissionContext(now=NOW, lookup=broken, patch_guard=guard)
    assert inject_checked(pod(), web(HOST_NETWORK), "a", None, ctx)[1] != ()
    assert (
        inject_checked(pod(), web({"metadata": {"labels": {"x": "y"}}}, generation=2), "a", None, ctx)[1]
        == ()
    )


def test_parse_refusals_tolerates_odd_results() -> None:
    assert parse_refusals(None) == {}
    with pytest.raises(PolicyError):
        parse_refusals({"not": "a set"})
    result = [
        {"msg": "m", "details": {"field": "spec.subsets[1].patch.spec.x", "subset": 1.0}},
        {"msg": "only-msg", "details": {"subset": 0}},
        {"msg": "bool", "details": {"subset": True}},
        {"details": "x"},
        7,
    ]
    assert parse_refusals(result) == {1: ("spec.subsets[1].patch.spec.x",), 0: ("only-msg",)}
