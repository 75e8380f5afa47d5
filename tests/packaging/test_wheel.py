"""The wheel is the product: built, installed non-editable, and run away from the checkout.

A container image installs the wheel, not the checkout, so a command that reads
a file through the repository layout works in a developer's tree and fails in
production. This module builds the wheel from a copy of the tree, installs it
into a fresh virtual environment without `-e`, and runs the commands a user
runs first from a directory that has no repository around it.

The fresh environment reuses the test environment's third-party packages
through a plain path entry in a `.pth` file (no download; the test environment's
own `.pth` hooks, among them the editable install's finder, are not run from a
plain path entry), so `py_engine` can only come from the wheel; a test asserts it.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from py_engine import __version__
from py_engine.resources import POLICIES, resource, walk

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "manifests" / "examples"
_COPY_IGNORE = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".venv", "venv"
)

pytestmark = pytest.mark.timeout(300)


class Installed:
    """A fresh virtual environment with the built wheel installed in it."""

    def __init__(self, root: Path, wheel: Path) -> None:
        self.root = root
        self.wheel = wheel
        self.bin = root / "venv" / "bin"
        self.outside = root / "elsewhere"
        self.outside.mkdir()

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPREADGATE_POLICY_DIR")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.run(
            list(args),
            cwd=self.outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _build_wheel(workdir: Path) -> Path:
    source = workdir / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=_COPY_IGNORE)
    out = workdir / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
    )
    (wheel,) = out.glob("spreadgate-*.whl")
    return wheel


def _install(workdir: Path, wheel: Path) -> Installed:
    env_dir = workdir / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env_dir / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    target = next((env_dir / "lib").glob("python3*/site-packages"))
    (target / "third_party.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return Installed(workdir, wheel)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    workdir = tmp_path_factory.mktemp("wheel")
    yield _install(workdir, _build_wheel(workdir))


def test_the_wheel_carries_every_run_time_file_of_the_checkout(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = set(archive.namelist())
    policies = [
        p for p, _ in walk(resource(POLICIES)) if p.endswith(".rego") and not p.endswith("_test.rego")
    ]
    expected = {f"py_engine/resources/policies/{p}" for p in policies}
    for folder in ("crds", "rbac", "scenarios", "webhooks"):
        expected |= {f"py_engine/resources/{folder}/{p}" for p, _ in walk(resource(folder))}
    expected |= {"py_engine/py.typed", "webhook/py.typed"}
    assert policies, "no policies found in the checkout"
    assert expected - names == set()
    assert not [n for n in names if n.endswith("_test.rego")], "Rego tests are not shipped"
    assert installed.wheel.name.startswith(f"spreadgate-{__version__}-")


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    result = installed.run(str(installed.bin / "python"), "-c", "import py_engine; print(py_engine.__file__)")
    assert result.returncode == 0, result.stderr
    location = Path(result.stdout.strip()).resolve()
    assert installed.root in location.parents
    assert REPO not in location.parents


def test_validate_an_example(installed: Installed) -> None:
    result = installed.run("spreadgate", "validate", str(EXAMPLES / "zones-20-20-60.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    invalid = installed.run("spreadgate", "validate", str(EXAMPLES / "invalid"))
    assert invalid.returncode == 1, invalid.stdout + invalid.stderr


def test_admit_the_admit_example(installed: Installed) -> None:
    result = installed.run(
        "spreadgate",
        "admit",
        "--state",
        str(EXAMPLES / "admit" / "state.yaml"),
        "--pod",
        str(EXAMPLES / "admit" / "new-pod.yaml"),
        "-o",
        "json",
        "--now",
        "2024-06-01T12:00:00Z",
        "--generated-uid",
        "u-1",
    )
    assert result.returncode == 0, result.stderr
    assert '"subset": "zone-b"' in result.stdout


def test_gatekeeper_generates_the_templates(installed: Installed) -> None:
    result = installed.run("spreadgate", "gatekeeper")
    assert result.returncode == 0, result.stderr
    assert "kind: ConstraintTemplate" in result.stdout
    assert "package spreadgate.validation" in result.stdout


def test_demo_runs(installed: Installed) -> None:
    result = installed.run("spreadgate", "demo", timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
