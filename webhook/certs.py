"""Self-managed webhook TLS: a CA and a serving certificate kept in a Secret.

For clusters without cert-manager, `spreadgate webhook --self-signed-ca`
keeps its own CA. Why a Secret: every webhook replica must present a
certificate signed by the CA that the API server trusts (the `caBundle` of
the webhook configurations), so the replicas share one CA through a Secret
instead of each generating its own. Flow (`SelfManagedCA.sync`):

1. read the Secret; when it is missing, empty, unparsable, about to expire or
   issued for other names, generate what is needed and write it back with a
   resourceVersion-conditional update (or a create), so two replicas starting
   together converge on one CA: the loser of the race gets a 409, re-reads and
   uses the winner's;
2. write `tls.crt`/`tls.key` to the files the TLS server loads (atomically;
   the server's reloader picks up a rotation without a restart);
3. patch `caBundle` into the named Mutating/ValidatingWebhookConfigurations
   (only the webhooks whose bundle differs; a JSON patch guarded by a `test`
   of each webhook's name, so a concurrently edited list is not corrupted).

Rotation: the serving certificate (1 year) is reissued from the same CA when
less than `renew_before` is left, which changes nothing in `caBundle`; the CA
(10 years) is replaced the same way, and the bundle then carries the new and
the old CA until the old one expires, so certificates still served by other
replicas keep verifying. `start()` repeats `sync()` every `interval` seconds,
or every `retry_interval` after a failure or while a named configuration does
not exist yet (the Deployment may start before `kubectl apply` creates them).

Least privilege: the manifests ship the (empty) Secret and grant only `get`
and `update` on it by name, since RBAC cannot restrict `create` by name; the
create path exists for clusters where the Secret was not pre-created.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from py_engine.apiclient import AlreadyExists, Conflict, Invalid, KubeClient, KubeError, NotFound, Resource
from py_engine.semantics.certificates import ca_certificate, server_certificate

log = logging.getLogger(__name__)

SECRETS = Resource("", "v1", "secrets", True, "Secret")
MUTATING_CONFIGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    False,
    "MutatingWebhookConfiguration",
)
VALIDATING_CONFIGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    False,
    "ValidatingWebhookConfiguration",
)

CA_VALIDITY = dt.timedelta(days=3650)
SERVING_VALIDITY = dt.timedelta(days=365)
RENEW_BEFORE = dt.timedelta(days=30)
CA_COMMON_NAME = "spreadgate-webhook-ca"

# Secret keys. `ca-bundle.crt` is what goes into caBundle (current CA first).
CA_CERT, CA_KEY, TLS_CERT, TLS_KEY, CA_BUNDLE = "ca.crt", "ca.key", "tls.crt", "tls.key", "ca-bundle.crt"

Now = Callable[[], dt.datetime]


class CertError(RuntimeError):
    """The Secret or the webhook configurations could not be brought in line."""


@dataclass(frozen=True)
class TLSMaterial:
    """Everything the Secret holds, as PEM text."""

    ca_cert_pem: str
    ca_key_pem: str
    cert_pem: str
    key_pem: str
    ca_bundle_pem: str

    def to_secret_data(self) -> dict[str, str]:
        raw = {
            CA_CERT: self.ca_cert_pem,
            CA_KEY: self.ca_key_pem,
            TLS_CERT: self.cert_pem,
            TLS_KEY: self.key_pem,
            CA_BUNDLE: self.ca_bundle_pem,
        }
        return {k: base64.b64encode(v.encode()).decode() for k, v in raw.items()}

    @classmethod
    def from_secret_data(cls, data: dict[str, Any] | None) -> TLSMaterial | None:
        """None when a key is missing or not base64 text (an empty placeholder Secret)."""
        if not data:
            return None
        try:
            values = {
                k: base64.b64decode(str(data[k]), validate=True).decode()
                for k in (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY)
            }
            bundle = base64.b64decode(str(data.get(CA_BUNDLE) or ""), validate=True).decode()
        except (KeyError, ValueError):
            return None
        return cls(
            values[CA_CERT], values[CA_KEY], values[TLS_CERT], values[TLS_KEY], bundle or values[CA_CERT]
        )


def service_dns_names(service: str, namespace: str) -> list[str]:
    """The names the API server may verify: it uses `<svc>.<ns>.svc`; the others are for humans and tools."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _pem_key(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _pem_cert(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _load_key(pem: str) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an EC key")
    return key


