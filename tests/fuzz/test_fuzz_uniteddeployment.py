"""Fuzzing the UnitedDeployment paths: the webhook's `/validate/uniteddeployments`,
`spreadgate united plan` and `spreadgate validate` on hostile UnitedDeployments.

Properties (docs/uniteddeployment.md, docs/uniteddeployment-validation.md):

- The webhook: the handler never raises and never answers 500; a well-formed
  envelope no deeper than the webhook's nesting limit gets a 200 AdmissionReview
  echoing the apiVersion and uid, `allowed` a boolean and a denial a 4xx code with
  a message; anything else is a 4xx Status.
- `spreadgate united plan`: exit 0, 1 or 2, never a traceback; with `-o json` and
  exit 0 or 1, stdout is one JSON object with the documented keys, and the plan holds
  together (`check_plan`, issue 29): refused with a reason, or every spec subset
  allocated with replicas >= 0, none above its `maxReplicas`, a partition in
  [0, its replicas], and the allocations summing to `spec.replicas` where the
  allocator promises it (at most that otherwise, except reservation substitutes).
- `spreadgate validate`: exit 0, 1 or 2, never a traceback.

Strategies: `ud_strategies`; budget: `SPREADGATE_FUZZ_EXAMPLES` shared by weight.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fuzz_support
import pytest
from fuzz_strategies import fuzz_settings, hostile, owners
from fuzz_support import ENGINE, MemoryCluster, webhook_app, write
from hypothesis import given
from hypothesis import strategies as st
from ud_strategies import (
    BASE_UDS,
    NOW,
    NOW_TIME,
    hostile_snapshots,
    hostile_uds,
    snapshots,
    timeout_for,
    ud_reviews,
)

from benchmarks.kube_objects import united_deployment
from py_engine.cli import main
from py_engine.uniteddeployment.controller.plan import plan
from py_engine.uniteddeployment.controller.state import state_from_objects
from py_engine.validation.uniteddeployment import review_uniteddeployment
from webhook.review import MAX_DEPTH, ReviewError, parse_review

MAX_BODY = 1024 * 1024
"""The body cap of `fuzz_support.webhook_app` (a larger body is answered 413)."""
PLAN_KEYS = {"subsets", "create", "update", "delete", "release", "status", "errors", "nodeFit"}
WEBHOOK_WEIGHT, PLAN_WEIGHT, VALIDATE_WEIGHT = 1.5, 1.0, 0.5
workdir = fuzz_support.workdir  # the fixture, used by name


def run(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the CLI in-process; asserts the no-crash properties.

    The streams encode as a terminal's do (UTF-8; stdout strict, stderr with backslash
    escapes), so text a real stdout cannot print fails here too."""
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse rejecting an argument is a usage error, not a crash
            code = int(exc.code or 0)
        out.flush()
        err.flush()
    text = err_bytes.getvalue().decode("utf-8")
    assert code in (0, 1, 2), (code, text[-2000:])
    assert "Traceback (most recent call last)" not in text, text[-3000:]
    return code, out_bytes.getvalue().decode("utf-8"), text


def depth(value: Any) -> int:
    """Nesting of arrays and objects, counted as the webhook counts it (iteratively)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def is_json(value: Any) -> bool:
    """Whether `value` is what JSON (and Kubernetes) can carry: no NaN or infinity, no
    integer beyond float64, no lone surrogate in a string."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            stack.extend(node.values() if isinstance(node, dict) else node)
        elif isinstance(node, int) and abs(node) > 2**1023:
            with contextlib.suppress(OverflowError):
                float(node)
                continue
            return False
    return True


def well_formed(review: Any, size: int) -> bool:
    """An envelope the webhook must answer with a 200 AdmissionReview (`size`: the body's bytes)."""
    if not isinstance(review, dict) or size > MAX_BODY or depth(review) > MAX_DEPTH or not is_json(review):
        return False
    request = review.get("request")
    return (
        review.get("kind") == "AdmissionReview"
        and review.get("apiVersion") in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
        and isinstance(request, dict)
        and isinstance(request.get("uid"), str)
        and bool(request["uid"])
        and all(
            request.get(k) is None or isinstance(request[k], str)
            for k in ("operation", "namespace", "name", "subResource")
        )
        and all(
            request.get(k) is None or isinstance(request[k], dict)
            for k in ("object", "oldObject", "resource", "options")
        )
        and (request.get("dryRun") is None or isinstance(request["dryRun"], bool))
    )


