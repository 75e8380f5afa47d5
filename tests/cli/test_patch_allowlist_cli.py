"""The subset patch allowlist on the command line: `validate` and `admit` refuse what the
webhook refuses, and `--allow-patch-field` widens `validate`, `admit` and `webhook` alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from py_engine.cli import main

REPO = Path(__file__).resolve().parents[2]
INVALID = REPO / "manifests" / "examples" / "invalid"
ADMIT = REPO / "manifests" / "examples" / "admit"
NOW = "2024-06-01T12:00:00Z"


def test_validate_flag_widens_the_allowlist(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(INVALID / "patch-host-path-volume.yaml")
    assert main(["validate", path]) == 1
    assert "spec.subsets[0].patch.spec.volumes: Forbidden" in capsys.readouterr().out
    assert main(["validate", "--allow-patch-field", "spec.volumes", path]) == 0
    assert main(["validate", "--allow-patch-field", "spec.containers[].volumeMounts", path]) == 1


@pytest.mark.parametrize("command", ["validate", "admit", "gatekeeper"])
def test_malformed_field_is_a_usage_error(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = {
        "validate": [str(INVALID / "patch-host-network.yaml")],
        "admit": ["--state", str(ADMIT / "state.yaml"), "--pod", str(ADMIT / "new-pod.yaml")],
        "gatekeeper": [],
    }[command]
    assert main([command, *args, "--allow-patch-field", "spec.containers.$patch"]) == 2
    err = capsys.readouterr().err
    assert "--allow-patch-field 'spec.containers.$patch' must be a pod field path" in err
    assert "Traceback" not in err


def _state_with_patch(tmp_path: Path, patch: dict[str, Any]) -> str:
    """The admit example snapshot, with `patch` on zone-b (the subset the example pod gets)."""
    state = yaml.safe_load((ADMIT / "state.yaml").read_text())
    spread = next(o for o in state["items"] if o["kind"] == "WorkloadSpread")
    next(s for s in spread["spec"]["subsets"] if s["name"] == "zone-b")["patch"] = patch
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump(state))
    return str(path)


def _admit(capsys: pytest.CaptureFixture[str], state: str, *extra: str) -> dict[str, Any]:
    code = main(
        ["admit", "--state", state, "--pod", str(ADMIT / "new-pod.yaml"), "--now", NOW, "-o", "json", *extra]
    )
    assert code == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


@pytest.mark.parametrize("extra", [(), ("--no-policy",)], ids=["policy", "no-policy"])
def test_admit_shows_the_webhooks_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...]
) -> None:
    state = _state_with_patch(tmp_path, {"spec": {"serviceAccountName": "admin", "nodeName": "n1"}})
    doc = _admit(capsys, state, *extra)
    assert doc["subset"] == "zone-b"
    assert "serviceAccountName" not in doc["pod"]["spec"] and "nodeName" not in doc["pod"]["spec"]
    warning = next(w for w in doc["warnings"] if "allowlist" in w)
    assert "spec.subsets[1].patch.spec.serviceAccountName" in warning
    assert "spec.subsets[1].patch.spec.nodeName" in warning


def test_admit_flag_widens_the_allowlist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = _state_with_patch(tmp_path, {"spec": {"nodeSelector": {"disk": "ssd"}}})
    assert _admit(capsys, state, "--allow-patch-field", "spec.nodeSelector")["pod"]["spec"][
        "nodeSelector"
    ] == {"disk": "ssd"}


def test_admit_text_output_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = _state_with_patch(tmp_path, {"spec": {"hostNetwork": True}})
    assert main(["admit", "--state", state, "--pod", str(ADMIT / "new-pod.yaml"), "--now", NOW]) == 0
    out = capsys.readouterr().out
    assert "warning: WorkloadSpread default/web-spread: the patch of subset 'zone-b' was not applied" in out
    assert "hostNetwork" not in out.split("warning:")[0]


def test_webhook_flag_reaches_the_service_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import webhook.runtime

    seen: list[Any] = []

    def fake_webhook(options: Any) -> None:
        seen.append(options)
        raise ValueError("not started in this test")

    monkeypatch.setattr(webhook.runtime, "Webhook", fake_webhook)
    from py_engine.sim.tls import CertificateAuthority

    issued = CertificateAuthority("test-ca").issue(
        dns_names=["localhost"]
    )  # checked before the webhook is built
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_text(issued.cert_pem)
    key.write_text(issued.key_pem)
    base = ["webhook", "--cert", str(cert), "--key", str(key)]
    assert (
        main([*base, "--allow-patch-field", "spec.nodeSelector", "--allow-patch-field", "spec.containers[]"])
        == 2
    )
    assert seen[0].allowed_patch_fields == ("spec.containers[]", "spec.nodeSelector")
    assert main([*base, "--allow-patch-field", "status"]) == 2
    assert len(seen) == 1, "a malformed entry stops the webhook before it is built"
    assert "must be a pod field path" in capsys.readouterr().err
