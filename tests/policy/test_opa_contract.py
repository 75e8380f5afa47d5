"""Contract of the OPA REST backend (py_engine/policy/opa_rest.py) with OPA's Data API.

1. Replay: each `recorded/*.json` holds one Data API exchange (the request the adapter must
   send: method, path, Content-Type, JSON body; the response OPA answers). A loopback fake
   answers only a byte-for-byte-equivalent request and says what differed otherwise. The
   adapter must send exactly the recorded request and return the same decision the embedded
   engine computes for that input. Provenance, stated plainly: no `opa` binary is available
   where these files were made, so the response bodies were written from the embedded
   engine's results in the Data API's format (`{"result": ...}`, `{}` when undefined, sets as
   JSON arrays); `recorded/README.md` says how to re-record them against a real OPA.
2. Parity: when an `opa` binary is on PATH, the same inputs and the shared validate vectors go
   to a real `opa run --server` loaded with policies/ and to the embedded engine, and the
   decisions must agree. Skipped otherwise, with the reason in the test report.

Rego sets have no order: OPA and the embedded engine may list a set's members differently,
so results are compared after sorting the set-valued parts (`violation`, `decision.rejected`).

    python tests/policy/test_opa_contract.py --record [--opa-url http://127.0.0.1:8181]
rewrites the recordings (from the embedded engine, or from a real OPA when a URL is given).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from opa_kit import reply_json

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:  # when run as a script (--record)
    sys.path.insert(0, str(TESTS))

from py_engine.placement.eligibility import SUBSET_DECISION_RULE, build_eligibility_input  # noqa: E402
from py_engine.policy import PolicyEngine, create_engine  # noqa: E402
from py_engine.policy.opa_rest import OpaRestEngine, rule_to_data_path  # noqa: E402
from py_engine.validation import build_review_input  # noqa: E402
from py_engine.validation.validator import VALIDATION_RULE  # noqa: E402

REPO = TESTS.parent
RECORDED = Path(__file__).resolve().parent / "recorded"
EXAMPLES = REPO / "manifests" / "examples"
ZONE = "topology.kubernetes.io/zone"


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _pod(cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "web-", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1",
                    "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}},
                }
            ]
        },
    }


def _node(name: str, zone: str, cpu: float, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "labels": {ZONE: zone},
        "taints": taints or [],
        "unschedulable": False,
        "free": {"cpu": cpu, "memory": 8 * 2**30, "pods": 10},
    }


def _spread_subsets() -> dict[str, Any]:
    term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]}
    return {
        "spec": {
            "subsets": [
                {"name": "zone-a", "maxReplicas": 2, "requiredNodeSelectorTerm": term},
                {
                    "name": "zone-b",
                    "maxReplicas": 2,
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-b"]}]
                    },
                },
                {
                    "name": "spot",
                    "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["spot"]}]
                    },
                },
            ]
        }
    }


def cases() -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (rule, input), built by the product's own input builders."""
    valid = _yaml(EXAMPLES / "zones-20-20-60.yaml")
    duplicate = _yaml(EXAMPLES / "invalid" / "subset-name-duplicate.yaml")
    nodes = [
        _node("node-a1", "zone-a", 0.1),
        _node("node-b1", "zone-b", 4.0),
        _node("node-s1", "spot", 4.0, [{"key": "spot", "value": "true", "effect": "NoSchedule"}]),
    ]
    unschedulable_b = [{"name": "zone-b", "conditions": [{"type": "Schedulable", "status": "False"}]}]
    return {
        "validation-allowed": (VALIDATION_RULE, build_review_input(valid)),
        "validation-denied": (VALIDATION_RULE, build_review_input(duplicate)),
        "subset-node-fit": (
            SUBSET_DECISION_RULE,
            build_eligibility_input(_pod("500m"), _spread_subsets()["spec"]["subsets"], nodes=nodes),
        ),
        "subset-unschedulable": (
            SUBSET_DECISION_RULE,
            build_eligibility_input(
                _pod("100m"), _spread_subsets()["spec"]["subsets"], subset_statuses=unschedulable_b
            ),
        ),
    }


def canonical(rule: str, value: Any) -> Any:
    """Sort the set-valued parts (see the module docstring)."""

    def sort(items: Any) -> Any:
        return (
            sorted(items, key=lambda v: json.dumps(v, sort_keys=True)) if isinstance(items, list) else items
        )

    if rule == VALIDATION_RULE:
        return sort(value)
    if rule == SUBSET_DECISION_RULE and isinstance(value, dict):
        return {**value, "rejected": sort(value.get("rejected"))}
    return value


def exchange(name: str, rule: str, policy_input: dict[str, Any], result: Any, source: str) -> dict[str, Any]:
    return {
        "description": name,
        "rule": rule,
        "source": source,
        "request": {
            "method": "POST",
            "path": f"/v1/data/{rule_to_data_path(rule)}",
            "headers": {"Content-Type": "application/json"},
            "body": {"input": policy_input},
        },
        "response": {"status": 200, "body": {} if result is None else {"result": result}},
    }


def load_recordings() -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(RECORDED.glob("*.json"))}


# ------------------------------------------------------------------ replay