def check_ud_answer(status: int, body: bytes, sent: Any, size: int) -> None:
    assert status < 500, (status, body[:500])
    answer = json.loads(body)
    if not well_formed(sent, size):
        assert 400 <= status < 500 and answer.get("kind") == "Status" and answer.get("code") == status, answer
        assert isinstance(answer.get("message"), str) and answer["message"]
        return
    assert status == 200, (status, body[:500])
    assert answer["kind"] == "AdmissionReview" and answer["apiVersion"] == sent["apiVersion"]
    response = answer["response"]
    assert response["uid"] == sent["request"]["uid"]
    assert isinstance(response["allowed"], bool)
    assert "patch" not in response  # a validating webhook
    if not response["allowed"]:
        result = response["status"]
        assert isinstance(result["code"], int) and 400 <= result["code"] < 500, result
        assert isinstance(result["message"], str) and result["message"], result
        assert not result["message"].startswith("internal error"), result


hostile_envelopes = st.one_of(ud_reviews(), ud_reviews(), ud_reviews(), hostile(ud_reviews()))
"""Well-formed reviews around hostile UnitedDeployments, or reviews broken anywhere."""


@pytest.mark.timeout(timeout_for(WEBHOOK_WEIGHT))
@fuzz_settings(weight=WEBHOOK_WEIGHT)
@given(review=hostile_envelopes, allow_patch_fields=st.booleans())
def test_hostile_ud_reviews_are_answered_never_crashed(review: Any, allow_patch_fields: bool) -> None:
    extra = {"allowed_patch_fields": ("spec.priorityClassName",)} if allow_patch_fields else {}
    body = json.dumps(review).encode()
    try:  # the handler itself first, on what the app hands it
        request = parse_review(body)[1]
    except ReviewError:
        request = None
    if request is not None:
        result = review_uniteddeployment(ENGINE, request, **extra)
        assert isinstance(result.allowed, bool) and result.code < 500, result
    client = webhook_app(MemoryCluster(owners(1)), **extra).test_client()
    resp = client.post("/validate/uniteddeployments", data=body, content_type="application/json")
    check_ud_answer(resp.status_code, resp.data, review, len(body))


@pytest.mark.timeout(timeout_for(PLAN_WEIGHT))
@fuzz_settings(weight=PLAN_WEIGHT)
@given(
    snapshot=hostile_snapshots(),
    output=st.sampled_from(["table", "json", "json"]),
    now=st.sampled_from([NOW, NOW, "2026-06-01T12:10:00Z", "2030-01-01T00:00:00Z", "bad", ""]),
    wrapped=st.booleans(),
)
def test_united_plan_never_crashes(
    workdir: Path, snapshot: list[Any], output: str, now: str, wrapped: bool
) -> None:
    state = {"apiVersion": "v1", "kind": "List", "items": snapshot} if wrapped else snapshot
    code, out, _ = run(
        ["united", "plan", "--state", write(workdir / "ud-state.json", state), "--now", now, "-o", output]
    )
    if output == "json" and code in (0, 1):
        answer = json.loads(out)
        assert isinstance(answer, dict) and set(answer) == PLAN_KEYS, sorted(answer)
        assert isinstance(answer["subsets"], dict) and isinstance(answer["status"], dict)
        assert all(isinstance(answer[k], list) for k in ("create", "update", "delete", "errors"))
        uds = [o for o in snapshot if isinstance(o, dict) and o.get("kind") == "UnitedDeployment"]
        if len(uds) == 1 and now in (NOW, "2026-06-01T12:10:00Z", "2030-01-01T00:00:00Z"):
            check_plan(uds[0], answer)


