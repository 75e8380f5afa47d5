"""Issue 24, finding 1: the default subset patch allowlist no longer amounts to `create pods`.

A spread whose patch swaps a container's image, reads Secrets through `env[].valueFrom` and
`envFrom`, sets `dnsConfig` and `runtimeClassName`, or turns off service-mesh injection used
to validate and be applied at admission. Each of those is now refused by default (and can be
re-allowed explicitly); literal env values, labels, annotations and resources stay allowed.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kube_objects import united_deployment, workload_spread
from py_engine.policy import create_engine
from py_engine.validation import build_review_input, validate_spread
from py_engine.workloadspread.admission.patch_guard import PatchGuard

ENGINE = create_engine()
WORKLOAD = {
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "spec": {
                "containers": [{"name": "main", "image": "nginx"}],
                "initContainers": [{"name": "init", "image": "busybox"}],
            }
        },
    }
}
POD = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}}


def _spread(patch: Any, **subset_extra: Any) -> dict[str, Any]:
    return workload_spread("ws", [{"name": "a", "patch": patch, **subset_extra}], uid="u", generation=1)


def _fields(patch: Any, allowed: tuple[str, ...] = (), **subset_extra: Any) -> set[str]:
    policy_input = build_review_input(
        _spread(patch, **subset_extra), workload=WORKLOAD, allowed_patch_fields=allowed
    )
    return {v.field for v in validate_spread(ENGINE, policy_input)}


SECRET_ENV = {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}
CONFIG_ENV = {"name": "CFG", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "x"}}}

# (the patch, the field path the refusal names, the --allow-patch-field entry that re-allows it)
NARROWED = [
    (
        {"spec": {"containers": [{"name": "main", "image": "evil:latest"}]}},
        "spec.subsets[0].patch.spec.containers[0].image",
        "spec.containers[].image",
    ),
    (
        {"spec": {"containers": [{"name": "main", "env": [SECRET_ENV]}]}},
        "spec.subsets[0].patch.spec.containers[0].env[0].valueFrom",
        "spec.containers[].env[].valueFrom",
    ),
    (
        {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}, CONFIG_ENV]}]}},
        "spec.subsets[0].patch.spec.containers[0].env[1].valueFrom",
        "spec.containers[].env[].valueFrom",
    ),
    (
        {"spec": {"containers": [{"name": "main", "envFrom": [{"secretRef": {"name": "db"}}]}]}},
        "spec.subsets[0].patch.spec.containers[0].envFrom",
        "spec.containers[].envFrom",
    ),
    (
        {"spec": {"initContainers": [{"name": "init", "image": "evil"}]}},
        "spec.subsets[0].patch.spec.initContainers[0].image",
        "spec.initContainers[].image",
    ),
    (
        {"spec": {"dnsConfig": {"searches": ["evil.example"]}}},
        "spec.subsets[0].patch.spec.dnsConfig",
        "spec.dnsConfig",
    ),
    (
        {"spec": {"runtimeClassName": "unsandboxed"}},
        "spec.subsets[0].patch.spec.runtimeClassName",
        "spec.runtimeClassName",
    ),
]


@pytest.mark.parametrize(("patch", "field", "entry"), NARROWED, ids=[n[2] for n in NARROWED])
def test_narrowed_fields_are_refused_by_default_and_can_be_re_allowed(
    patch: Any, field: str, entry: str
) -> None:
    assert field in _fields(patch)
    assert field not in _fields(patch, (entry,))


@pytest.mark.parametrize(
    "key",
    [
        "sidecar.istio.io/inject",
        "istio.io/rev",
        "linkerd.io/inject",
        "config.linkerd.io/skip-outbound-ports",
        "vault.hashicorp.com/agent-inject",
        "vault.hashicorp.com/role",
        "kuma.io/sidecar-injection",
        "traffic.sidecar.istio.io/excludeOutboundIPRanges",
        "proxy.istio.io/config",
        "consul.hashicorp.com/connect-inject",
        "inject.vault.banzaicloud.io/vault-addr",
        "secrets-store.csi.k8s.io/x",
        "injector.tumblr.com/request",
    ],
)
def test_annotations_other_admission_controllers_act_on_are_reserved(key: str) -> None:
    patch = {"metadata": {"annotations": {key: "false"}}}
    assert f"spec.subsets[0].patch.metadata.annotations[{key}]" in _fields(patch)
    assert f"spec.subsets[0].patch.metadata.annotations[{key}]" in _fields(patch, ("metadata.annotations",))


def test_what_stays_allowed() -> None:
    patch = {
        "metadata": {"labels": {"cost": "spot"}, "annotations": {"team.example.com/owner": "a"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "env": [{"name": "MODE", "value": "spot"}],
                    "resources": {"requests": {"cpu": "500m"}},
                }
            ],
            "priorityClassName": "low",
            "schedulerName": "s",
            "topologySpreadConstraints": [],
        },
    }
    assert _fields(patch) == set()


def test_the_whole_finding_1_spread_is_refused_and_left_out_at_admission() -> None:
    patch = {
        "metadata": {"annotations": {"sidecar.istio.io/inject": "false"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "evil:1",
                    "env": [SECRET_ENV],
                    "envFrom": [{"secretRef": {"name": "db"}}],
                }
            ],
            "dnsConfig": {"searches": ["evil.example"]},
            "runtimeClassName": "unsandboxed",
        },
    }
    extra = {
        "tolerations": [{"operator": "Exists"}],
        "requiredNodeSelectorTerm": {
            "matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["control-plane-0"]}
            ]
        },
    }
    fields = _fields(patch, **extra)
    assert {
        "spec.subsets[0].patch.spec.containers[0].image",
        "spec.subsets[0].patch.spec.containers[0].envFrom",
        "spec.subsets[0].patch.spec.containers[0].env[0].valueFrom",
        "spec.subsets[0].patch.spec.dnsConfig",
        "spec.subsets[0].patch.spec.runtimeClassName",
        "spec.subsets[0].patch.metadata.annotations[sidecar.istio.io/inject]",
    } <= fields
    # Tolerations and node terms stay free: the authorization rule is their control (docs/operations.md).
    assert not any("tolerations" in f or "requiredNodeSelectorTerm" in f for f in fields)
    refused = PatchGuard(ENGINE).refusals(_spread(patch, **extra), "a", POD, WORKLOAD)
    assert len(refused) >= 6


def test_the_gatekeeper_parameter_re_allows_too() -> None:
    patch = {"spec": {"containers": [{"name": "main", "image": "registry.example.com/web:2"}]}}
    policy_input = build_review_input(_spread(patch), workload=WORKLOAD)
    refused = {v.field for v in validate_spread(ENGINE, policy_input)}
    assert "spec.subsets[0].patch.spec.containers[0].image" in refused
    policy_input["parameters"] = {"allowedPatchFields": ["spec.containers[].image"]}
    assert validate_spread(ENGINE, policy_input) == []


def test_a_uniteddeployment_patch_keeps_the_fields_its_author_is_authorized_for() -> None:
    from py_engine.validation.uniteddeployment import build_ud_review_input, validate_uniteddeployment

    patch = {
        "spec": {
            "containers": [{"name": "c", "image": "i-arm64", "envFrom": [{"secretRef": {"name": "s"}}]}],
            "runtimeClassName": "kata",
        }
    }
    united = united_deployment("ud", [{"name": "a", "patch": patch}, {"name": "b"}])
    assert validate_uniteddeployment(ENGINE, build_ud_review_input(united)) == []
    united["spec"]["topology"]["subsets"][0]["patch"] = {
        "metadata": {"annotations": {"sidecar.istio.io/inject": "false"}}
    }
    assert validate_uniteddeployment(ENGINE, build_ud_review_input(united)) != []
