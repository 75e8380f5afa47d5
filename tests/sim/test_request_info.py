"""Request attributes (py_engine/sim/request_info.py) as kube-apiserver's request-info parser derives them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.sim.request_info import RequestAttributes, request_attributes


def res(
    verb: str,
    resource: str,
    *,
    group: str = "",
    version: str = "v1",
    namespace: str = "",
    name: str = "",
    subresource: str = "",
    path: str,
) -> RequestAttributes:
    return RequestAttributes(verb, path, True, group, version, resource, subresource, name, namespace)


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            {},
            res("list", "pods", namespace="default", path="/api/v1/namespaces/default/pods"),
        ),
        ("GET", "/api/v1/pods", {"watch": "true"}, res("watch", "pods", path="/api/v1/pods")),
        ("GET", "/api/v1/pods", {"watch": "1"}, res("watch", "pods", path="/api/v1/pods")),
        ("GET", "/api/v1/pods", {"watch": "false"}, res("list", "pods", path="/api/v1/pods")),
        (
            "GET",
            "/api/v1/watch/namespaces/d/pods",
            {},
            res("watch", "pods", namespace="d", path="/api/v1/watch/namespaces/d/pods"),
        ),
        (
            "GET",
            "/api/v1/namespaces/d/pods/p",
            {},
            res("get", "pods", namespace="d", name="p", path="/api/v1/namespaces/d/pods/p"),
        ),
        (
            "HEAD",
            "/api/v1/namespaces/d/pods/p",
            {},
            res("get", "pods", namespace="d", name="p", path="/api/v1/namespaces/d/pods/p"),
        ),
        (
            "POST",
            "/api/v1/namespaces/d/pods",
            {},
            res("create", "pods", namespace="d", path="/api/v1/namespaces/d/pods"),
        ),
        (
            "PUT",
            "/apis/apps/v1/namespaces/d/deployments/web/scale",
            {},
            res(
                "update",
                "deployments",
                group="apps",
                namespace="d",
                name="web",
                subresource="scale",
                path="/apis/apps/v1/namespaces/d/deployments/web/scale",
            ),
        ),
        (
            "PATCH",
            "/api/v1/namespaces/d/pods/p/status",
            {},
            res(
                "patch",
                "pods",
                namespace="d",
                name="p",
                subresource="status",
                path="/api/v1/namespaces/d/pods/p/status",
            ),
        ),
        (
            "POST",
            "/api/v1/namespaces/d/pods/p/eviction",
            {},
            res(
                "create",
                "pods",
                namespace="d",
                name="p",
                subresource="eviction",
                path="/api/v1/namespaces/d/pods/p/eviction",
            ),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/d/pods/p",
            {},
            res("delete", "pods", namespace="d", name="p", path="/api/v1/namespaces/d/pods/p"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/d/pods",
            {},
            res("deletecollection", "pods", namespace="d", path="/api/v1/namespaces/d/pods"),
        ),
        # A namespace is its own namespace; `status` and `finalize` are its subresources.
        (
            "GET",
            "/api/v1/namespaces/d",
            {},
            res("get", "namespaces", namespace="d", name="d", path="/api/v1/namespaces/d"),
        ),
        (
            "PUT",
            "/api/v1/namespaces/d/finalize",
            {},
            res(
                "update",
                "namespaces",
                namespace="d",
                name="d",
                subresource="finalize",
                path="/api/v1/namespaces/d/finalize",
            ),
        ),
        ("GET", "/api/v1/namespaces", {}, res("list", "namespaces", path="/api/v1/namespaces")),
        (
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery",
            {},
            res(
                "get",
                "clusterroles",
                group="rbac.authorization.k8s.io",
                name="system:discovery",
                path="/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery",
            ),
        ),
        # A list or watch pinned to one name carries it, so resourceNames rules can allow it.
        (
            "GET",
            "/api/v1/namespaces/d/configmaps",
            {"watch": "true", "fieldSelector": "metadata.name=cfg"},
            res("watch", "configmaps", namespace="d", name="cfg", path="/api/v1/namespaces/d/configmaps"),
        ),
        (
            "GET",
            "/api/v1/namespaces/d/configmaps",
            {"fieldSelector": "metadata.name==cfg"},
            res("list", "configmaps", namespace="d", name="cfg", path="/api/v1/namespaces/d/configmaps"),
        ),
        (
            "GET",
            "/api/v1/namespaces/d/configmaps",
            {"fieldSelector": "metadata.name!=cfg"},
            res("list", "configmaps", namespace="d", path="/api/v1/namespaces/d/configmaps"),
        ),
        (
            "GET",
            "/api/v1/namespaces/d/configmaps",
            {"fieldSelector": "metadata.name=a,metadata.namespace=d"},
            res("list", "configmaps", namespace="d", path="/api/v1/namespaces/d/configmaps"),
        ),
    ],
)
def test_resource_requests(
    method: str, path: str, query: dict[str, str], expected: RequestAttributes
) -> None:
    assert request_attributes(method, path, query) == expected


@pytest.mark.parametrize(
    ("method", "path", "verb", "normalised"),
    [
        ("GET", "/", "get", "/"),
        ("GET", "/api", "get", "/api"),
        ("GET", "/api/v1", "get", "/api/v1"),
        ("GET", "/apis", "get", "/apis"),
        ("GET", "/apis/apps", "get", "/apis/apps"),
        ("GET", "/apis/apps/v1", "get", "/apis/apps/v1"),
        ("GET", "/healthz", "get", "/healthz"),
        ("GET", "/openapi/v3/apis/apps/v1", "get", "/openapi/v3/apis/apps/v1"),
        ("POST", "/version", "post", "/version"),
        ("GET", "/api/v1/watch", "get", "/api/v1/watch"),
    ],
)
def test_non_resource_requests(method: str, path: str, verb: str, normalised: str) -> None:
    attrs = request_attributes(method, path)
    assert not attrs.resource_request
    assert (attrs.verb, attrs.path, attrs.resource) == (verb, normalised, "")


def test_subresource_naming_and_percent_decoding() -> None:
    attrs = request_attributes("GET", "/api/v1/namespaces/d/pods/a%3Ab/log")
    assert attrs.name == "a:b" and attrs.resource_with_subresource == "pods/log"
    # An encoded slash separates segments, as in Go's decoded URL.Path: no name can hide one.
    assert request_attributes("GET", "/api/v1/namespaces/d/secrets/a%2Fstatus").subresource == "status"
    assert request_attributes("GET", "/api/v1/namespaces/d/pods").resource_with_subresource == "pods"


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "BREW"]),
    segments=st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "api",
                    "apis",
                    "v1",
                    "apps",
                    "namespaces",
                    "watch",
                    "pods",
                    "status",
                    "finalize",
                    "%2F",
                    "..",
                    "",
                ]
            ),
            st.text(max_size=8),
        ),
        max_size=8,
    ),
    query=st.dictionaries(st.sampled_from(["watch", "fieldSelector", "labelSelector"]), st.text(max_size=20)),
)
def test_any_request_line_gets_attributes_without_raising(
    method: str, segments: list[str], query: dict[str, str]
) -> None:
    attrs = request_attributes(method, "/" + "/".join(segments), query)
    assert attrs.verb or (attrs.resource_request and method in ("OPTIONS", "BREW"))  # upstream: "" too
    assert attrs.resource_request == bool(attrs.resource) or attrs.resource_request
    if attrs.resource_request:
        assert attrs.resource and "/" not in attrs.resource and "/" not in attrs.name
