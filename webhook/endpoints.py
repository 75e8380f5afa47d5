"""The webhook's endpoints, each one object: its path, how its AdmissionReview is read, the
decision it asks the product for and how the answer is built.

| path                          | decision (the port into the product)                                |
| ----------------------------- | ------------------------------------------------------------------- |
| `/mutate/pods`                | `PodAdmission.mutate_pod` (pod CREATE: reserve a slot, patch)      |
| `/validate/pods`              | `PodAdmission.validate_pod` (pod DELETE and eviction: release)     |
| `/validate/workloadspreads`   | `Validation.review_workloadspread` (policy, then author's rights)  |
| `/validate/uniteddeployments` | `Validation.review_uniteddeployment` (policy, then author's rights)|

Pod admission is py_engine/workloadspread/admission/service.py; validating both kinds is
py_engine/validation/service.py, whose `Verdict` becomes the same `Decision` the pod
endpoints answer with (`verdict_decision`). The two pod endpoints also have an asynchronous
decision (`decide_later`): under the webhook's own front end they answer once the group
committer has written, without holding a worker thread (webhook/app.py).

Nothing here knows HTTP: webhook/app.py registers each endpoint with Flask and runs the steps
every endpoint shares (the body's HTTP checks, one log record and the metrics per review).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

from py_engine.validation.verdict import Verdict
from py_engine.workloadspread.admission.service import Answer, Decision
from webhook.review import parse_review, review_response

Decide = Callable[[Mapping[str, Any]], Decision]
"""A review's `request` -> its decision (raises on a crash: the app answers a 500 denial)."""
DecideLater = Callable[[Mapping[str, Any], Answer], None]
"""A review's `request` and the continuation that answers it, exactly once, maybe on another thread."""
ReadReview = Callable[[bytes], tuple[str, dict[str, Any]]]
"""A body -> (apiVersion, request); raises webhook.review.ReviewError for a body that is not one."""
Respond = Callable[[str, str, Decision], dict[str, Any]]
"""(apiVersion, uid, decision) -> the AdmissionReview to answer."""


@dataclass(frozen=True)
class Endpoint:
    """One webhook path and everything specific to it."""

    path: str
    decide: Decide
    decide_later: DecideLater | None = None
    """Set for the paths that wait for a status write (the pod paths)."""
    subject: str = "pod"
    """The log field naming the reviewed object: pod, spread or uniteddeployment."""
    read: ReadReview = parse_review
    respond: Respond = review_response


class Readable(Protocol):
    def ready(self) -> bool:
        """Whether what the decisions read is complete (watch caches synced)."""
        ...


class PodAdmission(Protocol):
    """The port into WorkloadSpread admission (`AdmissionService`)."""

    @property
    def view(self) -> Readable:
        """What the decisions read; the app's default readiness is its `ready`."""
        ...

    def mutate_pod(self, request: Mapping[str, Any]) -> Decision: ...

    def mutate_pod_async(self, request: Mapping[str, Any], answer: Answer) -> None: ...

    def validate_pod(self, request: Mapping[str, Any]) -> Decision: ...

    def validate_pod_async(self, request: Mapping[str, Any], answer: Answer) -> None: ...


class Validation(Protocol):
    """The port into validation of both kinds (`ValidationService`)."""

    def review_workloadspread(self, request: Mapping[str, Any]) -> Verdict: ...

    def review_uniteddeployment(self, request: Mapping[str, Any]) -> Verdict: ...


def verdict_decision(review: Callable[[Mapping[str, Any]], Verdict], request: Mapping[str, Any]) -> Decision:
    """The decision `review` reaches on `request`, in the form every endpoint answers with."""
    verdict = review(request)
    return Decision(
        verdict.allowed,
        verdict.outcome,
        warnings=verdict.warnings,
        code=verdict.code,
        message=verdict.message,
        reason=verdict.reason,
    )


def webhook_endpoints(
    admission: PodAdmission, validation: Validation, extra: Mapping[str, Decide] | None = None
) -> list[Endpoint]:
    """The four endpoints of the table above, in that order; `extra` adds paths (the
    benchmark's `/noop`) or replaces one with a synchronous decision."""
    standard: Sequence[Endpoint] = (
        Endpoint("/mutate/pods", admission.mutate_pod, admission.mutate_pod_async),
        Endpoint("/validate/pods", admission.validate_pod, admission.validate_pod_async),
        Endpoint(
            "/validate/workloadspreads",
            partial(verdict_decision, validation.review_workloadspread),
            subject="spread",
        ),
        Endpoint(
            "/validate/uniteddeployments",
            partial(verdict_decision, validation.review_uniteddeployment),
            subject="uniteddeployment",
        ),
    )
    added = dict(extra or {})
    endpoints = [
        replace(endpoint, decide=added.pop(endpoint.path), decide_later=None)
        if endpoint.path in added
        else endpoint
        for endpoint in standard
    ]
    return endpoints + [Endpoint(path, decide) for path, decide in added.items()]
