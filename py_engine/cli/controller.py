"""`spreadgate controller`: run the WorkloadSpread controller against a cluster.

Watches WorkloadSpreads, pods, workloads and nodes (relisting on 410 Gone),
and for every spread keeps the status, the pods' deletion costs and Adaptive
rescheduling up to date, writing only differences. `--once` syncs every
spread one time from fresh lists and exits (0 when every sync succeeded, 1
otherwise). With `--leader-elect` only the holder of the Lease
(`--lease-namespace`/`--lease-name`) works; losing it exits the process
with status 1 so the Deployment restarts it as a follower.

`--custom-workload GROUP/KIND[=REPLICAS_PATH]` (repeatable, the webhook's flag)
makes the controller read and watch a custom workload kind, so spreads over it
get their status; the kind's resource is found by discovery, and the controller's
ServiceAccount needs get/list/watch on it (docs/operations.md, "RBAC"). Spreads
over any other custom kind report `TargetNotFound` (`KindNotAllowed`).

`--united-deployments` (default on) runs the UnitedDeployment controller in the
same process (`py_engine/uniteddeployment/controller/runtime`, docs/uniteddeployment.md): both
run in one `Manager` (`py_engine/runtime/manager.py`) with shared watch caches and one Lease,
whose gain starts both and whose loss stops both. It is skipped, with a log line, when the
cluster has no UnitedDeployment CRD.

`--metrics-port` serves Prometheus metrics on `/metrics` (sync duration,
writes by kind, queue depth, conflicts, leadership), `/healthz` and `/readyz` (503 until
every watch cache has its first list). Exit status: 0 after
SIGINT/SIGTERM, 1 when leadership was lost (or a `--once` sync failed), 2 for
bad arguments or an unreachable cluster configuration.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

from py_engine import logsetup
from py_engine.cli.options import WITH_REPLICAS, add_custom_workload, add_kubeconfig, add_versioned_kinds

log = logging.getLogger("spreadgate.controller")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


HELP = "run the WorkloadSpread controller (status, deletion costs, rescheduling)"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate controller` (the package builds its parser, py_engine/cli/__init__.py)."""
    add_kubeconfig(parser)
    parser.add_argument("--once", action="store_true", help="sync every spread once, then exit")
    parser.add_argument("--namespace", metavar="NS", help="only spreads (and pods) of this namespace")
    parser.add_argument("--workers", type=int, default=2, help="concurrent syncs (default 2)")
    parser.add_argument(
        "--resync-period",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="enqueue every spread this often (default 300)",
    )
    parser.add_argument(
        "--creating-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="age at which a creatingPods record expires (default 30)",
    )
    parser.add_argument(
        "--deleting-timeout",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="age at which a deletingPods record expires (default 15)",
    )
    parser.add_argument(
        "--recovery-window",
        type=int,
        default=300,
        metavar="SECONDS",
        help="default time an unschedulable subset stays skipped (default 300)",
    )
    add_versioned_kinds(parser)
    add_custom_workload(
        parser, "read and watch this custom workload kind as a spread target (repeatable)", WITH_REPLICAS
    )
    parser.add_argument("--leader-elect", action="store_true", help="run only while holding the Lease")
    parser.add_argument("--lease-name", default="spreadgate-controller", help="Lease name")
    parser.add_argument("--lease-namespace", default="spreadgate-system", help="Lease namespace")
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        metavar="PORT",
        help="serve /metrics on this port (default: off)",
    )
    parser.add_argument("--metrics-host", default="0.0.0.0", help="address for /metrics (default 0.0.0.0)")
    parser.add_argument(
        "--united-deployments",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the UnitedDeployment controller, under the same Lease (default: on)",
    )
    parser.add_argument(
        "--allow-patch-field",
        action="append",
        default=[],
        metavar="PATH",
        help="pod field a UnitedDeployment subset patch may set beyond the default allowlist "
        "(repeatable; give the webhook the same list); see docs/uniteddeployment.md",
    )
    logsetup.add_arguments(parser)


def _fail(message: str) -> int:
    print(f"spreadgate controller: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _serve_metrics(
    host: str, port: int, render: Callable[[], str], ready: Callable[[], bool]
) -> ThreadingHTTPServer:
    """`/metrics`, `/healthz` (the process serves) and `/readyz` (503 until every watch cache
    has its first list)."""
    from py_engine.metrics import CONTENT_TYPE

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path not in ("/metrics", "/healthz", "/readyz"):
                self.send_error(404)
                return
            status = 200
            if path == "/metrics":
                body = render().encode()
            elif path == "/readyz" and not ready():
                status, body = 503, b"caches not synced\n"
            else:
                body = b"ok\n"
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="controller-metrics").start()
    return server


