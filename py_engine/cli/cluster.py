"""`spreadgate cluster`: run the embedded Kubernetes cluster standalone.

Starts the API server with its HTTPS front end, the workload controllers
(Deployment, ReplicaSet, StatefulSet, Job), the garbage collector, the
scheduler and a simulated kubelet for every node of the pool, in real time.
Prints the URL and the kubeconfig path, then serves until SIGINT or SIGTERM,
when it stops every thread and exits 0. Use it with
`kubectl --kubeconfig FILE ...` or any Kubernetes client.

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

`--faults SPEC` injects API failures for external requests (syntax in
`py_engine.sim.faults`, e.g. `pods:create:latency=10ms;*:*:error500=0.01`).
Exit status: 0 after a clean stop, 2 for bad arguments or input.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cluster",
        help="run the embedded Kubernetes cluster (API server, controllers, scheduler, kubelet)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=0, help="HTTPS port (default: a free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--kubeconfig-out", metavar="FILE",
                        help="write the kubeconfig here (default: a new temporary file)")
    parser.add_argument("--nodes", metavar="FILE", help="node pool description (YAML or JSON)")
    parser.add_argument("--faults", metavar="SPEC", help="fault injection spec for API requests")
    parser.add_argument("--start-delay", type=float, default=0.0, metavar="SECONDS",
                        help="kubelet: seconds from binding to Running (default 0)")
    parser.add_argument("--ready-delay", type=float, default=0.0, metavar="SECONDS",
                        help="kubelet: seconds from Running to Ready (default 0)")
    parser.add_argument("--job-run-seconds", type=float, default=5.0, metavar="SECONDS",
                        help="kubelet: how long Job pods run before succeeding (default 5)")
    parser.add_argument("--honor-grace-period", action="store_true",
                        help="kubelet: confirm pod deletion only after the grace period (default: at once)")
    parser.set_defaults(handler=run)


def _error(message: str) -> int:
    print(f"spreadgate cluster: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    from py_engine.sim.cluster import Cluster
    from py_engine.sim.faults import FaultInjector, FaultSpecError
    from py_engine.sim.kubelet import KubeletConfig
    from py_engine.sim.nodepool import NodePoolError, load_node_pool

    if not 0 <= args.port <= 65535:
        return _error(f"--port {args.port} is out of range 0-65535")
    for flag in ("start_delay", "ready_delay", "job_run_seconds"):
        if getattr(args, flag) < 0:
            return _error(f"--{flag.replace('_', '-')} must not be negative")
    try:
        nodes = load_node_pool(args.nodes) if args.nodes else None
    except NodePoolError as exc:
        return _error(str(exc))
    if args.faults:
        try:
            FaultInjector().set_spec(args.faults)
        except FaultSpecError as exc:
            return _error(f"--faults: {exc}")
    kubelet = KubeletConfig(start_delay=args.start_delay, ready_delay=args.ready_delay,
                            job_run_seconds=args.job_run_seconds, honor_grace_period=args.honor_grace_period)
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with Cluster(nodes=nodes, kubelet=kubelet, faults=args.faults) as cluster:
            try:
                url = cluster.serve_https(args.port, args.host, args.kubeconfig_out)
            except OSError as exc:
                return _error(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}")
            cluster.start()
            count = len(cluster.api.list("v1/nodes")["items"])
            print(f"spreadgate cluster: serving {url} with {count} node(s)", flush=True)
            print(f"kubeconfig: {cluster.kubeconfig_path}", flush=True)
            print(f"try: kubectl --kubeconfig {cluster.kubeconfig_path} get nodes", flush=True)
            while not stop.wait(0.5):
                pass
            print("spreadgate cluster: stopping", flush=True)
    except OSError as exc:
        return _error(str(exc))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK
