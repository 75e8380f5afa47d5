"""The admission service: one AdmissionReview `request` in, one `Decision` out.

The one admission pipeline: the webhook and `spreadgate admit` (and the
reference-vector tests) run this service, over two implementations of each
port (`py_engine.workloadspread.admission.ports`): the webhook reads watch caches and commits
through the group committer (`py_engine.workloadspread.admission.runtime`), the offline runs
read a snapshot and record what would be written (`py_engine.workloadspread.admission.offline`).
Every guard (operation, resource, namespace, mirror pod, controller owner,
active pod, dry run) is here and nowhere else: the decision functions it calls
assume a pod that passed them.

Two entry points, one per pod webhook path (both also come as `mutate_pod_async` and
`validate_pod_async`, which answer through a continuation once the committer has written, so
the webhook holds no thread while a pod waits for its batch; both forms share every step,
`_prepare_create` and `_prepare_release`):

* `mutate_pod` (pod CREATE): trace the pod to its WorkloadSpread through the
  reader, take a slot with `reserve_create` through the committer
  (durably written before the answer), inject the subset and diff the patch;
  a subset `patch` the allowlist refuses is left out, with a warning
  (`patch_guard`, policies/validation/patch.rego).
* `validate_pod` (pod DELETE, `pods/eviction` CREATE): give the slot back with
  `release_delete` (deletingPods), committed the same way. A delete is never
  denied because of our own failure unless `deny_deletes_on_failure` is set.

Validating WorkloadSpreads and UnitedDeployments is not admission: it is the validation
service's (py_engine/validation/service.py), beside each other.

Skipped without any write: dry runs of deletes, mirror pods, pods without a
controller owner, inactive pods. A dry-run CREATE is decided on the freshest
cached spread and never written. A reservation that cannot be committed in
time follows `on_commit_failure`: "deny" (the workload controller retries, as
with the reference) or "allow-unmodified" (the pod is admitted without a
subset; nothing was reserved for it). A pod admitted without a subset loses
any matched-workloadspread annotation it arrived with (`_without_subset`).

Errors are values: every path returns a `Decision`, the webhook turns it into
a well-formed AdmissionReview response.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from py_engine.model.pods import controller_owner, is_pod_active, matched_spread
from py_engine.model.workloads import Whitelist, whitelist_from_entries
from py_engine.placement.classes import NodeClassCache
from py_engine.placement.eligibility import EligibilityCache
from py_engine.policy import PolicyEngine
from py_engine.semantics import objects
from py_engine.semantics.clock import Clock
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.semantics.uids import UuidSource
from py_engine.workloadspread.admission.caches import AdmissionCaches
from py_engine.workloadspread.admission.context import (
    AdmissionContext,
    AdmissionError,
    OwnerNotFound,
    PatchCheck,
    admission_context,
)
from py_engine.workloadspread.admission.inject import make_patch
from py_engine.workloadspread.admission.matched import (
    MATCHED_KEYS,
    SPREADGATE_KEY,
    without_matched_annotations,
)
from py_engine.workloadspread.admission.patch_guard import PatchGuard, inject_checked
from py_engine.workloadspread.admission.ports import (
    AdmissionReader,
    Apply,
    CommitFailed,
    SpreadCommitter,
    SpreadNotFound,
)
from py_engine.workloadspread.admission.release import DeleteRelease, find_annotated_spread, release_delete
from py_engine.workloadspread.admission.reserve import CreateReservation, reserve_create
from py_engine.workloadspread.admission.tracing import find_spread

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
FailureMode = Literal["deny", "allow-unmodified"]
FAILURE_MODES: tuple[str, ...] = ("deny", "allow-unmodified")


@dataclass(frozen=True)
class Decision:
    """An admission answer. `outcome` is the metrics label (patched, allowed, skipped,
    released, denied, invalid, commit-failed, patch-refused, forbidden, error).

    What the webhook answers is `allowed`, `patch`, `warnings`, `code`, `message`, `reason`
    and `audit`; `spread` (the governing WorkloadSpread's name), `subset` (placed into or
    released from) and `pod` (the pod as admitted, when patched) are for offline readers
    (`py_engine.workloadspread.admission.offline`) and are never sent."""

    allowed: bool
    outcome: str
    patch: list[dict[str, Any]] | None = None
    warnings: tuple[str, ...] = ()
    code: int = 200
    message: str = ""
    reason: str = ""
    audit: Mapping[str, str] = field(default_factory=dict)
    spread: str | None = None
    subset: str | None = None
    pod: dict[str, Any] | None = None


def allow(outcome: str = "allowed", message: str = "", warnings: Sequence[str] = ()) -> Decision:
    return Decision(True, outcome, message=message, warnings=tuple(warnings))


def deny(code: int, message: str, outcome: str = "denied", reason: str = "") -> Decision:
    return Decision(False, outcome, code=code, message=message, reason=reason)


@dataclass(frozen=True)
class ServiceConfig:
    on_commit_failure: FailureMode = "deny"
    commit_timeout: float = 2.5
    deny_deletes_on_failure: bool = False
    versioned_kinds: frozenset[str] = frozenset({"deployment", "replicaset"})
    custom_workloads: tuple[Mapping[str, Any], ...] = ()
    """Whitelist entries `{group, kind, replicasPath, subResources: [{group, kind}]}` (Kruise's
    capitalised keys are accepted too); parsed once, into `whitelist`."""
    allowed_patch_fields: tuple[str, ...] = ()
    """Pod fields a subset patch may set beyond the default allowlist (policies/validation/patch.rego)."""
    check_subset_patches: bool = True
    """Enforce the subset patch allowlist; only the reference-vector tests turn it off
    (the reference has no allowlist)."""

    @functools.cached_property
    def whitelist(self) -> Whitelist:
        """`custom_workloads` parsed, once per configuration (raises WhitelistError naming the entry)."""
        return whitelist_from_entries(self.custom_workloads, "custom workloads")


class TimedEngine:
    """A `PolicyEngine` that reports every evaluation's duration (Rego eval-time metric)."""

    def __init__(self, engine: PolicyEngine, observe: Callable[[str, float], None]) -> None:
        self.engine = engine
        self.observe = observe

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            return self.engine.evaluate(rule, input_document)
        finally:
            self.observe(rule, time.perf_counter() - started)

    def close(self) -> None:
        self.engine.close()


