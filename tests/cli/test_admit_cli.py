"""`spreadgate admit`: the example snapshots, every output format, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from cli_kit import run_cli

REPO = Path(__file__).resolve().parents[2]
ADMIT = REPO / "manifests" / "examples" / "admit"
STATE, NEW_POD = str(ADMIT / "state.yaml"), str(ADMIT / "new-pod.yaml")
NOW = "2024-06-01T12:00:00Z"
UID = "11111111-2222-4333-8444-555555555555"
MATCHED = "spreadgate.dev/matched-workloadspread"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "admit", *args)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = _run(capsys, *args, "-o", "json")
    return code, json.loads(out)


def _versioned(doc: dict[str, Any], version: str = "7d9f8c6b5") -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in doc["workloadSpread"]["status"]["versionedSubsetStatuses"][version]}


def test_create_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--state", STATE, "--pod", NEW_POD, "--now", NOW, "--generated-uid", UID)
    assert code == 0, err
    assert 'decision: allowed, subset "zone-b"' in out
    assert f"[7d9f8c6b5] zone-b: missingReplicas 1 -> 0; creatingPods +{UID}" in out
    assert "patch (2 operations):" in out and '"path": "/spec/affinity"' in out


def test_create_json_patch_and_pod_agree(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--state", STATE, "--pod", NEW_POD, "--now", NOW, "--generated-uid", UID)
    code, doc = _json(capsys, *args)
    assert code == 0
    assert set(doc) == {
        "allowed",
        "subset",
        "patch",
        "pod",
        "statusWritten",
        "workloadSpread",
        "warnings",
        "message",
        "skippedSubsets",
    }
    assert doc["skippedSubsets"] == []  # zone-a is full, not skipped by the policy
    assert (doc["allowed"], doc["subset"], doc["statusWritten"], doc["warnings"]) == (
        True,
        "zone-b",
        True,
        [],
    )
    assert json.loads(doc["pod"]["metadata"]["annotations"][MATCHED]) == {
        "name": "web-spread",
        "subset": "zone-b",
        "uid": UID,
    }
    assert _versioned(doc)["zone-b"] == {
        "name": "zone-b",
        "replicas": 1,
        "missingReplicas": 0,
        "creatingPods": {UID: NOW},
    }
    original = yaml.safe_load(Path(NEW_POD).read_text())
    assert jsonpatch.apply_patch(original, doc["patch"]) == doc["pod"]

    _, out, _ = _run(capsys, *args, "-o", "patch")
    assert json.loads(out) == doc["patch"]
    _, out, _ = _run(capsys, *args, "-o", "pod")
    assert yaml.safe_load(out) == doc["pod"]


def test_delete_and_evict_give_slots_back(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _json(
        capsys,
        "--state",
        STATE,
        "--pod",
        str(ADMIT / "running-pod.yaml"),
        "--operation",
        "DELETE",
        "--now",
        NOW,
    )
    assert code == 0 and doc["statusWritten"] is True and doc["subset"] == "zone-b" and doc["patch"] == []
    assert _versioned(doc)["zone-b"]["missingReplicas"] == 2
    assert _versioned(doc)["zone-b"]["deletingPods"] == {"web-7d9f8c6b5-ccccc": NOW}
    code, out, _ = _run(
        capsys, "--state", STATE, "--pod", str(ADMIT / "eviction.yaml"), "--operation", "evict", "--now", NOW
    )
    assert code == 0
    assert "[7d9f8c6b5] zone-a: missingReplicas 0 -> 1; deletingPods +web-7d9f8c6b5-aaaaa" in out


def test_kruise_snapshot_is_read_as_spreadgates(capsys: pytest.CaptureFixture[str]) -> None:
    state = str(ADMIT / "kruise-state.yaml")
    code, doc = _json(capsys, "--state", state, "--pod", str(ADMIT / "kruise-new-pod.yaml"), "--now", NOW)
    assert code == 0 and doc["subset"] == "zone-b"
    annotations = doc["pod"]["metadata"]["annotations"]
    assert annotations[MATCHED] == '{"name":"game-spread","subset":"zone-b"}'
    assert annotations["games.example.com/zone"] == "zone-b"
    assert "apps.kruise.io/matched-workloadspread" not in annotations
    assert _versioned(doc, "versionIgnored")["zone-b"]["creatingPods"] == {"game-v2z8w": NOW}
    # Kruise's annotation, capitalised keys included, identifies the pod's subset on delete.
    for name, subset in (("game-x7k2p", "zone-a"), ("game-q9m4d", "zone-b")):
        ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "games"}}
        code, doc = _json_with_pod(capsys, state, ref, "DELETE")
        assert code == 0 and doc["subset"] == subset and doc["statusWritten"] is True


def _json_with_pod(
    capsys: pytest.CaptureFixture[str], state: str, pod: dict[str, Any], operation: str, *extra: str
) -> tuple[int, dict[str, Any]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pod.yaml"
        path.write_text(yaml.safe_dump(pod))
        return _json(
            capsys, "--state", state, "--pod", str(path), "--operation", operation, "--now", NOW, *extra
        )


def test_node_fit_uses_the_snapshots_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = tmp_path / "full.yaml"
    text = Path(STATE).read_text()
    assert 'allocatable: {cpu: "2", memory: 4Gi' in text
    full.write_text(
        text.replace('allocatable: {cpu: "2", memory: 4Gi', "allocatable: {cpu: 800m, memory: 4Gi")
    )
    code, doc = _json(capsys, "--state", str(full), "--pod", NEW_POD, "--now", NOW, "--generated-uid", UID)
    assert code == 0 and doc["subset"] == "spot" and doc["statusWritten"] is False
    assert doc["pod"]["metadata"]["labels"]["capacity"] == "spot"
    code, doc = _json(capsys, "--state", str(full), "--pod", NEW_POD, "--now", NOW, "--no-policy")
    assert doc["subset"] == "zone-b"
    assert "--no-policy: node-fit simulation skipped" in doc["warnings"]


def test_owner_not_found_is_a_denial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pod = yaml.safe_load(Path(NEW_POD).read_text())
    pod["metadata"]["ownerReferences"][0]["name"] = "web-0000000"
    code, doc = _json_with_pod(capsys, STATE, pod, "CREATE")
    assert code == 1
    assert (
        doc["allowed"] is False
        and doc["subset"] is None
        and doc["patch"] == []
        and doc["statusWritten"] is False
    )
    assert 'ReplicaSet "web-0000000" not found' in doc["message"]


def test_pod_no_spread_governs_is_admitted_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    pod = yaml.safe_load(Path(NEW_POD).read_text())
    pod["metadata"]["namespace"] = "elsewhere"
    code, doc = _json_with_pod(capsys, STATE, pod, "CREATE")
    assert code == 0 and doc["subset"] is None and doc["patch"] == [] and doc["workloadSpread"] is None


def test_default_now_is_the_current_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--state", STATE, "--pod", NEW_POD, "--generated-uid", UID, "-o", "json")
    stamp = json.loads(out)["workloadSpread"]["status"]["versionedSubsetStatuses"]["7d9f8c6b5"][1][
        "creatingPods"
    ][UID]
    assert code == 0 and stamp.endswith("Z") and stamp > "2024-06-02"


BAD_INPUTS = {
    "missing-state": (["--state", "/nonexistent/state.yaml", "--pod", NEW_POD], "no such file"),
    "state-without-spread": (["--state", NEW_POD, "--pod", NEW_POD], "no WorkloadSpread"),
    "invalid-yaml": (["--state", "{BAD}", "--pod", NEW_POD], "not valid YAML"),
    "pod-not-a-pod": (["--state", STATE, "--pod", STATE], "exactly one object"),
    "pod-is-a-deployment": (["--state", STATE, "--pod", "{DEPLOYMENT}"], "not a Pod"),
    "bad-now": (["--state", STATE, "--pod", NEW_POD, "--now", "yesterday"], "--now"),
    "eviction-for-create": (
        ["--state", STATE, "--pod", str(ADMIT / "eviction.yaml")],
        "use --operation EVICT",
    ),
    "evict-unknown-pod": (
        ["--state", STATE, "--pod", "{GHOST}", "--operation", "EVICT"],
        "not in the snapshot",
    ),
    "delete-nameless": (["--state", STATE, "--pod", NEW_POD, "--operation", "DELETE"], "must have a name"),
    "custom-workload-flag": (
        ["--state", STATE, "--pod", NEW_POD, "--custom-workload", "nonsense"],
        "GROUP/KIND",
    ),
    "configmap-not-json": (["--state", STATE, "--state", "{CONFIGMAP}", "--pod", NEW_POD], "not JSON"),
    "malformed-spread": (["--state", "{BROKEN_SPREAD}", "--pod", NEW_POD], "cannot be read"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_without_traceback(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "{BAD}": "kind: [unclosed\n",
        "{DEPLOYMENT}": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n",
        "{GHOST}": "apiVersion: policy/v1\nkind: Eviction\nmetadata: {name: ghost, namespace: default}\n",
        "{CONFIGMAP}": (
            "apiVersion: v1\nkind: ConfigMap\n"
            "metadata: {name: kruise-configuration, namespace: kruise-system}\n"
            "data: {WorkloadSpread_Watch_Custom_Workload_WhiteList: '{oops'}\n"
        ),
        "{BROKEN_SPREAD}": Path(STATE).read_text().replace("maxReplicas: 2", "maxReplicas: 2.5%", 1),
    }
    args, expected = BAD_INPUTS[case]
    resolved = []
    for arg in args:
        if arg in files:
            path = tmp_path / "input.yaml"
            path.write_text(files[arg])
            arg = str(path)
        resolved.append(arg)
    code, out, err = _run(capsys, *resolved)
    if case == "malformed-spread":
        # A stored spread the engine cannot read denies the pod (Kruise answers 500): exit 1.
        assert code == 1 and "cannot be read" in err, err
        return
    assert code == 2, (out, err)
    assert err.startswith("spreadgate admit: error: ") and expected in err, err
    assert "Traceback" not in err


def test_entry_point_usage_errors(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "py_engine.cli",
            "admit",
            "--state",
            str(tmp_path / "none.yaml"),
            "--pod",
            NEW_POD,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (
        proc.returncode == 2 and "Traceback" not in proc.stderr and "spreadgate admit: error:" in proc.stderr
    )
    proc = subprocess.run(
        [sys.executable, "-m", "py_engine.cli", "admit", "--pod", NEW_POD],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "--state" in proc.stderr


def test_subsets_the_policy_skipped_are_listed_with_their_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (
        Path(STATE)
        .read_text()
        .replace(
            "      name: node-b1\n"
            "      labels: {kubernetes.io/hostname: node-b1, topology.kubernetes.io/zone: zone-b, "
            "node.kubernetes.io/lifecycle: on-demand}\n    spec: {}",
            "      name: node-b1\n"
            "      labels: {kubernetes.io/hostname: node-b1, topology.kubernetes.io/zone: zone-b, "
            "node.kubernetes.io/lifecycle: on-demand}\n"
            "    spec:\n      taints: [{key: maintenance, effect: NoSchedule}]",
        )
    )
    assert "maintenance" in text
    state = tmp_path / "state.yaml"
    state.write_text(text)
    args = ("--state", str(state), "--pod", NEW_POD, "--now", NOW, "--generated-uid", UID)
    code, doc = _json(capsys, *args)
    assert code == 0 and doc["subset"] == "spot"
    assert [e["subset"] for e in doc["skippedSubsets"]] == ["zone-b"]
    assert "no node fits" in doc["skippedSubsets"][0]["reasons"][0]
    code, out, _ = _run(capsys, *args)
    assert code == 0
    assert 'skipped subset "zone-b": no node fits the pod' in out


def test_offline_admit_never_claims_it_wrote(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--state", STATE, "--pod", NEW_POD, "--now", NOW, "--generated-uid", UID)
    assert code == 0
    assert "(would be written)" in out and "(written)" not in out