def _resolve(value: Any, total: int) -> int | None:
    """docs/uniteddeployment.md: a count, or a percentage of spec.replicas rounded half up; None if unset."""
    if isinstance(value, str) and value.endswith("%"):
        return (total * int(value[:-1]) * 2 + 100) // 200
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _allocator(spec: dict[str, Any], subsets: list[dict[str, Any]]) -> str:
    """Which allocator applies, restated from docs/uniteddeployment.md ("Allocation")."""
    strategy = (spec.get("topology") or {}).get("scheduleStrategy") or {}
    if strategy.get("type") == "Adaptive":
        return (
            "reservation"
            if (strategy.get("adaptive") or {}).get("reserveUnschedulablePods") is True
            else "adaptive"
        )
    if any("minReplicas" in s or "maxReplicas" in s for s in subsets):
        return "capacity"
    return "specified"


def check_plan(ud: dict[str, Any], answer: dict[str, Any]) -> None:
    """The invariants of one plan of `ud` (see the module docstring)."""
    if answer["errors"] and not answer["subsets"]:  # refused: with a reason
        assert all(isinstance(e, str) and e.strip() for e in answer["errors"]), answer["errors"]
        return
    spec = ud["spec"]
    subsets = [s for s in spec["topology"]["subsets"] if isinstance(s, dict)]
    total = spec.get("replicas") if isinstance(spec.get("replicas"), int) else 0
    planned = answer["subsets"]
    assert set(planned) == {s["name"] for s in subsets}, (sorted(planned), [s.get("name") for s in subsets])
    for subset in subsets:
        got = planned[subset["name"]]
        replicas, partition = got["replicas"], got["partition"]
        assert isinstance(replicas, int) and replicas >= 0, got
        assert isinstance(partition, int) and 0 <= partition <= replicas, got
        cap = _resolve(subset.get("maxReplicas"), total)
        if cap is not None and _allocator(spec, subsets) in ("capacity", "adaptive"):
            assert replicas <= cap, (subset, got)
    allocated = sum(planned[s["name"]]["replicas"] for s in subsets)
    allocator = _allocator(spec, subsets)
    if allocator == "reservation":
        return
    assert allocated <= max(total, sum(_resolve(s.get("replicas"), total) or 0 for s in subsets)), (
        allocated,
        total,
    )
    if allocator == "specified" and isinstance(spec.get("replicas"), int):
        assert allocated == total, (allocated, total)
    if allocator == "capacity" and any("maxReplicas" not in s for s in subsets):
        assert allocated == total, (allocated, total)


COUNTS = st.one_of(st.integers(0, 8), st.sampled_from(["0%", "25%", "50%", "100%"]))


@st.composite
def allocation_uds(draw: st.DrawFn) -> dict[str, Any]:
    """A fresh UnitedDeployment (no workloads yet) whose subsets all use one allocator's fields."""
    mode = draw(st.sampled_from(["capacity", "specified"]))
    subsets: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 4))):
        subset: dict[str, Any] = {"name": f"s{i}"}
        for key in ("minReplicas", "maxReplicas") if mode == "capacity" else ("replicas",):
            if draw(st.booleans()):
                subset[key] = draw(COUNTS)
        subsets.append(subset)
    ud = united_deployment("web", subsets, replicas=None, uid="ud-uid-1", generation=1)
    spec = ud["spec"]
    if draw(st.integers(0, 5)):
        spec["replicas"] = draw(st.integers(0, 20))
    if draw(st.booleans()):
        spec["updateStrategy"] = {
            "type": "Manual",
            "manualUpdate": {
                "partitions": {s["name"]: draw(st.integers(-2, 25)) for s in subsets if draw(st.booleans())}
            },
        }
    return ud


@pytest.mark.timeout(120)
@fuzz_settings(weight=0.5)
@given(ud=allocation_uds())
def test_allocations_hold_their_invariants(ud: dict[str, Any]) -> None:
    """The capacity and specified allocators on their own, in-process (the planner `united plan` runs)."""
    check_plan(ud, plan(state_from_objects([ud]), NOW_TIME).to_json())


