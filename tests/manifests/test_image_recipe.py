"""The container recipe, checked as far as a machine without a container engine can.

No image is built here (no container engine can be installed on these
machines). What is checked instead: the Dockerfile builds the wheel with the
same `pip wheel` that tests/packaging/test_wheel.py builds and installs, installs
it without the network into a final stage that carries no source tree, compiler
or cache, runs as uid 65532 with `spreadgate` as its entry point; the build
context keeps what the wheel needs; and every container of every kustomization
that runs the image runs a command the installed CLI accepts, as the uid the
image runs as.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
from pathlib import Path
from typing import Any

import pytest
from manifest_support import KUSTOMIZATIONS, REPO, render

from py_engine.cli import build_parser

IMAGE_NAME = "spreadgate"
UID = 65532

pytestmark = pytest.mark.timeout(120)


def _stages() -> list[list[str]]:
    """The Dockerfile's instructions per stage (continuations joined, comments dropped)."""
    stages: list[list[str]] = []
    logical = ""
    for raw in (REPO / "Dockerfile").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        logical += line[:-1] + " " if line.endswith("\\") else line
        if line.endswith("\\"):
            continue
        if logical.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(logical)
        logical = ""
    return stages


def test_two_stages_build_the_wheel_then_install_it_without_the_network() -> None:
    build, final = _stages()
    assert build[0].startswith("FROM ") and build[0].endswith(" AS build")
    assert any(i.startswith("RUN pip wheel") and i.endswith(" .") for i in build), build
    installs = [i for i in final if i.startswith("RUN ") and "pip install" in i]
    assert len(installs) == 1
    assert "--no-index" in installs[0] and "from=build" in installs[0] and " spreadgate" in installs[0]


def test_the_final_stage_has_no_sources_compilers_or_caches() -> None:
    _, final = _stages()
    assert not [i for i in final if i.startswith(("COPY", "ADD"))], "the final stage copies nothing in"
    text = " ".join(final)
    for word in ("apt-get", "gcc", "build-essential", "--cache-dir"):
        assert word not in text
    assert "PIP_NO_CACHE_DIR=1" in text


def test_runs_as_65532_with_spreadgate_as_entry_point() -> None:
    _, final = _stages()
    assert f"USER {UID}:{UID}" in final
    assert final.index(f"USER {UID}:{UID}") > max(i for i, x in enumerate(final) if x.startswith("RUN "))
    assert 'ENTRYPOINT ["spreadgate"]' in final


def _ignored(path: str, patterns: list[str]) -> bool:
    hit = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        bare = pattern.lstrip("!").rstrip("/").removeprefix("**/")
        if any(fnmatch.fnmatch(part, bare) for part in [path, *Path(path).parts]):
            hit = not negated
    return hit


def test_the_build_context_keeps_what_the_wheel_needs() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for needed in ("pyproject.toml", "README.md", "py_engine", "webhook", "policies", "manifests"):
        assert not _ignored(needed, patterns), needed
    assert _ignored(".git", patterns) and _ignored("tests", patterns)


def _image_containers() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in KUSTOMIZATIONS:
        for doc in render(path):
            if doc.get("kind") != "Deployment":
                continue
            pod = doc["spec"]["template"]["spec"]
            for container in pod["containers"]:
                if container["image"].rsplit("/", 1)[-1].split(":")[0] == IMAGE_NAME:
                    found.append((f"{path}: {doc['metadata']['name']}/{container['name']}", pod, container))
    return found


def test_kustomize_points_every_spreadgate_container_at_the_image() -> None:
    containers = _image_containers()
    assert {label.split(": ")[1] for label, _, _ in containers} == {
        "spreadgate-webhook/webhook",
        "spreadgate-controller/controller",
    }
    for label, _, container in containers:
        assert container["image"].split(":")[0].endswith(f"/{IMAGE_NAME}"), label


def test_every_container_runs_a_command_the_cli_accepts_as_the_image_user() -> None:
    parser = build_parser()
    for label, pod, container in _image_containers():
        assert container.get("command", ["spreadgate"]) == ["spreadgate"], label
        args = [a.replace("$(POD_NAMESPACE)", "default") for a in container["args"]]
        with contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                parsed = parser.parse_args(args)
            except SystemExit:
                pytest.fail(f"{label}: `spreadgate {' '.join(args)}` is refused: {err.getvalue().strip()}")
        assert parsed.command in ("webhook", "controller"), label
        assert pod["securityContext"]["runAsUser"] == UID, label
