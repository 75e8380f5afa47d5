"""Hostile subset patches (arbitrary JSON, directives and odd keys at any depth) never make the
patch rules raise, on the validation side or at admission, and a patch of anything but the
allowed fields is never applied at admission."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.kube_objects import workload_spread
from py_engine.policy import create_engine
from py_engine.validation import build_review_input, validate_spread
from py_engine.workloadspread.admission.patch_guard import PatchGuard

ENGINE = create_engine()

keys = st.sampled_from(
    [
        "metadata",
        "spec",
        "labels",
        "annotations",
        "containers",
        "initContainers",
        "name",
        "image",
        "env",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "hostPID",
        "spreadgate.dev/x",
        "app",
        "",
        "0",
    ]
) | st.text(max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=25,
)


def _spread(patch: Any) -> dict[str, Any]:
    return workload_spread("ws", [{"name": "a", "patch": patch}], uid="u", generation=1)


WORKLOAD = {
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}},
    }
}
POD = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
ALLOWED_TOP = {
    "labels",
    "annotations",
    "priorityClassName",
    "runtimeClassName",
    "topologySpreadConstraints",
    "schedulerName",
    "dnsConfig",
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patch=json_values | st.dictionaries(keys, json_values, max_size=4))
def test_hostile_patches_are_decided_never_raised(patch: Any) -> None:
    for workload in (None, WORKLOAD):
        violations = validate_spread(ENGINE, build_review_input(_spread(patch), workload=workload))
        assert all(v.message.startswith(v.field + ": ") for v in violations)
    refused = PatchGuard(ENGINE).refusals(_spread(patch), "a", POD, WORKLOAD)
    if isinstance(patch, dict):
        spec = patch.get("spec")
        odd_spec = isinstance(spec, dict) and any(
            k not in ALLOWED_TOP | {"containers", "initContainers"} for k in spec
        )
        odd_top = any(k not in ("metadata", "spec") for k in patch)
        if odd_spec or odd_top:
            assert refused, patch
