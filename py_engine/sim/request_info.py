"""The authorization attributes of one HTTP request, derived as kube-apiserver derives them.

Authorization (py_engine/sim/rbac.py) and admission both need to know *what* a request
does before it is routed: verb, API group, resource, subresource, name and namespace for
a resource request, or the path and lower-cased method for anything else (discovery,
health, OpenAPI). The rules follow the API server's request-info parser:

- `/api/v1/...` and `/apis/<group>/<version>/...` with at least one more segment are
  resource requests; everything else (`/api`, `/apis/apps/v1`, `/healthz`) is not;
- the verb comes from the method (GET get, POST create, PUT update, PATCH patch, DELETE
  delete); a GET without a name is `list`, or `watch` with `watch=true|1` or the legacy
  `/watch/` prefix; a DELETE without a name is `deletecollection`;
- `namespaces/<ns>/<resource>/...` sets the namespace; `namespaces/<ns>` itself (and its
  `status` / `finalize` subresources) is the namespace object, whose namespace attribute
  is its own name;
- a list or watch with the field selector `metadata.name=<n>` carries the name `n`, so a
  rule restricted by `resourceNames` can allow watching that one object.

Pure: no I/O, no server state; the HTTP front end calls `request_attributes` once per
request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_TRUE = ("true", "1")


@dataclass(frozen=True)
class RequestAttributes:
    """What a request asks to do; `resource_request` False means only `verb` and `path` count."""

    verb: str
    path: str = ""
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""

    @classmethod
    def on_resource(
        cls,
        verb: str,
        group: str,
        resource: str,
        *,
        name: str = "",
        namespace: str = "",
        subresource: str = "",
    ) -> RequestAttributes:
        """A resource request the server makes on its own account (an RBAC escalation or
        impersonation check, a rule being tested), which has no path."""
        return cls(
            verb=verb,
            resource_request=True,
            api_group=group,
            resource=resource,
            subresource=subresource,
            name=name,
            namespace=namespace,
        )

    @property
    def resource_with_subresource(self) -> str:
        """`pods` or `pods/status`: how RBAC rules and denial messages name it."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _exact_name(field_selector: str) -> str:
    """The name a field selector pins with `metadata.name=` or `==` (and nothing else)."""
    terms = [t.strip() for t in field_selector.split(",") if t.strip()]
    if len(terms) != 1:
        return ""
    term = terms[0]
    for op in ("==", "="):
        key, sep, value = term.partition(op)
        if sep and key.strip() == "metadata.name" and "!" not in key:
            value = value.strip()
            return value if value and "/" not in value and value not in (".", "..") else ""
    return ""


def split_path(path: str) -> list[str]:
    """The non-empty segments of a URL path, decoded first (`%3A` is `:`, `%2F` a separator),
    as Go's `URL.Path` is before kube-apiserver splits it. The router uses the same split, so
    authorization and routing always agree on which object a request names."""
    return [p for p in unquote(path.split("?", 1)[0]).split("/") if p]


def request_attributes(method: str, path: str, query: Mapping[str, str] | None = None) -> RequestAttributes:
    """The attributes of `method path?query` (query: the first value of each parameter)."""
    q = query or {}
    method = method.upper()
    parts = split_path(path)
    non_resource = RequestAttributes(verb=method.lower(), path="/" + "/".join(parts) if parts else "/")
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = _METHOD_VERBS.get(method, "")
    if rest[0] == "watch":
        if len(rest) < 2:
            return non_resource
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    if not name and verb == "get":
        verb = "watch" if q.get("watch", "").lower() in _TRUE else "list"
    if not name and verb in ("list", "watch"):
        name = _exact_name(q.get("fieldSelector", ""))
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestAttributes(
        verb=verb,
        path=non_resource.path,
        resource_request=True,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        name=name,
        namespace=namespace,
    )