Outcome = Callable[[], Decision]
"""A decision to read: returns it, or raises what deciding raised (the webhook's panic recovery)."""
Answer = Callable[[Outcome], None]
"""How an asynchronous entry point answers: `answer(outcome)`, exactly once, possibly on another
thread (the committer's) and possibly before the entry point returns. An entry point that raises
has not answered."""


@dataclass(slots=True)
class _Commit:
    """A decision that needs a reservation committed first: what to submit, and how the
    committed result (`committed`) or the committer's error (`failed`, which raises what it
    does not handle) becomes the decision. Built once per pod and never changed; not frozen,
    because a frozen dataclass sets each field through `object.__setattr__` (2.6 us here)."""

    namespace: str
    name: str
    apply: Apply[Any]
    committed: Callable[[Any], Decision]
    failed: Callable[[BaseException], Decision]
    dry_run: bool = False


def _object(request: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = request.get(key)
    return value if isinstance(value, dict) else None


class AdmissionService:
    """See the module docstring. Thread-safe: the webhook calls it from many threads."""

    def __init__(
        self,
        view: AdmissionReader,
        committer: SpreadCommitter,
        clock: Clock,
        *,
        engine: PolicyEngine | None = None,
        validation_engine: PolicyEngine | None = None,
        config: ServiceConfig | None = None,
        decision_cache: EligibilityCache | None = None,
        node_classes: NodeClassCache | None = None,
        new_uid: Callable[[], str] | None = None,
        caches: AdmissionCaches | None = None,
    ) -> None:
        """`view` and `committer` are the two ports; `node_classes` and `decision_cache` are
        owned by the caller (one per webhook process or offline run); `new_uid` keys the
        `creatingPods` entry of a pod with only `generateName`; `caches` (spreads parsed per
        version, py_engine/workloadspread/admission/caches.py) is the service's own unless one is given."""
        self.view = view
        self.committer = committer
        self.clock = clock
        self.engine = engine
        self.validation_engine = validation_engine or engine
        self.config = config or ServiceConfig()
        self.decision_cache = decision_cache
        self.node_classes = node_classes
        self.new_uid = new_uid or UuidSource()
        self.caches = caches if caches is not None else AdmissionCaches()
        self.patch_guard: PatchCheck | None = (
            PatchGuard(self.validation_engine, self.config.allowed_patch_fields)
            if self.config.check_subset_patches
            else None
        )

    def context(self) -> AdmissionContext:
        """What a decision made now is a function of (reader, engines, caches, configuration)."""
        return admission_context(
            now=self.clock.now(),
            lookup=self.view.lookup,
            engine=self.engine,
            nodes=self.view.node_inventory(),
            versioned_kinds=self.config.versioned_kinds,
            whitelist=self.config.whitelist,
            decision_cache=self.decision_cache,
            fresh_lookup=self.view.fresh_lookup,
            patch_guard=self.patch_guard,
            node_classes=self.node_classes,
            caches=self.caches,
        )

    def _deadline(self) -> float:
        return self.clock.monotonic() + self.config.commit_timeout

    # ------------------------------------------------------------ pod CREATE

    def mutate_pod(self, request: Mapping[str, Any]) -> Decision:
        return self._commit_now(self._prepare_create(request))

    def mutate_pod_async(self, request: Mapping[str, Any], answer: Answer) -> None:
        """`mutate_pod` answered through `answer` (see `Answer`), without waiting for the commit."""
        self._commit_later(self._prepare_create(request), answer)

    def _prepare_create(self, request: Mapping[str, Any]) -> Decision | _Commit:
        """Everything a pod CREATE decides before its slot is committed (or its decision, when it
        needs no slot)."""
        resource = (
            (request.get("resource") or {}).get("resource")
            if isinstance(request.get("resource"), Mapping)
            else None
        )
        if request.get("operation") != "CREATE" or resource != "pods" or request.get("subResource"):
            return allow("skipped", "not a pod CREATE")
        pod = _object(request, "object")
        if pod is None:
            return deny(400, "request.object must be a Pod object", "error", "BadRequest")
        namespace = str(request.get("namespace") or objects.meta(pod).get("namespace") or "")
        if not namespace:
            return deny(400, "the pod has no namespace", "error", "BadRequest")
        annotations = objects.meta(pod).get("annotations")
        if isinstance(annotations, JSON_OBJECT) and MIRROR_ANNOTATION in annotations:
            return allow("skipped", "mirror pod")
        if controller_owner(pod) is None or not is_pod_active(pod):
            return allow("skipped", "no controller owner or inactive pod")
        spreads = self.view.spreads_in(namespace)
        if not spreads:
            return allow("skipped", "no WorkloadSpread in the namespace")
        # The core reads the namespace from the pod; the patch is diffed against the pod as sent.
        traced = dict(pod, metadata={**objects.meta(pod), "namespace": namespace})
        ctx = self.context()
        try:
            spread = find_spread(traced, spreads, ctx)
        except OwnerNotFound as exc:
            return deny(404, exc.message, "denied", "NotFound")
        except AdmissionError as exc:
            return deny(exc.code, exc.message, "denied")
        if spread is None:
            # Spreadgate's key on a pod no spread governs is a forgery
            # (of Kruise's, Kruise may be the author).
            skipped = _without_subset(pod, "skipped", (), keys=SPREADGATE_KEY)
            return replace(skipped, message="no WorkloadSpread targets the pod's workload")
        generated_uid = self.new_uid()
        name = objects.name(spread)

        def apply(
            obj: dict[str, Any],
        ) -> tuple[dict[str, Any] | None, tuple[CreateReservation, dict[str, Any]]]:
            # The committer hands each apply a private copy of the status (ports.Apply).
            reservation = reserve_create(obj, traced, ctx, generated_uid=generated_uid, status_owned=True)
            return reservation.spread, (reservation, obj)

        def committed(outcome: tuple[CreateReservation, dict[str, Any]]) -> Decision:
            reservation, base = outcome
            if reservation.subset is None:
                return replace(_without_subset(pod, "allowed", reservation.warnings), spread=name)
            try:
                mutated, refused = inject_checked(pod, base, reservation.subset, reservation.uid, ctx)
            except AdmissionError as exc:
                # The slot is held until the controller ages the creatingPods entry out (30 s), as in Kruise.
                return replace(deny(exc.code, exc.message, "denied"), spread=name)
            patch = make_patch(pod, mutated)
            # A refused subset patch (the allowlist, patch_guard) is left out; the pod is still placed.
            return Decision(
                True,
                "patch-refused" if refused else "patched",
                patch=patch,
                warnings=(*reservation.warnings, *refused),
                audit={
                    "workloadspread": name,
                    "subset": reservation.subset,
                    **({"subset-patch": "refused"} if refused else {}),
                },
                spread=name,
                subset=reservation.subset,
                pod=mutated,
            )

        def failed(exc: BaseException) -> Decision:
            if isinstance(exc, SpreadNotFound):
                return allow("skipped", f"WorkloadSpread {namespace}/{name} is gone")
            if isinstance(exc, CommitFailed):
                return replace(self._commit_failed(exc, namespace, name, pod), spread=name)
            if isinstance(exc, AdmissionError):
                return replace(deny(exc.code, exc.message, "denied"), spread=name)
            raise exc

        return _Commit(namespace, name, apply, committed, failed, dry_run=bool(request.get("dryRun")))

    def _commit_now(self, step: Decision | _Commit) -> Decision:
        """Commit `step`'s reservation, waiting for it, and return the decision."""
        if isinstance(step, Decision):
            return step
        try:
            result = self.committer.submit(
                step.namespace, step.name, step.apply, self._deadline(), dry_run=step.dry_run
            )
        except Exception as exc:
            return step.failed(exc)
        return step.committed(result)

    def _commit_later(self, step: Decision | _Commit, answer: Answer) -> None:
        """Submit `step`'s reservation and answer when the committer has: the waiting holds no thread."""
        if isinstance(step, Decision):
            answer(lambda: step)
            return

        def done(result: Any, error: BaseException | None) -> None:
            answer(lambda: step.failed(error) if error is not None else step.committed(result))

        self.committer.submit_async(
            step.namespace, step.name, step.apply, self._deadline(), done, dry_run=step.dry_run
        )

    def _commit_failed(self, exc: CommitFailed, namespace: str, name: str, pod: dict[str, Any]) -> Decision:
        message = f"WorkloadSpread {namespace}/{name}: {exc.message}"
        audit = {"workloadspread": name}  # names the spread in the webhook's log record too
        if self.config.on_commit_failure == "allow-unmodified":
            decision = _without_subset(
                pod, "commit-failed", (f"{message}; the pod is admitted without a subset",)
            )
            return replace(decision, audit=audit)
        return replace(deny(500, message, "commit-failed", exc.reason), audit=audit)

    # ----------------------------------------------------- pod DELETE/evict

    def validate_pod(self, request: Mapping[str, Any]) -> Decision:
        return self._commit_now(self._prepare_release(request))

    def validate_pod_async(self, request: Mapping[str, Any], answer: Answer) -> None:
        """`validate_pod` answered through `answer` (see `Answer`), without waiting for the commit."""
        self._commit_later(self._prepare_release(request), answer)

    def _prepare_release(self, request: Mapping[str, Any]) -> Decision | _Commit:
        """Everything a pod DELETE or eviction decides before its slot is given back."""
        operation = request.get("operation")
        resource = (
            (request.get("resource") or {}).get("resource")
            if isinstance(request.get("resource"), Mapping)
            else None
        )
        sub = request.get("subResource") or ""
        namespace = str(request.get("namespace") or "")
        if resource != "pods":
            return allow("skipped", "not a pod")
        if operation == "DELETE" and not sub:
            pod = _object(request, "oldObject")
            if pod is None:
                return allow("skipped", "DELETE without the old object")
        elif operation == "CREATE" and sub == "eviction":
            name = str(request.get("name") or "")
            if not name or not namespace:
                return allow("skipped", "eviction without a pod name")
            pod = self.view.pod(namespace, name)
            if pod is None:
                return allow("skipped", "evicted pod not found")
        else:
            return allow("skipped", "not a pod DELETE or eviction")
        if request.get("dryRun") or _dry_run_options(request.get("options")):
            return allow("skipped", "dry run")
        namespace = namespace or str(objects.meta(pod).get("namespace") or "")
        if matched_spread(pod) is None or controller_owner(pod) is None or not is_pod_active(pod):
            return allow("skipped", "pod not admitted by a WorkloadSpread, or inactive")
        pod = dict(pod, metadata={**objects.meta(pod), "namespace": namespace})
        spreads = self.view.spreads_in(namespace)
        spread = find_annotated_spread(pod, spreads)
        if spread is None:
            return allow("skipped", "annotated WorkloadSpread not found")
        ctx = self.context()
        name = objects.name(spread)
        if not _governs(spread, pod, spreads, ctx):
            # An annotation added after admission (an UPDATE) to a pod of another workload.
            return allow(
                "skipped", f"WorkloadSpread {name} does not govern the pod's workload; nothing to release"
            )

        def apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, DeleteRelease]:
            release = release_delete(obj, pod, ctx, status_owned=True)
            return release.spread, release

        def committed(release: DeleteRelease) -> Decision:
            if release.spread is None:
                return replace(allow("allowed"), spread=name, subset=release.subset)
            if not release.freed:  # recorded, but the pod was beyond its subset's cap
                return replace(
                    allow("allowed", f"subset {release.subset}: over its cap; the deletion frees no slot"),
                    spread=name,
                    subset=release.subset,
                )
            return Decision(
                True,
                "released",
                audit={"workloadspread": name, "subset": release.subset or ""},
                spread=name,
                subset=release.subset,
            )

        def failed(exc: BaseException) -> Decision:
            if isinstance(exc, SpreadNotFound):
                return allow("skipped", "WorkloadSpread is gone")
            if not isinstance(exc, (CommitFailed, AdmissionError)):
                raise exc
            message = f"WorkloadSpread {namespace}/{name}: could not record the pod deletion: {exc}"
            refused = (
                deny(500, message, "commit-failed")
                if self.config.deny_deletes_on_failure
                else allow("commit-failed", warnings=(message,))
            )
            return replace(refused, audit={"workloadspread": name}, spread=name)

        return _Commit(namespace, name, apply, committed, failed)


