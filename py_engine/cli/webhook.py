"""`spreadgate webhook`: serve the admission webhook over TLS.

Paths: `POST /mutate/pods` (pod CREATE: choose a subset, reserve the slot in
the WorkloadSpread status, patch the pod), `POST /validate/pods` (pod DELETE
and `pods/eviction` CREATE: record deletingPods), `POST
/validate/workloadspreads`, `GET /healthz` (liveness), `GET /readyz` (watch
caches synced and the policy engine answering; 503 with the reason
otherwise), `GET /metrics` (Prometheus).

Logs go to stderr (`--log-level`, `--log-format text|json`, shared with
`spreadgate controller`): every denial and error at warning/error with its
cause, every admission at debug (docs/operations.md, "Logs").

The certificate and key files are reloaded when they change. Slot
reservations are committed through the WorkloadSpread status subresource
with group commit; `--commit-timeout` bounds the conflict-retry loop and
must stay below the webhook's `timeoutSeconds`. A reservation that cannot be
committed in time is denied (`--on-commit-failure deny`, the reference's
behaviour; the workload controller retries) or the pod is admitted without a
subset (`allow-unmodified`). A subset patch that sets what the patch
allowlist refuses (policies/validation/patch.rego; `--allow-patch-field`
widens it) is left out of the pod, which is admitted with a warning.

A WorkloadSpread or UnitedDeployment change is allowed only when its author
(the review's userInfo) may change the workloads it acts on: `update` on a
spread's target workload, `create` and `update` on a UnitedDeployment's
template kind, asked with a SubjectAccessReview and cached for
`--authorization-cache-ttl` seconds (`--authorize-authors=false` turns it
off). `--client-ca FILE` makes every caller present a client certificate
signed by that CA (docs/operations.md, "Authenticating the API server").

Exit status: 0 after SIGINT/SIGTERM, 2 for bad arguments or when the cluster
configuration, certificate or policies cannot be loaded.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from types import FrameType

from py_engine import logsetup
from py_engine.cli.options import (
    WITH_REPLICAS,
    add_allow_patch_field,
    add_custom_workload,
    add_kubeconfig,
    add_opa_url,
    add_versioned_kinds,
)
from py_engine.policy.isolated import DEFAULT_DEADLINE_SECONDS
from py_engine.validation.authorization import DEFAULT_TTL
from webhook.collector import YOUNG_THRESHOLD, freeze_when_ready, tune_collector

log = logging.getLogger("spreadgate.webhook")
EXIT_OK, EXIT_USAGE = 0, 2


def _positive_seconds(text: str) -> float:
    """A number of seconds above 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 3600:
        raise argparse.ArgumentTypeError(f"{text!r}: must be more than 0 and less than 3600 seconds")
    return value


_LIMIT_FLAGS: tuple[tuple[str, type[float] | type[int], float, str, str], ...] = (
    # flag, type, default, metavar,
    #  help
    ("--handshake-timeout", float, 5.0, "SECONDS",
     "deadline for a new connection's TLS handshake (default 5)"),
    ("--header-timeout", float, 5.0, "SECONDS",
     "deadline for a request's head to arrive (default 5)"),
    ("--body-timeout", float, 10.0, "SECONDS",
     "deadline for a request's body once its head arrived (default 10)"),
    ("--idle-timeout", float, 60.0, "SECONDS",
     "how long a keep-alive connection may wait for its next request (default 60)"),
    ("--max-connections", int, 1024, "N",
     "open connections; at the cap a new one replaces the oldest that has not "
     "completed a request, or the oldest idle one (default 1024)"),
    ("--max-handshakes", int, 256, "N",
     "TLS handshakes in progress, 256 KiB each; at the cap a new one replaces the oldest (default 256)"),
    ("--peer-share", float, 0.5, "FRACTION",
     "the share of connections, handshakes and in-flight bytes one remote IP may hold (default 0.5)"),
    ("--min-body-rate", int, 64 * 1024, "BYTES_PER_SECOND",
     "a request body must keep arriving at this rate, checked each second, else 408; "
     "0 disables (default 65536)"),
    ("--max-body-bytes", int, 3 * 1024 * 1024, "BYTES",
     "largest request body, else 413 (default 3 MiB, the API server's own limit)"),
    ("--max-inflight-bytes", int, 8 * 1024 * 1024, "BYTES",
     "request bytes held at once, charged as they arrive, else 503 (default 8 MiB)"),
    ("--max-queued", int, 256, "N",
     "complete requests waiting for a worker thread, else 503 (default 256)"),
)  # fmt: skip
"""The connection-limit flags: (flag, type, default, metavar, help); each sets the
`webhook.limits.ServerLimits` field of its name."""