class _Replay(BaseHTTPRequestHandler):
    recordings: ClassVar[list[dict[str, Any]]] = []
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        got = {
            "method": "POST",
            "path": self.path,
            "content_type": self.headers.get("Content-Type"),
            "body": json.loads(raw),
        }
        type(self).seen.append(got)
        for rec in type(self).recordings:
            req = rec["request"]
            if (req["method"], req["path"], req["headers"]["Content-Type"], req["body"]) == (
                got["method"],
                got["path"],
                got["content_type"],
                got["body"],
            ):
                self._reply(rec["response"]["status"], rec["response"]["body"])
                return
        self._reply(400, {"code": "no_recording", "message": f"no recorded exchange for {self.path}"})

    def _reply(self, status: int, body: Any) -> None:
        reply_json(self, status, body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def embedded() -> Iterator[PolicyEngine]:
    engine = create_engine()
    yield engine
    engine.close()


@pytest.fixture
def replay() -> Iterator[type[_Replay]]:
    handler = type("Replay", (_Replay,), {"recordings": list(load_recordings().values()), "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_every_case_has_a_recording() -> None:
    assert sorted(load_recordings()) == sorted(cases())


@pytest.mark.parametrize("name", sorted(cases()))
def test_adapter_sends_the_recorded_request_and_returns_the_embedded_decision(
    name: str, replay: type[_Replay], embedded: PolicyEngine
) -> None:
    rule, policy_input = cases()[name]
    recording = load_recordings()[name]
    adapter = OpaRestEngine(replay.url)  # type: ignore[attr-defined]
    try:
        result = adapter.evaluate(rule, policy_input)
    finally:
        adapter.close()
    request = recording["request"]
    assert replay.seen == [
        {
            "method": "POST",
            "path": request["path"],
            "content_type": request["headers"]["Content-Type"],
            "body": request["body"],
        }
    ]
    expected = embedded.evaluate(rule, policy_input)
    assert canonical(rule, result) == canonical(rule, expected), (
        "the recording no longer matches the policies: re-record (see the module docstring)"
    )
    assert result is not None


def test_the_replay_refuses_a_request_that_differs(replay: type[_Replay]) -> None:
    rule, policy_input = cases()["validation-denied"]
    adapter = OpaRestEngine(replay.url)  # type: ignore[attr-defined]
    try:
        from py_engine.policy import PolicyError

        with pytest.raises(PolicyError, match="400"):
            adapter.evaluate(rule, {**policy_input, "extra": True})
    finally:
        adapter.close()


def test_denied_case_really_denies_and_node_fit_really_rejects() -> None:
    recordings = load_recordings()
    assert recordings["validation-allowed"]["response"]["body"]["result"] in ([], None)
    assert recordings["validation-denied"]["response"]["body"]["result"]
    assert recordings["subset-node-fit"]["response"]["body"]["result"]["skipped"]["no_node_fits"] == [
        "zone-a"
    ]
    assert recordings["subset-unschedulable"]["response"]["body"]["result"]["skipped"]["unschedulable"] == [
        "zone-b"
    ]


# ------------------------------------------------------------------ parity


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def real_opa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("opa")
    if binary is None:
        pytest.skip("no `opa` binary on PATH: real-OPA parity not checked (replayed contract only)")
    policies = tmp_path_factory.mktemp("policies")
    for path in (REPO / "policies").rglob("*.rego"):
        if not path.name.endswith("_test.rego"):
            shutil.copy(path, policies / f"{path.parent.name}_{path.name}")
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "run", "--server", f"--addr=127.0.0.1:{port}", "--disable-telemetry", str(policies)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"opa did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _parity_inputs() -> list[tuple[str, str, dict[str, Any]]]:
    out = [(name, rule, policy_input) for name, (rule, policy_input) in sorted(cases().items())]
    try:
        from vectors import workloadspread_cases

        for case in workloadspread_cases("validate"):
            given = case["input"]
            out.append(
                (
                    case["id"],
                    VALIDATION_RULE,
                    build_review_input(
                        given["workloadSpread"],
                        operation=given.get("operation", "CREATE"),
                        old=given.get("oldWorkloadSpread"),
                        other_spreads=given.get("existingWorkloadSpreads", []),
                        workload=given.get("workload"),
                    ),
                )
            )
    except FileNotFoundError:
        pass  # the shared vectors are beside the repository in CI; the recorded cases still run
    return out


def test_real_opa_and_embedded_engine_agree(real_opa: str, embedded: PolicyEngine) -> None:
    adapter = OpaRestEngine(real_opa, timeout_seconds=10)
    try:
        for name, rule, policy_input in _parity_inputs():
            assert canonical(rule, adapter.evaluate(rule, policy_input)) == canonical(
                rule, embedded.evaluate(rule, policy_input)
            ), name
    finally:
        adapter.close()


# ----------------------------------------------------------------- record


def record(opa_url: str | None) -> None:
    engine = OpaRestEngine(opa_url) if opa_url else create_engine()
    source = f"OPA at {opa_url}" if opa_url else "embedded engine (regorus), written in OPA Data API format"
    RECORDED.mkdir(exist_ok=True)
    try:
        for name, (rule, policy_input) in cases().items():
            result = canonical(rule, engine.evaluate(rule, policy_input))
            text = json.dumps(exchange(name, rule, policy_input, result, source), indent=2, sort_keys=True)
            (RECORDED / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    finally:
        engine.close()


if __name__ == "__main__":
    if "--record" not in sys.argv:
        sys.exit("usage: test_opa_contract.py --record [--opa-url URL]")
    url = sys.argv[sys.argv.index("--opa-url") + 1] if "--opa-url" in sys.argv else os.environ.get("OPA_URL")
    record(url)
