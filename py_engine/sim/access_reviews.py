"""Access reviews: `kubectl auth can-i`, `kubectl auth whoami`, and webhooks that ask the API server.

The `authorization.k8s.io/v1` kinds are questions, not objects: creating one answers it and
stores nothing, as in kube-apiserver.

- `SubjectAccessReview`: may `spec.user` / `spec.groups` (with `uid`, `extra`) do
  `spec.resourceAttributes` or `spec.nonResourceAttributes`? What a webhook sends with the
  `userInfo` of an admission review.
- `LocalSubjectAccessReview`: the same, confined to the namespace it is created in.
- `SelfSubjectAccessReview`: may *I* (the requesting, possibly impersonated, user) do it?
  (`kubectl auth can-i VERB RESOURCE`).
- `SelfSubjectRulesReview`: what may I do in `spec.namespace`? (`kubectl auth can-i --list`).
- `authentication.k8s.io/v1` `SelfSubjectReview`: who am I? (`kubectl auth whoami`).

Answers fill `status` (`allowed`, `reason`, `evaluationError`; `resourceRules`,
`nonResourceRules`, `incomplete`; `userInfo`); malformed specs get kube-apiserver's 422s.
Creating a review is itself authorized like any request (`create` on the review's
resource: `system:basic-user` grants the self reviews to every authenticated user).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from py_engine.sim import errors
from py_engine.sim.authorizer import Authorizer
from py_engine.sim.identity import UserInfo, user_from_json
from py_engine.sim.interface import JSON, ApiError
from py_engine.sim.request_info import RequestAttributes
from py_engine.sim.resources import ResourceDef

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
REVIEW_GROUPS = frozenset({AUTHORIZATION, AUTHENTICATION})


def _invalid(rd: ResourceDef, field: str, value: Any, message: str) -> ApiError:
    return errors.invalid(
        rd.group, rd.kind, "", [(field, "FieldValueInvalid", f"Invalid value: {value!r}: {message}")]
    )


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _attributes(rd: ResourceDef, spec: Mapping[str, Any]) -> RequestAttributes:
    resource = _mapping(spec.get("resourceAttributes"))
    non_resource = _mapping(spec.get("nonResourceAttributes"))
    if resource is not None and non_resource is not None:
        raise _invalid(
            rd,
            "spec.nonResourceAttributes",
            dict(non_resource),
            "cannot be specified in combination with resourceAttributes",
        )
    if non_resource is not None:
        return RequestAttributes(
            verb=str(non_resource.get("verb") or ""), path=str(non_resource.get("path") or "")
        )
    if resource is None:
        raise _invalid(
            rd,
            "spec.resourceAttributes",
            None,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )
    return RequestAttributes(
        verb=str(resource.get("verb") or ""),
        resource_request=True,
        api_group=str(resource.get("group") or ""),
        api_version=str(resource.get("version") or ""),
        resource=str(resource.get("resource") or ""),
        subresource=str(resource.get("subresource") or ""),
        name=str(resource.get("name") or ""),
        namespace=str(resource.get("namespace") or ""),
    )


def review(
    rd: ResourceDef, namespace: str | None, body: Any, requester: UserInfo, authorizer: Authorizer
) -> JSON:
    """The answered review for a create of `rd` (one of the review kinds) by `requester`."""
    if not isinstance(body, Mapping):
        raise errors.bad_request(f"the body of the request must be a JSON object ({rd.kind})")
    out: JSON = copy.deepcopy(dict(body))
    out["apiVersion"], out["kind"] = rd.api_version, rd.kind
    meta = out.get("metadata")
    out["metadata"] = {**(meta if isinstance(meta, dict) else {}), "creationTimestamp": None}
    spec = _mapping(out.get("spec")) or {}
    if rd.kind == "SelfSubjectReview":
        out["status"] = {"userInfo": requester.to_json()}
        return out
    if rd.kind == "SelfSubjectRulesReview":
        ns = str(spec.get("namespace") or "")
        resource_rules, url_rules, errs = authorizer.policy().rules_for(requester, ns)
        if authorizer.mode == "AlwaysAllow":
            resource_rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
            url_rules, errs = [{"verbs": ["*"], "nonResourceURLs": ["*"]}], []
        status: JSON = {
            "resourceRules": resource_rules,
            "nonResourceRules": url_rules,
            "incomplete": bool(errs),
        }
        if errs:
            status["evaluationError"] = "; ".join(errs)
        out["status"] = status
        return out
    attrs = _attributes(rd, spec)
    if rd.kind == "SelfSubjectAccessReview":
        user = requester
    else:
        user = user_from_json(spec)
        if not user.username and not user.groups:
            raise _invalid(rd, "spec.user", "", "at least one of user or group must be specified")
    if rd.kind == "LocalSubjectAccessReview":
        if not attrs.resource_request:
            raise _invalid(
                rd,
                "spec.nonResourceAttributes",
                spec.get("nonResourceAttributes"),
                "disallowed on this kind of request",
            )
        if attrs.namespace != (namespace or ""):
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    decision = authorizer.authorize(user, attrs)
    result: JSON = {"allowed": decision.allowed}
    if decision.reason:
        result["reason"] = decision.reason
    out["status"] = result
    return out