HELP = "serve the admission webhook (TLS)"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate webhook` (the package builds its parser, py_engine/cli/__init__.py)."""
    add_kubeconfig(parser)
    parser.add_argument(
        "--cert",
        required=True,
        metavar="FILE",
        help="TLS certificate (PEM); written by the webhook with --self-signed-ca",
    )
    parser.add_argument(
        "--key",
        required=True,
        metavar="FILE",
        help="TLS private key (PEM); written by the webhook with --self-signed-ca",
    )
    tls = parser.add_argument_group("self-managed CA (clusters without cert-manager)")
    tls.add_argument(
        "--self-signed-ca",
        action="store_true",
        help="keep a CA and serving certificate in a Secret, write --cert/--key from it, "
        "patch caBundle into the webhook configurations and rotate before expiry",
    )
    tls.add_argument("--secret-name", default="spreadgate-webhook-ca", help="Secret holding the CA")
    tls.add_argument(
        "--namespace",
        default=None,
        help="namespace of the Secret and the Service (default: $POD_NAMESPACE, else the "
        "pod's service-account namespace, else spreadgate-system)",
    )
    tls.add_argument(
        "--service-name",
        default="spreadgate-webhook",
        help="Service the API server calls; the certificate is issued for <svc>.<ns>.svc",
    )
    tls.add_argument(
        "--webhook-configs",
        default="spreadgate",
        metavar="NAMES",
        help="comma-separated Mutating/ValidatingWebhookConfiguration names to patch",
    )
    tls.add_argument(
        "--cert-check-interval",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how often to re-check the Secret and caBundle (default 3600)",
    )
    tls.add_argument(
        "--client-ca",
        metavar="FILE",
        help="require every caller to present a client certificate signed by a CA in FILE (PEM); "
        "the API server presents one through its AdmissionConfiguration (docs/operations.md)",
    )
    parser.add_argument(
        "--authorize-authors",
        type=_boolean,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="deny a WorkloadSpread or UnitedDeployment change whose author may not change the "
        "workloads it acts on, checked with a SubjectAccessReview (default true; "
        "--authorize-authors=false turns it off)",
    )
    parser.add_argument(
        "--authorization-cache-ttl",
        type=float,
        default=DEFAULT_TTL,
        metavar="SECONDS",
        help=f"how long an authorization answer is reused (default {DEFAULT_TTL:g})",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=9443, help="HTTPS port (default 9443)")
    parser.add_argument("--threads", type=int, default=32, help="worker threads (default 32)")
    limits = parser.add_argument_group("connection limits (a client cannot stall the webhook)")
    for flag, kind, default, metavar, text in _LIMIT_FLAGS:
        limits.add_argument(flag, type=kind, default=default, metavar=metavar, help=text)
    add_opa_url(parser, "evaluate Rego on this OPA server instead of in-process")
    parser.add_argument(
        "--validation-deadline",
        type=_positive_seconds,
        default=DEFAULT_DEADLINE_SECONDS,
        metavar="SECONDS",
        help="most seconds the policy may spend on one WorkloadSpread or UnitedDeployment review, "
        "evaluated in a worker process; past it the review is denied and the worker replaced "
        f"(default {DEFAULT_DEADLINE_SECONDS:g}, below the webhook configurations' "
        "timeoutSeconds of 5; the embedded engine only)",
    )
    parser.add_argument(
        "--on-commit-failure",
        choices=("deny", "allow-unmodified"),
        default="deny",
        help="what to do with a pod whose slot could not be committed in time (default deny)",
    )
    parser.add_argument(
        "--commit-timeout",
        type=float,
        default=2.5,
        metavar="SECONDS",
        help="deadline for committing a reservation (default 2.5, below a 10 s webhook timeout)",
    )
    parser.add_argument(
        "--deny-deletes-on-failure",
        action="store_true",
        help="deny a pod delete/eviction whose deletingPods record could not be written "
        "(default: allow it with a warning)",
    )
    add_custom_workload(parser, "accept this custom workload kind as a pod owner (repeatable)", WITH_REPLICAS)
    add_allow_patch_field(
        parser, ", e.g. spec.nodeSelector or spec.containers[].volumeMounts; see docs/operations.md"
    )
    add_versioned_kinds(parser)
    parser.add_argument(
        "--disable-node-simulation",
        action="store_true",
        help="do not cache nodes and pods for Adaptive node-fit simulation",
    )
    parser.add_argument(
        "--no-group-commit",
        action="store_true",
        help="write each reservation on its own (one status write per pod)",
    )
    parser.add_argument(
        "--gc-young-threshold",
        type=int,
        default=YOUNG_THRESHOLD,
        metavar="N",
        help="container allocations between two collections of the garbage collector's youngest "
        f"generation (default {YOUNG_THRESHOLD}; Python's own is 700; 0 leaves it)",
    )
    logsetup.add_arguments(parser)


def _boolean(value: str) -> bool:
    """`true`/`false` (also 1/0, yes/no), as Kubernetes components spell boolean flags."""
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"{value!r} is not true or false")


def _fail(message: str) -> int:
    print(f"spreadgate webhook: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _ca_problem(path: str) -> str | None:
    """Why `path` cannot serve as --client-ca (unreadable, or no certificate in it), or None."""
    import ssl

    try:
        ssl.create_default_context(cafile=path)
    except FileNotFoundError:
        return f"--client-ca {path}: no such file"
    except ssl.SSLError as exc:  # its text ends with the C source line; the reason alone is the cause
        return f"--client-ca {path}: not a PEM file of CA certificates ({exc.reason or 'unreadable'})"
    except (OSError, ValueError) as exc:
        return f"--client-ca {path}: cannot be read ({getattr(exc, 'strerror', None) or exc})"
    return None


def _own_namespace() -> str:
    """$POD_NAMESPACE (downward API), else the service account's namespace file, else the default."""
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as f:
            return f.read().strip() or "spreadgate-system"
    except OSError:
        return "spreadgate-system"


def run(args: argparse.Namespace) -> int:
    logsetup.configure_from(args)
    if not 1 <= args.port <= 65535 and args.port != 0:
        return _fail(f"--port {args.port} is not a TCP port")
    if args.threads < 1:
        return _fail("--threads must be at least 1")
    if not 0 < args.commit_timeout < 30:
        return _fail("--commit-timeout must be between 0 and 30 seconds")
    if args.gc_young_threshold < 0:
        return _fail("--gc-young-threshold must be 0 (Python's setting) or positive")
    from py_engine.cli.preflight import kube_error_line, kubeconfig_problem, one_line, tls_pair_problem

    problem = kubeconfig_problem(args.kubeconfig) if args.kubeconfig else None
    if problem is None and not args.self_signed_ca:
        problem = tls_pair_problem(args.cert, args.key)
    if problem is not None:
        return _fail(problem)
    if args.self_signed_ca and not args.cert_check_interval > 0:
        return _fail("--cert-check-interval must be positive")
    if not 0 <= args.authorization_cache_ttl <= 300:
        return _fail("--authorization-cache-ttl must be between 0 and 300 seconds")
    if args.client_ca is not None:
        problem = _ca_problem(args.client_ca)
        if problem is not None:
            return _fail(problem)
    from py_engine.model.workloads import whitelist_from_flags
    from py_engine.validation.patch_fields import parse_patch_fields

    try:
        custom = whitelist_from_flags(args.custom_workload).entries()
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except ValueError as exc:
        return _fail(str(exc))
    versioned = frozenset(k.strip().lower() for k in args.versioned_kinds.split(",") if k.strip())
    from webhook.limits import ServerLimits

    try:
        fields = (flag.removeprefix("--").replace("-", "_") for flag, *_ in _LIMIT_FLAGS)
        limits = ServerLimits(**{name: getattr(args, name) for name in fields})
    except ValueError as exc:
        return _fail("--" + str(exc).replace("_", "-"))

    from py_engine.apiclient import KubeError
    from py_engine.policy import PolicyError
    from webhook.certs import CertError, SelfSignedOptions
    from webhook.runtime import Webhook, WebhookOptions

    self_signed = None
    if args.self_signed_ca:
        self_signed = SelfSignedOptions(
            namespace=args.namespace or _own_namespace(),
            secret_name=args.secret_name,
            service_name=args.service_name,
            interval=args.cert_check_interval,
            webhook_configs=tuple(n.strip() for n in args.webhook_configs.split(",") if n.strip()),
        )

    options = WebhookOptions(
        cert_file=args.cert,
        key_file=args.key,
        kubeconfig=args.kubeconfig,
        host=args.host,
        port=args.port,
        threads=args.threads,
        opa_url=args.opa_url,
        on_commit_failure=args.on_commit_failure,
        commit_timeout=args.commit_timeout,
        deny_deletes_on_failure=args.deny_deletes_on_failure,
        versioned_kinds=versioned,
        custom_workloads=custom,
        allowed_patch_fields=patch_fields,
        node_simulation=not args.disable_node_simulation,
        batching=not args.no_group_commit,
        limits=limits,
        self_signed=self_signed,
        authorize_authors=args.authorize_authors,
        authorization_ttl=args.authorization_cache_ttl,
        client_ca=args.client_ca,
        validation_deadline=args.validation_deadline,
    )
    tune_collector(args.gc_young_threshold)
    try:
        hook = Webhook(options)
    except (KubeError, PolicyError, CertError) as exc:
        return _fail(
            kube_error_line(exc, args.kubeconfig) if isinstance(exc, KubeError) else one_line(str(exc))
        )
    except (OSError, ValueError) as exc:
        return _fail(f"cannot start: {one_line(getattr(exc, 'reason', None) or str(exc))}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        hook.start()
        if hook.isolated is not None:
            hook.isolated.start()  # the policy workers load while the caches sync, before the first review
        freeze_when_ready(hook.view.wait_ready)  # the cached cluster out of every full collection
    except OSError as exc:
        hook.stop()
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc}")
    # tests/webhook_testkit.py reads the URL from this line (`serving on (https://\S+)`):
    # keep a space after it.
    log.info(
        "serving on %s with %d worker threads",
        hook.url,
        args.threads,
        extra=logsetup.fields(
            policy_engine="opa" if args.opa_url else "embedded",
            authorize_authors=args.authorize_authors,
            client_ca=args.client_ca is not None,
            on_commit_failure=args.on_commit_failure,
            group_commit=not args.no_group_commit,
            gc_young_threshold=args.gc_young_threshold,
        ),
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        log.info("stopping")
        hook.stop()
    return EXIT_OK
