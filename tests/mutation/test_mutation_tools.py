"""The mutation tools (tools/mutation.py, tools/rego_mutation.py; docs/testing.md).

The quick part runs by default: which modules a run covers, the mutmut configuration it
writes, and the Rego mutants it makes. The mutation run itself is long and runs only with
SPREADGATE_MUTATION=1: mutmut over the decision modules changed since SPREADGATE_MUTATION_BASE
(default `HEAD~1`), failing when a package's score is below SPREADGATE_MUTATION_FLOOR (default 90).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import mutation  # noqa: E402  (tools/ is not a package)
import rego_mutation  # noqa: E402

pytestmark = pytest.mark.timeout(60)

FULL = os.environ.get("SPREADGATE_MUTATION") == "1"


def test_decision_packages_are_the_pure_ones() -> None:
    modules = mutation.decision_modules(mutation.DECISION_PACKAGES)
    assert (
        "py_engine/uniteddeployment/controller/capacity.py" in modules
        and "py_engine/workloadspread/admission/reserve.py" in modules
    )
    assert not [m for m in modules if "/runtime/" in m or m.endswith("__init__.py")]
    assert {mutation.package_of(m) for m in modules} == set(mutation.DECISION_PACKAGES)


def test_the_written_configuration_replaces_the_projects_section(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    mutation.configure(
        tmp_path,
        ["py_engine/uniteddeployment/controller/capacity.py"],
        ["tests/uniteddeployment/controller/"],
    )
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert config["tool"]["mutmut"]["source_paths"] == ["py_engine/uniteddeployment/controller/capacity.py"]
    assert config["tool"]["mutmut"]["pytest_add_cli_args_test_selection"] == [
        "tests/uniteddeployment/controller/"
    ]
    assert config["tool"]["pytest"]["ini_options"]["timeout"] == 120, "the rest of the file is kept"
    assert "not structure" in config["tool"]["mutmut"]["pytest_add_cli_args"], "call-path tests are left out"


def test_a_retest_takes_the_survivors_of_a_report_but_not_its_timeouts(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps(
            {
                "modules": {
                    "py_engine/semantics/labels.py": {
                        "survivors": [
                            {"name": "a.x_f__mutmut_1", "status": "survived"},
                            {"name": "a.x_f__mutmut_2", "status": "timeout"},
                            {"name": "a.x_f__mutmut_3", "status": "no tests"},
                        ]
                    },
                    "py_engine/semantics/objects.py": {
                        "survivors": [{"name": "b.x_g__mutmut_1", "status": "survived"}]
                    },
                }
            }
        )
    )
    assert mutation.survivors_of(report, []) == (
        ["py_engine/semantics/labels.py", "py_engine/semantics/objects.py"],
        ["a.x_f__mutmut_1", "a.x_f__mutmut_3", "b.x_g__mutmut_1"],
    )
    assert mutation.survivors_of(report, ["py_engine/semantics/objects.py"]) == (
        ["py_engine/semantics/objects.py"],
        ["b.x_g__mutmut_1"],
    )


def test_survivor_diffs_come_from_one_process_and_a_failure_is_reported_per_mutant(tmp_path: Path) -> None:
    diffs = mutation.show(
        tmp_path, {"py_engine.semantics.labels.x_nothing__mutmut_1": "py_engine/semantics/labels.py"}
    )
    assert list(diffs) == ["py_engine.semantics.labels.x_nothing__mutmut_1"]
    assert diffs["py_engine.semantics.labels.x_nothing__mutmut_1"].startswith("(no diff")
    assert mutation.show(tmp_path, {}) == {}


def test_rego_mutants_flip_comparisons_and_drop_conditions(tmp_path: Path) -> None:
    policy = ROOT / "policies" / "validation" / "max_replicas.rego"
    found = list(rego_mutation.mutants_of(policy, ("flip", "drop")))
    changes = {(m.before.strip(), m.after.strip()) for m in found}
    assert ("v <= max_int32", "v < max_int32") in changes
    assert ("v <= max_int32", "") in changes  # the condition dropped
    assert ("total < 100", "total <= 100") in changes
    # Never an assignment, a comment or a string's content.
    assert not [m for m in found if m.operator == "drop condition" and ":=" in m.before]
    assert not [m for m in found if m.before.lstrip().startswith("#")]
    assert not [
        m for m in found if m.operator.startswith("flip") and '"%' in m.after and '"%' not in m.before
    ]


@pytest.mark.skipif(not FULL, reason="the mutation run takes minutes to an hour: SPREADGATE_MUTATION=1")
@pytest.mark.timeout(3600)
def test_changed_decision_modules_score_above_the_floor(tmp_path: Path) -> None:
    base = os.environ.get("SPREADGATE_MUTATION_BASE", "HEAD~1")
    floor = os.environ.get("SPREADGATE_MUTATION_FLOOR", "90")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "mutation.py"),
            "--changed-since",
            base,
            "--fail-under",
            floor,
            "--report",
            str(tmp_path / "mutation.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3500,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