def new_ca(now: dt.datetime, validity: dt.timedelta = CA_VALIDITY) -> tuple[str, str]:
    """(certificate, key) PEM of a fresh CA. EC P-256: cheap handshakes, accepted by every API server.
    The extensions pass strict verification (py_engine/semantics/certificates.py)."""
    key = ec.generate_private_key(ec.SECP256R1())
    cert = ca_certificate(key, CA_COMMON_NAME, now - dt.timedelta(minutes=5), now + validity)
    return _pem_cert(cert), _pem_key(key)


def issue_serving(
    ca_cert_pem: str,
    ca_key_pem: str,
    dns_names: Sequence[str],
    now: dt.datetime,
    validity: dt.timedelta = SERVING_VALIDITY,
) -> tuple[str, str]:
    """(certificate, key) PEM of a server certificate for `dns_names`, signed by the CA."""
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem.encode())
    ca_key = _load_key(ca_key_pem)
    key = ec.generate_private_key(ec.SECP256R1())
    not_after = min(now + validity, ca_cert.not_valid_after_utc)  # never outlive the issuer
    cert = server_certificate(
        ca_cert,
        ca_key,
        key.public_key(),
        dns_names[0],
        [x509.DNSName(n) for n in dns_names],
        now - dt.timedelta(minutes=5),
        not_after,
    )
    return _pem_cert(cert), _pem_key(key)


def _split_pems(bundle: str) -> list[str]:
    marker = "-----END CERTIFICATE-----"
    return [part.strip() + "\n" + marker + "\n" for part in bundle.split(marker) if part.strip()]


def _still_valid(pem: str, now: dt.datetime) -> bool:
    try:
        return x509.load_pem_x509_certificate(pem.encode()).not_valid_after_utc > now
    except ValueError:
        return False


def _spki(public_key: Any) -> bytes:
    return bytes(
        public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def _ca_problem(m: TLSMaterial, now: dt.datetime, renew_before: dt.timedelta) -> str | None:
    try:
        ca = x509.load_pem_x509_certificate(m.ca_cert_pem.encode())
        key = _load_key(m.ca_key_pem)
    except ValueError as exc:
        return f"unreadable CA: {exc}"
    if _spki(ca.public_key()) != _spki(key.public_key()):
        return "the CA key does not match the CA certificate"
    if ca.not_valid_after_utc - now < renew_before:
        return "the CA expires soon"
    return None


def _serving_problem(
    m: TLSMaterial, dns_names: Sequence[str], now: dt.datetime, renew_before: dt.timedelta
) -> str | None:
    try:
        ca = x509.load_pem_x509_certificate(m.ca_cert_pem.encode())
        cert = x509.load_pem_x509_certificate(m.cert_pem.encode())
        key = serialization.load_pem_private_key(m.key_pem.encode(), password=None)
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature) as exc:
        return f"serving certificate unusable or not issued by the CA: {exc!r}"
    if _spki(cert.public_key()) != _spki(key.public_key()):
        return "the serving key does not match the certificate"
    try:
        names = set(
            cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
                x509.DNSName
            )
        )
    except x509.ExtensionNotFound:
        names = set()
    if not set(dns_names) <= names:
        return "the serving certificate is for other names"
    if cert.not_valid_after_utc - now < renew_before:
        return "the serving certificate expires soon"
    return None


