"""The rendered RBAC grants nothing beyond `manifests/rbac-grants.yaml`, and the list
holds nothing the manifests do not grant (so it stays the truth). Whether the grants are
enough for what the code does is checked by `test_e2e_manifests.py`, which records every
request of the real webhook and controller."""

from __future__ import annotations

import pytest
from manifest_support import (
    CONTROLLER_SA,
    KUSTOMIZATIONS,
    WEBHOOK_SA,
    ApiRequest,
    Grant,
    allowed,
    classify,
    documented_grants,
    render,
    rendered_grants,
)


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_rendered_rbac_grants_nothing_beyond_the_documented_list(path: str) -> None:
    granted = rendered_grants(render(path))
    documented = documented_grants(path)
    assert granted, "no RBAC rendered"
    assert sorted(granted - documented, key=str) == [], "granted but not documented"
    assert sorted(documented - granted, key=str) == [], "documented but not granted"


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_no_wildcards_and_no_secret_reads_without_a_name(path: str) -> None:
    for g in rendered_grants(render(path)):
        assert "*" not in (g.group, g.resource, g.verb), g
        if g.resource == "secrets" or g.resource.endswith("webhookconfigurations"):
            assert g.name != "*", f"{g} must be restricted by resourceNames"
        assert g.account in (WEBHOOK_SA, CONTROLLER_SA)


def test_only_the_self_signed_overlay_touches_secrets_and_webhook_configurations() -> None:
    sensitive = {"secrets", "mutatingwebhookconfigurations", "validatingwebhookconfigurations"}
    for path in KUSTOMIZATIONS:
        touched = {g.resource for g in rendered_grants(render(path))} & sensitive
        assert touched == (sensitive if path.endswith("self-signed-ca") else set()), path


def test_the_authorizer_model_denies_what_is_not_granted() -> None:
    """The checker the end-to-end test relies on must be able to say no."""
    grants = rendered_grants(render("overlays/self-signed-ca"))
    secret_get = classify("GET", "/api/v1/namespaces/spreadgate-system/secrets/spreadgate-webhook-ca", None)
    assert secret_get == ApiRequest("get", "", "secrets", "spreadgate-system", "spreadgate-webhook-ca")
    assert allowed(grants, WEBHOOK_SA, secret_get)
    assert not allowed(grants, CONTROLLER_SA, secret_get)
    other = classify("GET", "/api/v1/namespaces/spreadgate-system/secrets/someone-elses", None)
    assert other is not None and not allowed(grants, WEBHOOK_SA, other)
    elsewhere = classify("GET", "/api/v1/namespaces/default/secrets/spreadgate-webhook-ca", None)
    assert elsewhere is not None and not allowed(grants, WEBHOOK_SA, elsewhere)
    watch = classify("GET", "/apis/spreadgate.dev/v1alpha1/workloadspreads", [("watch", "true")])
    assert watch == ApiRequest("watch", "spreadgate.dev", "workloadspreads", None, None)
    status = classify("PUT", "/apis/spreadgate.dev/v1alpha1/namespaces/d/workloadspreads/w/status", None)
    assert status is not None and status.resource == "workloadspreads/status"
    assert allowed(grants, CONTROLLER_SA, status)
    pod_delete = classify("DELETE", "/api/v1/namespaces/d/pods/p", None)
    assert pod_delete is not None
    assert allowed(grants, CONTROLLER_SA, pod_delete) and not allowed(grants, WEBHOOK_SA, pod_delete)
    assert classify("GET", "/apis/apps/v1", None) is None  # discovery
    assert Grant(WEBHOOK_SA, "cluster", "", "pods", "delete", "*") not in grants


@pytest.mark.parametrize("path", ["overlays/cert-manager", "overlays/self-signed-ca"])
def test_the_webhook_may_ask_subject_access_reviews_and_the_controller_may_not(path: str) -> None:
    """--authorize-authors (on by default) POSTs SubjectAccessReviews (issue 24)."""
    grants = rendered_grants(render(path))
    review = classify("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", None)
    assert review == ApiRequest("create", "authorization.k8s.io", "subjectaccessreviews", None, None)
    assert allowed(grants, WEBHOOK_SA, review) and not allowed(grants, CONTROLLER_SA, review)