@pytest.mark.timeout(timeout_for(PLAN_WEIGHT))
@fuzz_settings(weight=PLAN_WEIGHT)
@given(snapshot=snapshots(), now=st.sampled_from([NOW, "2026-06-01T12:10:00Z", "2030-01-01T00:00:00Z"]))
def test_united_plans_hold_their_invariants(workdir: Path, snapshot: list[Any], now: str) -> None:
    """Well-formed snapshots (the hostile test above mostly meets refusals and bad input)."""
    code, out, _ = run(
        [
            "united",
            "plan",
            "--state",
            write(workdir / "ud-valid-state.json", snapshot),
            "--now",
            now,
            "-o",
            "json",
        ]
    )
    assert code in (0, 1)
    uds = [o for o in snapshot if isinstance(o, dict) and o.get("kind") == "UnitedDeployment"]
    assert len(uds) == 1
    check_plan(uds[0], json.loads(out))


@pytest.mark.timeout(timeout_for(VALIDATE_WEIGHT))
@fuzz_settings(weight=VALIDATE_WEIGHT)
@given(
    uds=st.lists(hostile_uds, min_size=1, max_size=3),
    output=st.sampled_from(["text", "json", "junit", "github"]),
)
def test_validate_uds_never_crashes(workdir: Path, uds: list[Any], output: str) -> None:
    path = write(workdir / "uds.json", {"apiVersion": "v1", "kind": "List", "items": uds})
    run(["validate", path, "-o", output])


# ------------------------------------------------------------ regressions
# The crash classes the UnitedDeployment fuzz found, each as its smallest example: a valid
# example UnitedDeployment with one value JSON (and so Kubernetes) cannot carry.


def example_ud(**template_spec: Any) -> dict[str, Any]:
    """manifests/examples/ud-cpu-platforms.yaml with extra fields in its template's spec."""
    ud = copy.deepcopy(next(u for u in BASE_UDS if u["metadata"]["name"] == "api-cpu"))
    ud["metadata"]["uid"] = "ud-uid-1"
    ud["spec"]["template"]["cloneSetTemplate"]["spec"].update(template_spec)
    return ud


def ud_review_body(obj: dict[str, Any], raw_name: str | None = None) -> bytes:
    """A CREATE review of `obj` as bytes; `raw_name` replaces the object's name with raw JSON text."""
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "operation": "CREATE",
            "namespace": "default",
            "resource": {"group": "spreadgate.dev", "version": "v1beta1", "resource": "uniteddeployments"},
            "object": obj,
        },
    }
    body = json.dumps(review)
    if raw_name is not None:
        body = body.replace('"name": "api-cpu"', f'"name": {raw_name}', 1)
    return body.encode()


def post_ud(body: bytes) -> tuple[int, dict[str, Any]]:
    client = webhook_app(MemoryCluster(owners(1))).test_client()
    resp = client.post("/validate/uniteddeployments", data=body, content_type="application/json")
    return resp.status_code, json.loads(resp.data)


@pytest.mark.timeout(60)
def test_ud_review_with_an_integer_beyond_float64_is_a_400_regression() -> None:
    """Shrunk: `spec.updateStrategy.type: 10**400` (any such number anywhere). The policy engine
    raised TypeError ("cannot be converted to RegoValue"): an "internal error" denial."""
    obj = example_ud()
    obj["spec"]["updateStrategy"]["type"] = 10**400
    status, answer = post_ud(ud_review_body(obj))
    assert status == 400 and "out of range" in answer["message"], answer


@pytest.mark.timeout(60)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_ud_review_with_nan_or_infinity_is_a_400_regression(constant: str) -> None:
    """Shrunk: `apiVersion: NaN` in an UPDATE's oldObject; in the object, the policy engine
    failed ("could not serialize number"): a 500 denial. Python's decoder accepts NaN,
    Infinity and reads 1e400 as infinity; JSON has none of them."""
    status, answer = post_ud(ud_review_body(example_ud(), raw_name=constant))
    assert status == 400 and "not valid JSON" in answer["message"], answer


