"""The reservation reads as one pass: following the spread through one pod CREATE visits each
module at most twice (docs/design-workloadspread.md §2.3.1).

The path is followed the way a reader follows the spread: from the function the committer
applies for a CREATE (the service's `apply`, handed to `SpreadCommitter.submit`), every call of
product code that is handed the spread, in call order: the stored object, the object inside its
typed view, or the view itself (its own accessors included). Consecutive calls into one module
are one visit; a module entered again after another one was is visited again. A reservation that
ping-pongs between helper modules (the raw dict here, the view there, the counts' operations
spread over three files) fails; one that reads top to bottom passes.

What is built from the view once per reservation (the ledger, the target workload) is followed
where it is built and wherever it hands the view on, not through its own methods: those are
the "one object" the reservation reads on. That each is built once, and that the stored object
is handed to nothing once its view exists, is pinned separately below.

The trace uses `sys.setprofile` on the calling thread only, around the one `apply`.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import pytest
from admission_builders import NOW, deployment_chain, owner_ref, pod, spread, subset, versioned, workload
from admission_builders import counted_cluster as _counted

import py_engine
from py_engine.model import WorkloadSpread
from py_engine.policy import PolicyEngine, create_engine
from py_engine.semantics.clock import FixedClock
from py_engine.semantics.jsoncopy import json_copy
from py_engine.workloadspread.admission.ledger import SubsetLedger
from py_engine.workloadspread.admission.ports import Apply, SpreadCommitter
from py_engine.workloadspread.admission.service import AdmissionService, Decision
from py_engine.workloadspread.admission.snapshot import SnapshotReader

R = TypeVar("R")
REPO = Path(py_engine.__file__).resolve().parent.parent
PRODUCT_ROOTS = (REPO / "py_engine", REPO / "webhook")
POD_RESOURCE = {"group": "", "version": "v1", "resource": "pods"}
MAX_VISITS = 2

# The path is followed by function name, which mutmut rewrites: not run by tools/mutation.py.
pytestmark = pytest.mark.structure


def _module_of(filename: str) -> str | None:
    """The repository-relative path of a product module, None for anything else."""
    path = Path(filename)
    if not path.is_absolute():
        return None
    path = path.resolve()
    if not any(path.is_relative_to(root) for root in PRODUCT_ROOTS):
        return None
    return path.relative_to(REPO).as_posix()


class SpreadTrail:
    """The product calls, in order, that are handed the spread (see the module docstring)."""

    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = id(stored)
        self.raws: set[int] = {id(stored)}
        self.calls: list[tuple[str, str]] = []
        self.stored_after_view: list[tuple[str, str]] = []
        """Calls handed the stored object itself once its view existed (the raw dict beside the view)."""
        self._seen_view = False
        self._modules: dict[str, str | None] = {}

    def _carries(self, value: Any) -> bool:
        if isinstance(value, WorkloadSpread):
            self.raws.add(id(value.raw))
            return True
        return isinstance(value, dict) and id(value) in self.raws

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        module = self._modules.get(code.co_filename, "")
        if module == "":
            module = self._modules[code.co_filename] = _module_of(code.co_filename)
        if module is None:
            return
        arguments = [
            frame.f_locals.get(name) for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        ]
        if not any(self._carries(value) for value in arguments):
            return
        self.calls.append((module, code.co_qualname))
        if self._seen_view and any(id(value) == self.stored for value in arguments):
            self.stored_after_view.append((module, code.co_qualname))
        self._seen_view = self._seen_view or any(isinstance(value, WorkloadSpread) for value in arguments)

    def visits(self) -> Counter[str]:
        """Module -> how many separate runs of calls it received."""
        runs: Counter[str] = Counter()
        previous = None
        for module, _ in self.calls:
            if module != previous:
                runs[module] += 1
            previous = module
        return runs

    def path(self) -> str:
        return " -> ".join(f"{'/'.join(module.split('/')[-2:])}:{name}" for module, name in self.calls)


class TracingCommitter(SpreadCommitter):
    """Applies each reservation to the snapshot's spread (as `RecordingCommitter` does) with the
    spread's trail recorded around the `apply` alone; `submit_async` is the port's default."""

    def __init__(self, snapshot: SnapshotReader) -> None:
        self.snapshot = snapshot
        self.trails: list[SpreadTrail] = []

    def submit(
        self, namespace: str, name: str, apply: Apply[R], deadline: float, *, dry_run: bool = False
    ) -> R:
        current = self.snapshot.spread(namespace, name)
        assert current is not None
        working = json_copy(current)
        trail = SpreadTrail(working)
        previous = sys.getprofile()
        sys.setprofile(trail.profile)
        try:
            written, result = apply(working)
        finally:
            sys.setprofile(previous)
        self.trails.append(trail)
        if written is not None and not dry_run:
            self.snapshot.replace_spread(written)
        return result


class ScaledUpReader(SnapshotReader):
    """The watch cache is behind a scale-up the API server already has (`fresh_lookup`)."""

    def __init__(self, items: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> None:
        super().__init__(items)
        self.fresh = SnapshotReader(fresh)

    def fresh_lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.fresh.lookup(api_version, kind, namespace, name)


@pytest.fixture(scope="module")
def engine() -> Iterator[PolicyEngine]:
    eng = create_engine()
    yield eng
    eng.close()


def _create(
    reader: SnapshotReader, engine: PolicyEngine | None, the_pod: dict[str, Any]
) -> tuple[Decision, SpreadTrail]:
    committer = TracingCommitter(reader)
    service = AdmissionService(reader, committer, FixedClock(NOW), engine=engine, new_uid=lambda: "uid-1")
    request = {
        "uid": "r",
        "operation": "CREATE",
        "namespace": "default",
        "name": "",
        "resource": POD_RESOURCE,
        "object": the_pod,
    }
    decision = service.mutate_pod(request)
    assert len(committer.trails) == 1, decision
    return decision, committer.trails[0]


def _percentages(status: dict[str, Any] | None, replicas: int) -> list[dict[str, Any]]:
    ws = spread([subset("a", "50%", "z1"), subset("b", "50%", "z2")], status=status)
    return [ws, *deployment_chain(replicas)]


def _one_each() -> dict[str, Any]:
    """A versioned status with one pod in each of subsets a and b, none missing."""
    return versioned(
        "abc123",
        {"name": "a", "replicas": 1, "missingReplicas": 0},
        {"name": "b", "replicas": 1, "missingReplicas": 0},
    )


def _spec_ahead() -> list[dict[str, Any]]:
    ws, *chain = _counted()
    ws["metadata"]["generation"] = 3
    ws["status"]["observedGeneration"] = 2
    return [ws, *chain]


SCENARIOS: dict[str, Callable[[], SnapshotReader]] = {
    "counted subset with room": lambda: SnapshotReader(_counted()),
    "version initialised from the spec": lambda: SnapshotReader(_percentages(None, 4)),
    "percentages follow the current replicas": lambda: SnapshotReader(_percentages(_one_each(), 4)),
    "full until the API shows the scale-up": lambda: ScaledUpReader(
        _percentages(_one_each(), 2),
        deployment_chain(8),
    ),
    "spec ahead of the status": lambda: SnapshotReader(_spec_ahead()),
    "no subset has room": lambda: SnapshotReader(_percentages(_one_each(), 2)),
}


@pytest.mark.parametrize("with_engine", [False, True], ids=["reference checks", "subset policy"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_one_create_visits_each_module_at_most_twice(
    scenario: str, with_engine: bool, engine: PolicyEngine
) -> None:
    decision, trail = _create(SCENARIOS[scenario](), engine if with_engine else None, pod())
    assert decision.allowed
    visits = trail.visits()
    assert len(visits) >= 4, f"the trail saw too little: the tracer is broken\n{trail.path()}"
    over = {module: count for module, count in visits.items() if count > MAX_VISITS}
    assert not over, f"{scenario}: modules visited more than {MAX_VISITS} times: {over}\n{trail.path()}"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_stored_object_is_not_carried_beside_its_view(scenario: str) -> None:
    """Once the spread is parsed, everything reads the view (its namespace, its status, the
    object to write): the stored dict itself is handed to nothing more."""
    _, trail = _create(SCENARIOS[scenario](), None, pod())
    assert not trail.stored_after_view, f"{trail.stored_after_view}\n{trail.path()}"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_ledger_is_built_once_per_reservation(scenario: str) -> None:
    """The per-version ledger is one object built once from the view; what is done to the
    counts is done through it (`SubsetLedger`, py_engine/workloadspread/admission/ledger.py)."""
    _, trail = _create(SCENARIOS[scenario](), None, pod())
    built = [name for _, name in trail.calls if name == f"{SubsetLedger.__qualname__}.__init__"]
    assert len(built) == 1, trail.path()
    constructors = Counter(name for _, name in trail.calls if name.endswith(".__init__"))
    assert all(count == 1 for count in constructors.values()), constructors


def test_a_statefulset_pod_is_placed_on_the_same_kind_of_path() -> None:
    sts = spread([subset("a", 2, "z1"), subset("b", None, "z2")], target=("apps/v1", "StatefulSet", "db"))
    owner = owner_ref("apps/v1", "StatefulSet", "db")
    reader = SnapshotReader([sts, workload("apps/v1", "StatefulSet", "db", replicas=4)])
    decision, trail = _create(reader, None, pod("db-3", owner=owner, labels={"app": "db"}))
    assert decision.subset == "b"
    assert max(trail.visits().values()) <= MAX_VISITS, trail.path()


def test_a_recorded_pod_is_answered_on_the_same_path() -> None:
    reader = SnapshotReader(_counted())
    _create(reader, None, pod("web-abc123-x1"))
    decision, trail = _create(reader, None, pod("web-abc123-x1"))
    assert decision.subset == "b"
    assert max(trail.visits().values()) <= MAX_VISITS, trail.path()


def test_the_tracer_sees_a_module_entered_three_times() -> None:
    """The counting itself: a path that returns to a module twice after leaving it is caught."""
    stored: dict[str, Any] = {}
    trail = SpreadTrail(stored)
    trail.calls = [("a.py", "f"), ("b.py", "g"), ("a.py", "h"), ("a.py", "i"), ("c.py", "j"), ("a.py", "k")]
    assert trail.visits() == Counter({"a.py": 3, "b.py": 1, "c.py": 1})
