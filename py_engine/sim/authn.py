"""Authentication of the embedded cluster's HTTPS clients: bearer tokens, or anonymous.

Every kubeconfig the cluster writes carries a bearer token (py_engine/sim/http_server.py);
the token table maps each one to the identity a real install would give its holder:

- the playground's own kubeconfig user, `kubernetes-admin` in `system:masters` (a
  cluster administrator, like the user `kubeadm` writes into `admin.conf`);
- tokens issued for a ServiceAccount (`issue_service_account_token`) authenticate as
  `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and
  `system:serviceaccounts:<ns>`, what a projected token gives a pod;
- tokens issued for any other user and groups (tests), e.g. a namespace user.

A request without an `Authorization` header is `system:anonymous` in
`system:unauthenticated` (kube-apiserver's `--anonymous-auth=true`); RBAC then allows it
only health and version. A bearer token the table does not hold is a 401 `Unauthorized`,
as is any other authorization scheme. Client certificates, OIDC, webhook token
authentication and token expiry are not modelled.
"""

from __future__ import annotations

import secrets
import threading

from py_engine.sim import errors
from py_engine.sim.identity import (
    ANONYMOUS,
    AUTHENTICATED,
    MASTERS,
    UNAUTHENTICATED,
    UserInfo,
    service_account_user,
    with_implicit_group,
)
from py_engine.sim.interface import ApiError

ADMIN = UserInfo("kubernetes-admin", (MASTERS, AUTHENTICATED))
ANONYMOUS_USER = UserInfo(ANONYMOUS, (UNAUTHENTICATED,))
MAX_TOKENS = 10_000


def unauthorized() -> ApiError:
    return ApiError(errors.status(401, "Unauthorized", "Unauthorized"))


class TokenAuthenticator:
    """Bearer tokens to identities (see the module docstring). Thread-safe, bounded."""

    def __init__(self, anonymous: bool = True) -> None:
        self.anonymous = anonymous
        self._lock = threading.Lock()
        self._tokens: dict[str, UserInfo] = {}

    def issue(self, user: UserInfo, prefix: str = "spreadgate") -> str:
        """A new token for `user` (given `system:authenticated` if missing)."""
        token = f"{prefix}-{secrets.token_hex(16)}"
        with self._lock:
            if len(self._tokens) >= MAX_TOKENS:
                raise ValueError(f"the embedded cluster holds at most {MAX_TOKENS} tokens")
            self._tokens[token] = with_implicit_group(user)
        return token

    def issue_service_account_token(self, namespace: str, name: str) -> str:
        return self.issue(service_account_user(namespace, name), "sa")

    def authenticate(self, authorization: str | None) -> UserInfo:
        """The identity behind an `Authorization` header value; 401 when it names none."""
        if not authorization:
            if self.anonymous:
                return ANONYMOUS_USER
            raise unauthorized()
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized()
        with self._lock:
            user = self._tokens.get(token.strip())
        if user is None:
            raise unauthorized()
        return user