def _say(json_log: bool, message: str, level: int = logging.INFO, **values: Any) -> None:
    """A line about the `--once` run itself, on stderr (the per-object report goes to stdout):
    plain text for people, or with `--log-format json` a log record whose fields carry the
    numbers, so a pipeline reading stderr gets JSON lines only (a record obeys `--log-level`)."""
    if json_log:
        log.log(level, message, extra=logsetup.fields(**values))
    else:
        print(message, file=sys.stderr)


def _once(
    client: Any,
    options: Any,
    namespace: str | None,
    *,
    json_log: bool = False,
    whitelist: Any = None,
    united: bool = False,
    patch_fields: tuple[str, ...] = (),
) -> int:
    """One pass of each controller from fresh lists, on the stepped Manager (the same controllers
    as the daemon's, added the same way); prints each sync's report."""
    from py_engine.apiclient import KubeError
    from py_engine.model.workloads import EMPTY_WHITELIST
    from py_engine.runtime.stepped import SteppedManager
    from py_engine.semantics.clock import RealClock
    from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller

    manager = SteppedManager(client, clock=RealClock(), namespace=namespace)
    try:
        add_spread_controller(manager, options=options, whitelist=whitelist or EMPTY_WHITELIST)
        if united and not _united_served(client):
            _say(
                json_log, "no UnitedDeployment CRD in the cluster: UnitedDeployments skipped", logging.WARNING
            )
        elif united:
            from py_engine.uniteddeployment.controller.runtime.loop import UnitedOptions
            from py_engine.uniteddeployment.controller.runtime.runtime import add_united_controller

            add_united_controller(manager, options=UnitedOptions(allowed_patch_fields=patch_fields))
    except KubeError as exc:
        return _fail(f"cannot list from the cluster: {exc}")
    manager.start()
    try:
        spread, *others = manager.controllers
        try:
            reports = manager.step_controller(spread)
        except KubeError as exc:
            return _fail(f"cannot list from the cluster: {exc}")
        failed = _print_spread_reports(reports, json_log)
        for controller in others:  # the UnitedDeployment controller, when added
            failed += _united_pass(manager, controller, json_log)
        return EXIT_FAILED if failed else EXIT_OK
    finally:
        manager.stop()


def _print_spread_reports(reports: list[Any], json_log: bool) -> int:
    failed = 0
    for report in reports:
        w = report.writes
        detail = (
            f"status={w.status} costs={w.deletion_cost} adoptions={w.adoption} "
            f"deleted={w.pod_delete} events={w.event}"
        )
        print(f"{report.key}: {report.outcome} {detail}" + (f" ({report.error})" if report.error else ""))
        problem = report.result.target_problem if report.result is not None else None
        if problem is not None:
            print(f"{report.key}: TargetNotFound ({problem.reason}): {problem.message}")
        failed += report.outcome not in ("synced", "gone")
    _say_synced(json_log, "WorkloadSpread", len(reports), failed)
    return failed


def _say_synced(json_log: bool, kind: str, synced: int, failed: int) -> None:
    """The closing line of a `--once` pass over one kind (a warning when any sync failed)."""
    level = logging.WARNING if failed else logging.INFO
    _say(
        json_log,
        f"synced {synced} {kind}(s), {failed} failed",
        level,
        kind=kind,
        synced=synced,
        failed=failed,
    )


def _united_served(client: Any) -> bool:
    from py_engine.uniteddeployment.controller.runtime.resources import UNITED_DEPLOYMENTS
    from py_engine.workloadspread.controller.runtime.sources import crd_exists

    return crd_exists(client, UNITED_DEPLOYMENTS)