@pytest.mark.timeout(60)
@pytest.mark.parametrize("raw_name", ['"\\ud800"', '"a\\udfffb"', '"\\uDC00"'])
def test_lone_surrogates_are_refused_when_the_review_is_read_regression(raw_name: str) -> None:
    """The same examples as below, at the reading step (in-process: nothing reaches the engine)."""
    with pytest.raises(ReviewError, match="not valid Unicode") as caught:
        parse_review(ud_review_body(example_ud(), raw_name=raw_name))
    assert caught.value.code == 400


@pytest.mark.timeout(120)
def test_ud_review_with_a_lone_surrogate_is_a_400_regression() -> None:
    """Found while extending the strategies: a lone surrogate escape in any string killed the
    webhook process (the policy engine segfaults on it). Run in a child process, so that a
    regression fails this test instead of killing the test run."""
    script = (
        "import json, sys\n"
        "from fuzz_support import MemoryCluster, webhook_app\n"
        "from fuzz_strategies import owners\n"
        "client = webhook_app(MemoryCluster(owners(1))).test_client()\n"
        "resp = client.post('/validate/uniteddeployments', data=sys.stdin.buffer.read(),\n"
        "                   content_type='application/json')\n"
        "print(resp.status_code, json.loads(resp.data)['message'])\n"
    )
    here = Path(__file__).resolve().parent
    child = subprocess.run(
        [sys.executable, "-c", script],
        input=ud_review_body(example_ud(), raw_name='"\\ud800"'),
        capture_output=True,
        timeout=100,
        cwd=here,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parents[1])])},
    )
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.decode().startswith("400 request body holds a string that is not valid Unicode"), (
        child.stdout
    )


@pytest.mark.timeout(60)
def test_plan_with_an_integer_beyond_float64_in_the_template_regression() -> None:
    """Shrunk from the planner's side: the revision hash encodes the template as Go does, and
    float(10**400) raised OverflowError; now the template cannot be versioned (a refusal)."""
    result = plan(state_from_objects([example_ud(minReadySeconds=10**400)]), NOW_TIME)
    assert result.refused and "out of range" in result.errors[0], result.errors


CLI_CASES = [  # (command, field, value, what stderr says now); before the fix:
    (
        "validate",
        "minReadySeconds",
        10**400,
        "beyond float64",
    ),  # TypeError from the policy engine (traceback)
    ("plan", "minReadySeconds", 10**400, "beyond float64"),  # OverflowError in the revision hash (traceback)
    ("validate", "minReadySeconds", "\ud800", "not valid Unicode"),  # the policy engine segfaulted
    ("plan", "name", "a\ud800", "not valid Unicode"),  # UnicodeEncodeError printing the table (traceback)
    ("validate", "minReadySeconds", float("nan"), "NaN"),  # read as a number JSON has not ("valid")
    ("plan", "minReadySeconds", float("inf"), "infinity"),  # same (a refusal printing Infinity in -o json)
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("command", "field", "value", "message"),
    CLI_CASES,
    ids=["validate-int", "plan-int", "validate-surrogate", "plan-surrogate", "validate-nan", "plan-inf"],
)
def test_cli_refuses_values_json_cannot_carry_regression(
    workdir: Path, command: str, field: str, value: Any, message: str
) -> None:
    """The crash classes of the CLI fuzz, shrunk to one field of the example: the file is now
    refused (exit 2, one line). In-process with strict UTF-8 stdout (`run`), or as a child process
    where the old failure was a segfault."""
    obj = example_ud(**{field: value}) if field != "name" else example_ud()
    if field == "name":
        obj["metadata"]["name"] = value
    path = write(workdir / "unjson.json", obj)
    argv = ["validate", path] if command == "validate" else ["united", "plan", "--state", path, "--now", NOW]
    if (
        command == "validate" and field != "name" and isinstance(value, str)
    ):  # a segfault would end the test run
        script = "import sys\nfrom py_engine.cli import main\nsys.exit(main(sys.argv[1:]))\n"
        child = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            text=True,
            timeout=100,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        code, err = child.returncode, child.stderr
    else:
        code, _, err = run(argv)
    assert code == 2 and message in err, (code, err[-2000:])
