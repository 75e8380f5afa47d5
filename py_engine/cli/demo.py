"""`spreadgate demo`: the elastic-pool scenario, live, on the embedded cluster.

Starts the embedded Kubernetes cluster (API server over HTTPS, workload
controllers, scheduler, kubelets), the real admission webhook on 127.0.0.1 and
the real controller loop, all in this process, then runs
`manifests/examples/scenarios/elastic-pool.yaml`: 100 replicas on on-prem
nodes, the rest on an elastic pool. It scales the Deployment up to 130, then
down to 110, printing the placement after each, and checks the point of the
product: the scale-down removed only elastic pods and on-prem stayed full.
Time is virtual (the same engine as `spreadgate simulate`), so the demo takes
seconds. --port and --webhook-port pin the API server's and the webhook's ports
on 127.0.0.1 (both pick a free port by default). Exit status: 0 when the property
holds, 1 when it does not, 2 when the demo could not run (a port in use included).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from py_engine.cli.options import add_embedded_ports

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
SCENARIO = "elastic-pool.yaml"


HELP = "run the elastic-pool demo on the embedded cluster"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate demo` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument(
        "--scenario",
        default=None,
        metavar="FILE",
        help=f"the scenario to run (default: the shipped {SCENARIO}, "
        "manifests/examples/scenarios/ in the repository)",
    )
    add_embedded_ports(parser)


def _placement(report: Any) -> str:
    lines = [f"  {'node':<12} pods", f"  {'-' * 12} ----"]
    lines += [f"  {node:<12} {count}" for node, count in report.nodes.items()]
    lines.append("  by subset: " + ", ".join(f"{k}={v}" for k, v in report.subsets.items()))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from py_engine.assembled_stack import Stack, StackNotStable
    from py_engine.cli.scenario import ScenarioError, Step
    from py_engine.cli.scenario_run import ScenarioRun
    from py_engine.cli.scenarios import load_scenario, load_shipped_scenario

    logging.basicConfig(level=logging.ERROR)
    started = time.monotonic()
    try:
        scenario = load_scenario(args.scenario) if args.scenario else load_shipped_scenario(SCENARIO)
    except ScenarioError as exc:
        print(f"spreadgate demo: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    subsets = [str(s["name"]) for s in scenario.spread["spec"]["subsets"]]
    first, last = subsets[0], subsets[-1]
    cap = int(scenario.spread["spec"]["subsets"][0]["maxReplicas"])
    up, down = cap + 30, cap + 10

    def say(text: str) -> None:
        print(f"[{time.monotonic() - started:5.1f}s] {text}", flush=True)

    say("starting the embedded cluster, the webhook and the controller ...")
    try:
        with Stack(scenario.nodes, port=args.port, webhook_port=args.webhook_port) as stack:
            say(
                f"cluster up: {len(scenario.nodes)} nodes, webhook at {stack.hook.url if stack.hook else '?'}"
            )
            runner = ScenarioRun(scenario, stack)
            runner.setup()
            say(
                f"created Deployment {runner.name} and WorkloadSpread {runner.spread_name} "
                f"({first}: max {cap}, {last}: the rest)"
            )
            steps = (
                (up, f"scaling {runner.name} to {up} ...", f"placement after scale-up to {up}:"),
                (down, f"scaling {runner.name} down to {down} ...", f"placement after scale-down to {down}:"),
            )
            reports = []
            for index, (size, doing, done) in enumerate(steps, start=1):
                before = runner.pods()
                say(doing)
                runner.apply(Step("scale", size, f"scale to {size}"))
                reports.append(runner.report(index, f"scale to {size}", before))
                say(done)
                print(_placement(reports[-1]), flush=True)
            after_up, after_down = reports
    except OSError as exc:
        print(
            f"spreadgate demo: error: the demo could not run: {exc.strerror or exc} "
            f"(--port {args.port or 'free'}, --webhook-port {args.webhook_port or 'free'})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except (StackNotStable, TimeoutError, RuntimeError) as exc:
        print(f"spreadgate demo: error: the demo could not run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    removed = [p["subset"] for p in after_down.removed]
    say(
        f"scale-down removed {len(removed)} pods: "
        + ", ".join(f"{s}={removed.count(s)}" for s in dict.fromkeys(removed))
    )
    holds = (
        after_up.subsets.get(first) == cap
        and after_up.subsets.get(last) == up - cap
        and len(removed) == up - down
        and set(removed) == {last}
        and after_down.subsets.get(first) == cap
    )
    if holds:
        say(f"OK: {first} stayed full ({cap}); the scale-down removed the {last} pods first")
        return EXIT_OK
    say(f"FAILED: expected the scale-down to remove only {last} pods and keep {first} at {cap}")
    return EXIT_FAILED