def _united_pass(manager: Any, controller: Any, json_log: bool) -> int:
    """One pass of the UnitedDeployment controller; the number of syncs that failed (1 when
    its lists could not be read)."""
    from py_engine.apiclient import KubeError

    try:
        reports = manager.step_controller(controller)
    except KubeError as exc:
        _say(
            json_log,
            f"spreadgate controller: cannot list UnitedDeployments: {exc}",
            logging.ERROR,
            cause=str(exc),
        )
        return 1
    failed = 0
    for report in reports:
        w = report.writes
        print(
            f"{report.key}: {report.outcome} created={w.created} updated={w.updated} deleted={w.deleted} "
            f"status={w.status} events={w.events}" + (f" ({report.error})" if report.error else "")
        )
        failed += report.outcome not in ("synced", "gone")
    _say_synced(json_log, "UnitedDeployment", len(reports), failed)
    return failed


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        return _fail("--workers must be at least 1")
    if args.resync_period <= 0:
        return _fail("--resync-period must be positive")
    if args.creating_timeout <= 0 or args.deleting_timeout <= 0 or args.recovery_window <= 0:
        return _fail("timeouts and the recovery window must be positive")
    if not 0 <= args.metrics_port <= 65535:
        return _fail(f"--metrics-port {args.metrics_port} is not a TCP port")
    from py_engine.cli.preflight import kube_error_line, kubeconfig_problem
    from py_engine.model.workloads import WhitelistError, whitelist_from_flags
    from py_engine.validation.patch_fields import parse_patch_fields

    try:
        whitelist = whitelist_from_flags(args.custom_workload)
        patch_fields = parse_patch_fields(args.allow_patch_field)
    except (WhitelistError, ValueError) as exc:
        return _fail(str(exc))
    problem = kubeconfig_problem(args.kubeconfig) if args.kubeconfig else None
    if problem is not None:
        return _fail(problem)

    from py_engine.apiclient import KubeClient, KubeError
    from py_engine.workloadspread.controller.options import ReconcileOptions
    from py_engine.workloadspread.controller.runtime.loop import LoopOptions

    logsetup.configure_from(args)
    versioned = frozenset(k.strip().lower() for k in args.versioned_kinds.split(",") if k.strip())
    options = LoopOptions(
        reconcile=ReconcileOptions(
            creating_timeout_seconds=args.creating_timeout,
            deleting_timeout_seconds=args.deleting_timeout,
            recovery_window_seconds=args.recovery_window,
            versioned_kinds=versioned,
        ),
        workers=args.workers,
        resync_seconds=args.resync_period,
    )
    try:
        client = KubeClient.load(args.kubeconfig, timeout=10)
    except KubeError as exc:
        return _fail(kube_error_line(exc, args.kubeconfig))
    if args.once:
        try:
            json_log = args.log_format == "json"
            return _once(
                client,
                options,
                args.namespace,
                json_log=json_log,
                whitelist=whitelist,
                united=args.united_deployments,
                patch_fields=patch_fields,
            )
        finally:
            client.close()

    return _serve(args, client, options, whitelist, patch_fields)


def _build_manager(
    args: argparse.Namespace,
    client: Any,
    options: Any,
    whitelist: Any,
    patch_fields: tuple[str, ...],
    on_lost: Callable[[], None],
) -> Any:
    """The Manager with the WorkloadSpread controller and, when asked for and served, the
    UnitedDeployment one; raises `KubeError` when the cluster cannot be read."""
    from py_engine.runtime.leader import LeaderConfig
    from py_engine.runtime.manager import Manager
    from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller

    leader = None
    if args.leader_elect:
        leader = LeaderConfig(
            name=args.lease_name,
            namespace=args.lease_namespace,
            identity=f"{socket.gethostname()}_{os.getpid()}",
        )
    manager = Manager(client, leader=leader, on_lost=on_lost, namespace=args.namespace, owns_client=True)
    add_spread_controller(manager, options=options, whitelist=whitelist)
    if args.united_deployments and not _united_served(client):
        log.warning("no UnitedDeployment CRD in the cluster: the UnitedDeployment controller does not run")
    elif args.united_deployments:
        from py_engine.uniteddeployment.controller.runtime.loop import UnitedOptions
        from py_engine.uniteddeployment.controller.runtime.runtime import add_united_controller

        add_united_controller(
            manager,
            options=UnitedOptions(
                workers=args.workers, resync_seconds=args.resync_period, allowed_patch_fields=patch_fields
            ),
        )
    return manager


def _serve(
    args: argparse.Namespace, client: Any, options: Any, whitelist: Any, patch_fields: tuple[str, ...]
) -> int:
    """Run the Manager until SIGINT/SIGTERM (0) or the loss of the Lease (1)."""
    from py_engine.apiclient import KubeError

    lost = threading.Event()
    stop = threading.Event()

    def on_lost() -> None:
        # The elector has logged the loss (py_engine/runtime/leader.py); exit status 1 says the rest.
        lost.set()
        stop.set()
        # The election thread is not the main thread: make sure the process ends even if
        # the main thread is stuck in an API call (see py_engine/runtime/leader.py).
        threading.Timer(10.0, lambda: os._exit(EXIT_FAILED)).start()

    try:
        manager = _build_manager(args, client, options, whitelist, patch_fields, on_lost)
    except KubeError as exc:
        client.close()
        return _fail(str(exc))

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    metrics_server = None
    if args.metrics_port:
        try:
            metrics_server = _serve_metrics(
                args.metrics_host, args.metrics_port, manager.render_metrics, manager.ready
            )
        except OSError as exc:
            manager.stop()
            return _fail(f"cannot serve metrics on {args.metrics_host}:{args.metrics_port}: {exc}")
    manager.start()
    log.info(
        "running",
        extra=logsetup.fields(
            leader_election=args.leader_elect,
            namespace=args.namespace,
            workers=args.workers,
            united_deployments=any(c.name == "uniteddeployment" for c in manager.controllers),
        ),
    )
    try:
        stop.wait()
    finally:
        manager.stop()
        if metrics_server is not None:
            metrics_server.shutdown()
            metrics_server.server_close()
    return EXIT_FAILED if lost.is_set() else EXIT_OK