def plan(
    current: TLSMaterial | None,
    dns_names: Sequence[str],
    now: dt.datetime,
    renew_before: dt.timedelta = RENEW_BEFORE,
) -> tuple[TLSMaterial | None, str]:
    """(new material, why) when `current` must be replaced, else (None, "up to date")."""
    ca_problem = "no CA yet" if current is None else _ca_problem(current, now, renew_before)
    if ca_problem is not None:
        ca_cert, ca_key = new_ca(now)
        cert, key = issue_serving(ca_cert, ca_key, dns_names, now)
        # Keep trusting the old CA while it lives: other replicas may still serve its certificates.
        old = [p for p in _split_pems(current.ca_bundle_pem) if _still_valid(p, now)] if current else []
        bundle = "".join([ca_cert, *[p for p in old if p.strip() != ca_cert.strip()]])
        return TLSMaterial(ca_cert, ca_key, cert, key, bundle), ca_problem
    assert current is not None
    bundle = (
        "".join(p for p in _split_pems(current.ca_bundle_pem) if _still_valid(p, now)) or current.ca_cert_pem
    )
    why = _serving_problem(current, dns_names, now, renew_before)
    if why is None:
        if bundle == current.ca_bundle_pem:
            return None, "up to date"
        return TLSMaterial(
            current.ca_cert_pem, current.ca_key_pem, current.cert_pem, current.key_pem, bundle
        ), "an expired CA was dropped from the bundle"
    cert, key = issue_serving(current.ca_cert_pem, current.ca_key_pem, dns_names, now)
    return TLSMaterial(current.ca_cert_pem, current.ca_key_pem, cert, key, bundle), why


