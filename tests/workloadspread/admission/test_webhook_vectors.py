"""Every webhook-side reference vector through the admission core.

Vectors of kinds choose_subset / inject / missing_replicas whose operation is
CREATE, DELETE, EVICTION or INIT_STATUSES, plus the pure `inject-patch-*`
vectors. RECONCILE vectors and the `match-subset-score-*` ones belong to the
controller and are not selected here. Each vector runs with the spread in
Kruise's group (the migration path) and mapped to Spreadgate's, and both
without the Rego policy (the reference's checks only) and with it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from vectors import load_vector_file

from py_engine.model import KRUISE_GROUP, KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.model.constants import GROUP
from py_engine.policy import PolicyEngine, create_engine
from py_engine.semantics.timeutil import parse_time
from py_engine.workloadspread.admission.inject import apply_subset_patch
from py_engine.workloadspread.admission.ledger import SubsetLedger
from py_engine.workloadspread.admission.offline import OfflineAdmission
from py_engine.workloadspread.admission.reserve import read_spread
from py_engine.workloadspread.admission.service import ServiceConfig
from py_engine.workloadspread.admission.workloads import TargetWorkload

WEBHOOK_OPERATIONS = {"CREATE", "DELETE", "EVICTION", "INIT_STATUSES"}
ADMISSION_KINDS = {"choose_subset", "inject", "missing_replicas"}
GENERATED_UID = "5c1f3a8e-0000-4000-8000-000000000001"


def _selected() -> list[dict[str, Any]]:
    cases = []
    for case in load_vector_file("workloadspread_cases.json")["cases"]:
        if case["kind"] not in ADMISSION_KINDS:
            continue
        operation = case["input"].get("operation")
        if operation in WEBHOOK_OPERATIONS or (operation is None and case["id"].startswith("inject-patch-")):
            cases.append(case)
    return cases


CASES = _selected()


def test_vector_selection_is_not_empty() -> None:
    ops = {c["input"].get("operation") for c in CASES}
    assert {"CREATE", "DELETE", "EVICTION", "INIT_STATUSES", None} <= ops
    assert len(CASES) >= 15


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


def _map_spread(spread: dict[str, Any], to_spreadgate: bool) -> dict[str, Any]:
    spread = copy.deepcopy(spread)
    if to_spreadgate and spread["apiVersion"].startswith(KRUISE_GROUP + "/"):
        spread["apiVersion"] = GROUP + "/" + spread["apiVersion"].split("/", 1)[1]
    return spread


def _expected_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """Expected pods carry Kruise's key; Spreadgate writes its own."""
    pod = copy.deepcopy(pod)
    annotations = pod.get("metadata", {}).get("annotations") or {}
    if KRUISE_MATCHED_ANNOTATION in annotations:
        annotations[MATCHED_ANNOTATION] = annotations.pop(KRUISE_MATCHED_ANNOTATION)
    return pod


def _admission(case: dict[str, Any], spread: dict[str, Any], engine: PolicyEngine | None) -> OfflineAdmission:
    """The webhook's admission service over the vector's cluster and spread. The reference has no
    subset patch allowlist, so it is not enforced here."""
    data = case["input"]
    whitelist = (data.get("kruiseConfig") or {}).get("WorkloadSpread_Watch_Custom_Workload_WhiteList") or {}
    kinds = (data.get("config") or {}).get("versionedStatusKinds")
    config = ServiceConfig(
        custom_workloads=tuple(whitelist.get("workloads") or []),
        check_subset_patches=False,
        **({"versioned_kinds": frozenset(kinds)} if kinds else {}),
    )
    return OfflineAdmission(
        [*(data.get("cluster") or []), spread],
        _now(case),
        generated_uid=GENERATED_UID,
        engine=engine,
        config=config,
    )


def _now(case: dict[str, Any]) -> datetime:
    return parse_time(case["input"].get("now") or load_vector_file("workloadspread_cases.json")["now"])


def _entry_matches(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    for key, value in expected.items():
        got = actual.get(key)
        if key in ("creatingPods", "deletingPods"):
            if (got or {}) != (value or {}):
                return False
        elif got != value:
            return False
    return True


def _assert_statuses(actual: Any, expected: Any) -> None:
    assert isinstance(actual, list) and len(actual) == len(expected), (actual, expected)
    for got, want in zip(actual, expected, strict=True):
        assert _entry_matches(got, want), f"\n got: {json.dumps(got)}\nwant: {json.dumps(want)}"


@pytest.mark.parametrize("policy", ["no-policy", "rego"])
@pytest.mark.parametrize("group", ["kruise-group", "spreadgate-group"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_webhook_vector(
    case: dict[str, Any], group: str, policy: str, request: pytest.FixtureRequest
) -> None:
    data, expected = case["input"], case["expected"]
    operation = data.get("operation")
    engine = request.getfixturevalue("engine") if policy == "rego" else None

    if operation is None:  # inject-patch-*: the subset patch alone
        assert apply_subset_patch(data["pod"], data["patch"]) == _expected_pod(expected["pod"])
        return

    spread = _map_spread(data["workloadSpread"], group == "spreadgate-group")
    if operation == "INIT_STATUSES":
        view = read_spread(spread)
        ctx = _admission(case, spread, None).service.context()
        # A version the stored status has no entry for: the ledger is made from the spec.
        ledger = SubsetLedger(view, "never-stored", TargetWorkload(view, ctx).replicas)
        assert ledger.initialised
        _assert_statuses(ledger.entries, expected["subsetStatuses"])
        return

    original_spread = copy.deepcopy(spread)
    original_pod = copy.deepcopy(data["pod"])
    admission = _admission(case, spread, engine)
    if operation == "CREATE":
        outcome = admission.create(data["pod"])
    elif operation == "EVICTION":
        outcome = admission.evict(data["pod"])
    else:
        outcome = admission.delete(data["pod"])
    assert spread == original_spread and data["pod"] == original_pod, "inputs must not be mutated"

    assert outcome.allowed is expected["allowed"], outcome.message
    if expected.get("error") == "NotFound":
        assert outcome.code == 404
    if "subset" in expected:
        assert outcome.subset == expected["subset"]
    if "pod" in expected:
        assert outcome.pod == _expected_pod(expected["pod"])
    if "statusWritten" in expected:
        assert outcome.status_written is expected["statusWritten"]
    if "versionedSubsetStatuses" in expected:
        after = outcome.spread if outcome.spread is not None else spread
        versioned = after["status"]["versionedSubsetStatuses"]
        assert set(versioned) == set(expected["versionedSubsetStatuses"])
        for version, statuses in expected["versionedSubsetStatuses"].items():
            _assert_statuses(versioned[version], statuses)