def _governs(
    spread: Mapping[str, Any], pod: dict[str, Any], spreads: Sequence[dict[str, Any]], ctx: AdmissionContext
) -> bool:
    """Whether `spread` is the one that governs `pod`'s workload, so its DELETE may give a slot back.

    A pod whose owner is not in the caches (being garbage-collected with it) is taken at its
    annotation's word, as Kruise does; a pod traced to another workload, or to none, is not.
    """
    try:
        governing = find_spread(pod, spreads, ctx)
    except AdmissionError:
        return True
    return governing is not None and objects.name(governing) == objects.name(spread)


def _without_subset(
    pod: dict[str, Any], outcome: str, warnings: Sequence[str], keys: tuple[str, ...] = MATCHED_KEYS
) -> Decision:
    """A pod admitted without a subset: unchanged, except that a matched-workloadspread
    annotation it arrived with (`keys`: both for a pod traced to a spread) is removed, so
    its DELETE cannot give back a slot it never held (`py_engine.workloadspread.admission.matched`)."""
    stripped = without_matched_annotations(pod, keys)
    patch = make_patch(pod, stripped) if stripped is not None else None
    return Decision(True, outcome, patch=patch, warnings=tuple(warnings), pod=stripped)


def _dry_run_options(options: Any) -> bool:
    return isinstance(options, JSON_OBJECT) and bool(options.get("dryRun"))