def write_atomically(path: str, text: str, mode: int = 0o644) -> None:
    """Replace `path` in one rename, so the server's reloader never reads half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class SelfSignedOptions:
    """Where the CA lives and whom to tell about it (see `spreadgate webhook --self-signed-ca`)."""

    namespace: str
    secret_name: str = "spreadgate-webhook-ca"
    service_name: str = "spreadgate-webhook"
    webhook_configs: tuple[str, ...] = ("spreadgate",)
    interval: float = 3600.0
    retry_interval: float = 10.0
    """Wait after a failed or incomplete pass (a configuration not created yet at first install)."""
    renew_before: dt.timedelta = RENEW_BEFORE


class SelfManagedCA:
    """See the module docstring. `sync()` once before serving; `start()` for periodic rotation checks."""

    def __init__(
        self,
        client: KubeClient,
        options: SelfSignedOptions,
        *,
        cert_file: str,
        key_file: str,
        now: Now | None = None,
        attempts: int = 5,
    ) -> None:
        self.client = client
        self.options = options
        self.cert_file, self.key_file = cert_file, key_file
        self.now: Now = now or (lambda: dt.datetime.now(dt.UTC))
        self.attempts = attempts
        self.dns_names = service_dns_names(options.service_name, options.namespace)
        self.rotations = 0
        self.material: TLSMaterial | None = None
        self.missing_configs: list[str] = []
        """Names of `webhook_configs` found neither as mutating nor as validating at the last pass."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- Secret

    def ensure(self) -> TLSMaterial:
        """The usable material from the Secret, generated and stored first when needed."""
        o = self.options
        for _ in range(self.attempts):
            try:
                secret: dict[str, Any] | None = self.client.get(SECRETS, o.namespace, o.secret_name)
            except NotFound:
                secret = None
            current = TLSMaterial.from_secret_data((secret or {}).get("data"))
            fresh, why = plan(current, self.dns_names, self.now(), o.renew_before)
            if fresh is None:
                assert current is not None
                return current
            try:
                if secret is None:
                    self.client.create(
                        SECRETS,
                        o.namespace,
                        {
                            "apiVersion": "v1",
                            "kind": "Secret",
                            "type": "Opaque",
                            "metadata": {
                                "name": o.secret_name,
                                "namespace": o.namespace,
                                "labels": {
                                    "app.kubernetes.io/name": "spreadgate",
                                    "app.kubernetes.io/component": "webhook-ca",
                                },
                            },
                            "data": fresh.to_secret_data(),
                        },
                    )
                else:
                    body = dict(secret)
                    body["data"] = fresh.to_secret_data()  # metadata.resourceVersion makes it conditional
                    self.client.replace(SECRETS, o.namespace, o.secret_name, body)
            except (Conflict, AlreadyExists):
                continue  # another replica wrote first: use what it wrote
            log.info("webhook TLS material in secret %s/%s renewed: %s", o.namespace, o.secret_name, why)
            self.rotations += 1
            return fresh
        raise CertError(f"secret {o.namespace}/{o.secret_name} kept changing under {self.attempts} attempts")

    # ------------------------------------------------------------ files

    def write_files(self, material: TLSMaterial) -> bool:
        """Write the serving pair when it differs from the files; True when written."""
        try:
            with open(self.cert_file, encoding="ascii") as f:
                if f.read() == material.cert_pem:
                    return False
        except OSError:
            pass
        write_atomically(self.key_file, material.key_pem, 0o600)
        write_atomically(self.cert_file, material.cert_pem)
        return True

    # --------------------------------------------------- webhook configs

    def patch_configs(self, bundle_pem: str) -> int:
        """Set `caBundle` on every webhook of the named configurations; returns webhooks changed."""
        encoded = base64.b64encode(bundle_pem.encode()).decode()
        changed = 0
        found: set[str] = set()
        for resource in (MUTATING_CONFIGS, VALIDATING_CONFIGS):
            for name in self.options.webhook_configs:
                for _ in range(self.attempts):
                    try:
                        cfg = self.client.get(resource, None, name)
                    except NotFound:
                        break  # a name may be only mutating or only validating
                    found.add(name)
                    ops: list[dict[str, Any]] = []
                    for i, hook in enumerate(cfg.get("webhooks") or []):
                        client_config = hook.get("clientConfig") or {}
                        if client_config.get("caBundle") != encoded:
                            ops.append(
                                {"op": "test", "path": f"/webhooks/{i}/name", "value": hook.get("name")}
                            )
                            ops.append(
                                {
                                    "op": "add",
                                    "path": f"/webhooks/{i}/clientConfig/caBundle",
                                    "value": encoded,
                                }
                            )
                    if not ops:
                        break
                    try:
                        self.client.patch(resource, None, name, ops, "json")
                    except (Conflict, Invalid):
                        continue  # the list changed between get and patch (failed `test`): re-read
                    changed += len(ops) // 2
                    break
                else:
                    raise CertError(f"{resource.kind} {name} kept changing under {self.attempts} attempts")
        self.missing_configs = [n for n in self.options.webhook_configs if n not in found]
        if self.missing_configs:
            log.warning(
                "webhook configurations %s do not exist yet; caBundle set on them at the next check",
                ", ".join(self.missing_configs),
            )
        return changed

    # -------------------------------------------------------------- loop

    def sync(self) -> TLSMaterial:
        """Secret, files, caBundle: one full pass. Raises KubeError/CertError/OSError."""
        material = self.ensure()
        self.write_files(material)
        self.patch_configs(material.ca_bundle_pem)
        self.material = material
        return material

    def _run(self) -> None:
        wait = self.options.retry_interval if self.missing_configs else self.options.interval
        while not self._stop.wait(wait):
            try:
                self.sync()
                wait = self.options.retry_interval if self.missing_configs else self.options.interval
            except (KubeError, CertError, OSError) as exc:
                wait = self.options.retry_interval
                log.warning("webhook certificate check failed (retrying in %gs): %s", wait, exc)

    def start(self) -> SelfManagedCA:
        self._thread = threading.Thread(target=self._run, daemon=True, name="webhook-ca")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
