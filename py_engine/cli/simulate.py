"""`spreadgate simulate SCENARIO.yaml`: run a scenario on the embedded cluster in virtual time.

The real webhook (HTTPS on 127.0.0.1) and the real controller loop run with
the embedded cluster; time is virtual, so waits (rescheduleCriticalSeconds,
recovery windows) cost nothing. After every step the report gives pods per
subset, zone and node, deletion costs, and the pods a scale-down removed.
The workload may be a Deployment, ReplicaSet, StatefulSet or Job; the spread
may use Spreadgate's or OpenKruise's API group. Scenario format:
docs/scenarios.md; examples in `manifests/examples/scenarios/`.

Output: `-o table` (default), `-o json`, or `-o html` (a self-contained page
with a chart of replicas per subset and their caps, written to `--out FILE`,
which `-o html` requires). Reports list subsets in spec order and pods in a
fixed order; the embedded cluster draws generated pod names from `--seed`
(default 0) and creates pods one at a time, so identical runs with the same
seed print byte-identical reports; a subset holding
more pods than its cap is flagged.

SCENARIO is a file, or the name of a scenario shipped with Spreadgate (with or
without `.yaml`): `spreadgate simulate --list` prints those names. Exit status: 0 on
success, 2 for an unreadable or invalid scenario or a simulation that did not settle (one line on stderr).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from py_engine.cli.options import add_embedded_ports, add_output

EXIT_OK, EXIT_USAGE = 0, 2


HELP = "run a scenario on the embedded cluster (virtual time)"
"""The command's line in `spreadgate --help`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `spreadgate simulate` (the package builds its parser, py_engine/cli/__init__.py)."""
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        nargs="?",
        help="a scenario file, or the name of a shipped scenario (see --list)",
    )
    parser.add_argument(
        "--list", action="store_true", help="print the names of the shipped scenarios and exit"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the generated pod names (default: %(default)s)",
    )
    add_output(parser, ("table", "json", "html"), "report format (default: %(default)s)")
    parser.add_argument("--out", metavar="FILE", help="where -o html writes the page (required with -o html)")
    add_embedded_ports(parser)


def _fail(message: str) -> int:
    print(f"spreadgate simulate: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _load(reference: str) -> Any:
    """The scenario in the file `reference`, else the shipped scenario of that name."""
    from py_engine.cli.scenario import ScenarioError
    from py_engine.cli.scenarios import load_scenario, load_shipped_scenario, shipped_scenario_names

    if Path(reference).exists():
        return load_scenario(reference)
    name = reference.removesuffix(".yaml")
    if name in shipped_scenario_names():
        return load_shipped_scenario(f"{name}.yaml")
    raise ScenarioError(f"{reference}: no such file, nor a shipped scenario (spreadgate simulate --list)")


def run(args: argparse.Namespace) -> int:
    from py_engine.assembled_stack import Stack, StackNotStable
    from py_engine.cli.scenario import ScenarioError
    from py_engine.cli.scenario_report import render_html, render_json, render_table
    from py_engine.cli.scenario_run import ScenarioRun
    from py_engine.cli.scenario_united import UnitedScenarioRun
    from py_engine.cli.scenarios import shipped_scenario_names
    from py_engine.sim.interface import ApiError

    logging.basicConfig(level=logging.ERROR)
    if args.output == "html" and not args.out:
        return _fail("-o html needs --out FILE (the page is not written to the current directory by default)")
    if args.list:
        sys.stdout.write("".join(f"{name}\n" for name in shipped_scenario_names()))
        return EXIT_OK
    if not args.scenario:
        return _fail("name a scenario file or a shipped scenario (spreadgate simulate --list)")
    try:
        scenario = _load(args.scenario)
    except ScenarioError as exc:
        return _fail(str(exc))
    try:
        with Stack(scenario.nodes, port=args.port, webhook_port=args.webhook_port, seed=args.seed) as stack:
            runner = UnitedScenarioRun if scenario.united is not None else ScenarioRun
            reports = runner(scenario, stack).run()
    except (StackNotStable, TimeoutError) as exc:
        return _fail(f"the simulation did not settle: {exc}")
    except ApiError as exc:
        return _fail(f"the cluster refused a step: {exc}")
    except OSError as exc:
        return _fail(
            f"the simulation could not start: {exc.strerror or exc} "
            f"(--port {args.port or 'free'}, --webhook-port {args.webhook_port or 'free'})"
        )
    if args.output == "json":
        sys.stdout.write(render_json(scenario, reports))
    elif args.output == "html":
        out = Path(args.out)
        try:
            out.write_text(render_html(scenario, reports), encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {out}: {exc.strerror}")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(f"{scenario.name}: {scenario.description}\n\n" if scenario.description else "")
        sys.stdout.write(render_table(reports))
    return EXIT_OK
