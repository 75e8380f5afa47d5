"""A `spreadgate cluster` playground driven by the README's command lines, for the kubectl e2e tests.

`running_playground` starts the playground as a subprocess (extra arguments such as `--nodes`
go to it), waits for its banner, and yields a `Playground` whose `run` executes one README
command line (`kubectl ... | spreadgate ...`) from the repository's top folder with the
playground's kubeconfig; it stops the process with SIGINT and checks it exits 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster_process import cluster_process
from kubectl_kit import KUBECTL

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Playground:
    kubeconfig: Path
    env: dict[str, str]
    output: list[str]

    def run(self, command: str, stdin: str | None = None) -> str:
        """One command line of the README (a `|` pipes kubectl into spreadgate)."""
        head, _, tail = command.partition(" | ")
        out = self._one(head, stdin)
        return self._one(tail, out) if tail else out

    def _one(self, command: str, stdin: str | None) -> str:
        argv = shlex.split(command)
        if argv[0] == "kubectl":
            assert KUBECTL is not None
            argv[0] = KUBECTL
        elif argv[0] == "spreadgate":
            argv[:1] = [sys.executable, "-m", "py_engine.cli"]
        done = subprocess.run(
            argv, cwd=REPO, env=self.env, input=stdin, capture_output=True, text=True, timeout=90, check=False
        )
        assert done.returncode == 0, f"{command} failed ({done.returncode}):\n{done.stderr}"
        return done.stdout

    def pods(self, selector: str) -> list[dict[str, Any]]:
        return list(json.loads(self.run(f"kubectl get pods -l {selector} -o json"))["items"])


@contextlib.contextmanager
def running_playground(tmp_path: Path, *args: str) -> Iterator[Playground]:
    kubeconfig = tmp_path / "sg.kubeconfig"

    def up(seen: list[str]) -> bool:
        return any(line.startswith("  kubectl get sgws") for line in seen)

    with cluster_process(["--kubeconfig-out", str(kubeconfig), *args], up, timeout=60, stop_timeout=30) as (
        _,
        seen,
    ):
        # kubectl caches discovery under $HOME/.kube: keep it inside the test's folder.
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}
        yield Playground(kubeconfig, env, seen)


def table(text: str) -> list[dict[str, str]]:
    """kubectl's human output as rows keyed by header (columns split on 2+ spaces)."""
    header, *rows = [line for line in text.splitlines() if line.strip()]
    found = list(re.finditer(r"\S+(?: \S+)*", header))
    names, starts = [m.group() for m in found], [m.start() for m in found]
    out = []
    for row in rows:
        cells = [row[s:e].strip() for s, e in zip(starts, [*starts[1:], len(row) + 1], strict=True)]
        out.append(dict(zip(names, cells, strict=True)))
    return out


def readme_section() -> str:
    """README's "The embedded cluster: a playground for kubectl" section, where the recipes stand."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("## The embedded cluster", 1)[1].split("\n## ", 1)[0]


def assert_in_order(section: str, commands: list[str]) -> None:
    """Every command stands in `section`, in the order given."""
    positions = [section.find(command) for command in commands]
    assert -1 not in positions, [c for c, at in zip(commands, positions, strict=True) if at == -1]
    assert positions == sorted(positions), "the README lists the commands in another order"
