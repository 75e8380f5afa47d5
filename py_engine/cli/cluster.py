"""`spreadgate cluster`: a Spreadgate playground on the embedded Kubernetes cluster.

Starts the API server with its HTTPS front end, the workload controllers
(Deployment, ReplicaSet, StatefulSet, Job), the garbage collector, the
scheduler and a simulated kubelet for every node of the pool, in real time;
then, unless `--bare`, installs the WorkloadSpread CRD, runs the real admission
webhook on 127.0.0.1 (its own CA, registered with `caBundle`) and the real
controller, each as its ServiceAccount under the shipped RBAC (the cluster authorizes
every request like kube-apiserver; the kubeconfig's user is a cluster administrator,
`kubectl --as` and `kubectl auth can-i` work): the assembled stack of
`py_engine.assembled_stack.Stack`. Prints the
URL, the kubeconfig path and the commands to try, then serves until SIGINT or
SIGTERM, when it stops everything and exits 0. Use it with
`kubectl --kubeconfig FILE ...` or any Kubernetes client.

`--bare` runs the emulator alone (no CRD, no webhook, no controller).

The node pool (`--nodes FILE`, YAML or JSON) is either a list of nodes or a
compact description; without it three nodes in zones zone-a/b/c are created:

    pools:
      - name: zone-a
        count: 3
        labels: {topology.kubernetes.io/zone: zone-a}
        taints: [{key: dedicated, value: batch, effect: NoSchedule}]
        capacity: {cpu: "8", memory: 32Gi, pods: 110}
    nodes:
      - {name: big-0, capacity: {cpu: "64", memory: 512Gi}}

`--nodes` is read like every other input file (YAML or JSON, one line naming
the problem on bad input). `--log-level` and `--log-format` are the daemons'
flags (docs/operations.md "Logs"); the playground's default level is warning.

`--faults SPEC` injects API failures for external requests (syntax in
`py_engine.sim.faults`, e.g. `pods:create:latency=10ms;*:*:error500=0.01`).
Exit status: 0 after a clean stop, 1 when the webhook or the controller could
not start, 2 for bad arguments or input (a port in use included).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

from py_engine import logsetup

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXAMPLE = "manifests/examples/zones-20-20-60.yaml"


_KUBELET_SECONDS: tuple[tuple[str, float, str], ...] = (
    ("start_delay", 0.0, "seconds from binding to Running (default 0)"),
    ("ready_delay", 0.0, "seconds from Running to Ready (default 0)"),
    ("job_run_seconds", 5.0, "how long Job pods run before succeeding (default 5)"),
)
"""The kubelet's timing flags: (`KubeletConfig` field, default, help); `--start-delay` sets
`start_delay` and so on, and none may be negative."""

HELP = "run a playground: the embedded Kubernetes cluster with Spreadgate's webhook and controller"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate cluster` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument(
        "--port", type=int, default=0, help="HTTPS port of the API server (default: a free port)"
    )
    parser.add_argument(
        "--webhook-port",
        type=int,
        default=0,
        help="HTTPS port of the admission webhook (default: a free port)",
    )
    parser.add_argument(
        "--bare", action="store_true", help="the emulator only: no CRD, no webhook, no controller"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--kubeconfig-out", metavar="FILE", help="write the kubeconfig here (default: a new temporary file)"
    )
    parser.add_argument("--nodes", metavar="FILE", help="node pool description (YAML or JSON)")
    parser.add_argument("--faults", metavar="SPEC", help="fault injection spec for API requests")
    for field, default, text in _KUBELET_SECONDS:
        flag = "--" + field.replace("_", "-")
        parser.add_argument(flag, type=float, default=default, metavar="SECONDS", help=f"kubelet: {text}")
    parser.add_argument(
        "--honor-grace-period",
        action="store_true",
        help="kubelet: confirm pod deletion only after the grace period (default: at once)",
    )
    logsetup.add_arguments(parser, level="warning")


def _error(message: str) -> int:
    print(f"spreadgate cluster: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _next_steps(kubeconfig: str) -> str:
    return "\n".join(
        [
            "try (from the repository's top folder):",
            f"  export KUBECONFIG={kubeconfig}",
            f"  kubectl apply -f {EXAMPLE}",
            "  kubectl create deployment api --image=nginx --replicas=10",
            "  kubectl get pods -o wide -L zone",
            "  kubectl get sgws",
        ]
    )


def _read_node_pool(path: str) -> list[Any]:
    """The nodes `--nodes` describes, read with the reader every input file goes through.

    A `ValueError` (a `DocumentError` for unreadable text, a `NodePoolError` for a bad
    description) carries the one line to print.
    """
    from py_engine.sim.nodepool import nodes_from_description
    from py_engine.validation.documents import DocumentError, parse_documents, read_bytes

    documents = parse_documents(path, read_bytes(path))
    if len(documents) != 1:
        raise DocumentError(path, f"expected one node pool document, found {len(documents)}")
    return nodes_from_description(documents[0].obj, source=path)


def run(args: argparse.Namespace) -> int:
    from py_engine.sim.faults import FaultInjector, FaultSpecError
    from py_engine.sim.kubelet import KubeletConfig

    if not 0 <= args.port <= 65535:
        return _error(f"--port {args.port} is out of range 0-65535")
    if not 0 <= args.webhook_port <= 65535:
        return _error(f"--webhook-port {args.webhook_port} is out of range 0-65535")
    for field, _, _ in _KUBELET_SECONDS:
        if getattr(args, field) < 0:
            return _error(f"--{field.replace('_', '-')} must not be negative")
    if args.kubeconfig_out and not os.path.isdir(os.path.dirname(os.path.abspath(args.kubeconfig_out))):
        return _error(f"--kubeconfig-out {args.kubeconfig_out}: its folder does not exist")
    try:
        nodes = _read_node_pool(args.nodes) if args.nodes else None
    except ValueError as exc:
        return _error(str(exc))
    if args.faults:
        try:
            FaultInjector().set_spec(args.faults)
        except FaultSpecError as exc:
            return _error(f"--faults: {exc}")
    kubelet = KubeletConfig(
        **{field: getattr(args, field) for field, _, _ in _KUBELET_SECONDS},
        honor_grace_period=args.honor_grace_period,
    )
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    logsetup.configure_from(args)
    try:
        serve = _serve_bare if args.bare else _serve_playground
        return serve(args, nodes, kubelet, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _wait(stop: threading.Event) -> None:
    while not stop.wait(0.5):
        pass
    print("spreadgate cluster: stopping", flush=True)


def _serve_bare(
    args: argparse.Namespace, nodes: list[Any] | None, kubelet: Any, stop: threading.Event
) -> int:
    from py_engine.sim.cluster import Cluster

    try:
        with Cluster(nodes=nodes, kubelet=kubelet, faults=args.faults) as cluster:
            try:
                url = cluster.serve_https(args.port, args.host, args.kubeconfig_out)
            except OSError as exc:
                return _error(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}")
            cluster.start()
            count = len(cluster.api.list("v1/nodes")["items"])
            print(f"spreadgate cluster: serving {url} with {count} node(s) (bare: no Spreadgate)", flush=True)
            print(f"kubeconfig: {cluster.kubeconfig_path}", flush=True)
            print(f"try: kubectl --kubeconfig {cluster.kubeconfig_path} get nodes", flush=True)
            _wait(stop)
    except OSError as exc:
        return _error(str(exc))
    return EXIT_OK


def _serve_playground(
    args: argparse.Namespace, nodes: list[Any] | None, kubelet: Any, stop: threading.Event
) -> int:
    from py_engine.assembled_stack import Stack
    from py_engine.sim.nodepool import default_pool

    stack = Stack(
        default_pool() if nodes is None else nodes,
        virtual=False,
        kubelet=kubelet,
        port=args.port,
        host=args.host,
        kubeconfig_out=args.kubeconfig_out,
        faults=args.faults,
        webhook_port=args.webhook_port,
    )
    try:
        stack.start()
    except OSError as exc:
        ports = f"{args.port}" + (f" or webhook port {args.webhook_port}" if args.webhook_port else "")
        return _error(f"cannot serve on {args.host}:{ports}: {exc.strerror or exc}")
    except (RuntimeError, TimeoutError) as exc:
        print(f"spreadgate cluster: error: could not start Spreadgate: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        count = len(stack.api.list("v1/nodes")["items"])
        kubeconfig = str(stack.cluster.kubeconfig_path)
        print(f"spreadgate cluster: serving {stack.cluster.url} with {count} node(s)", flush=True)
        print(
            "spreadgate cluster: CRD workloadspreads.spreadgate.dev installed (short name sgws)", flush=True
        )
        print(
            f"spreadgate cluster: webhook at {stack.hook.url if stack.hook else '?'} "
            "(registered with its CA), controller running",
            flush=True,
        )
        print(
            "spreadgate cluster: RBAC enforced; the kubeconfig's user is a cluster administrator, "
            "the webhook and the controller run as the ServiceAccounts "
            "spreadgate-system/spreadgate-webhook and "
            "spreadgate-system/spreadgate-controller",
            flush=True,
        )
        print(f"kubeconfig: {kubeconfig}", flush=True)
        print(_next_steps(kubeconfig), flush=True)
        _wait(stop)
    finally:
        stack.close()
    return EXIT_OK
