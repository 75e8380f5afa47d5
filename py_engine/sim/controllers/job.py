"""The Job controller: keep `parallelism` pods running until `completions` succeed.

A simplified `pkg/controller/job` (NonIndexed completion mode):

* active pods wanted = `min(parallelism, completions - succeeded)`; with
  `completions` unset (work-queue jobs) `parallelism` until the first success,
  then none;
* pods are created from the template with `generateName: <job>-` and the
  `batch.kubernetes.io/job-name`, `job-name`, `batch.kubernetes.io/controller-uid`
  and `controller-uid` labels; excess active pods are deleted (newest first);
* `succeeded`/`failed` are counted from the Job's terminated pods that still
  exist (no `job-tracking` finalizers, so a removed finished pod is forgotten);
* more than `backoffLimit` (default 6) failed pods fails the Job; reaching
  `completions` sets `Complete` and `completionTime`; `suspend` stops creating.

Pods finish only when something sets their phase: the emulator's kubelet
completes pods of Jobs after a configurable run time (see `kubelet.py`).
"""

from __future__ import annotations

from py_engine.semantics.timeutil import format_time
from py_engine.sim.controllers.podutil import is_active, is_ready, set_condition
from py_engine.sim.controllers.replicaset import PodOwnerController, concurrently
from py_engine.sim.controllers.writes import delete_through, patch_status
from py_engine.sim.interface import JSON, ApiError

__all__ = ["JobController", "wanted_active"]

JOBS = "batch/v1/jobs"
PODS = "v1/pods"


def wanted_active(job: JSON, succeeded: int) -> int:
    """How many pods should be active given how many have succeeded."""
    spec = job.get("spec", {})
    parallelism = 1 if spec.get("parallelism") is None else int(spec["parallelism"])
    completions = spec.get("completions")
    if spec.get("suspend"):
        return 0
    if completions is None:
        return 0 if succeeded > 0 else parallelism
    return max(min(parallelism, int(completions) - succeeded), 0)


def _finished(job: JSON) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


class JobController(PodOwnerController):
    """Reconciles `batch/v1` Jobs into pods."""

    name = "job"
    component = "job-controller"

    def setup(self) -> None:
        self.job_informer = self.watch_primary(JOBS)
        self.pod_informer = self.watch_owned(PODS, "Job")

    def reconcile(self, job: JSON) -> int:
        pods = self.pod_informer.by_index("controller", str(job["metadata"]["uid"]))
        active = [p for p in pods if is_active(p)]
        succeeded = sum(1 for p in pods if p.get("status", {}).get("phase") == "Succeeded")
        failed = sum(1 for p in pods if p.get("status", {}).get("phase") == "Failed")
        writes = 0
        finished = _finished(job) or bool(job["metadata"].get("deletionTimestamp"))
        spec = job.get("spec", {})
        backoff_limit = 6 if spec.get("backoffLimit") is None else int(spec["backoffLimit"])
        completions = spec.get("completions")
        done = (succeeded >= int(completions)) if completions is not None else (succeeded > 0 and not active)
        failing = failed > backoff_limit
        if not finished:
            want = 0 if (done or failing) else wanted_active(job, succeeded)
            if completions is None and succeeded > 0 and not failing:
                want = len(active)  # work-queue Job: let the remaining pods finish
            if len(active) < want:
                writes += self._create(job, want - len(active))
            elif len(active) > want:
                writes += self._delete(sorted(active, key=self._newest_first)[: len(active) - want])
            active = [
                p
                for p in self.pod_informer.by_index("controller", str(job["metadata"]["uid"]))
                if is_active(p)
            ]
        return writes + self._update_status(job, active, succeeded, failed, done, failing)

    @staticmethod
    def _newest_first(pod: JSON) -> tuple[int, str, str]:
        # Not-ready before ready, then newest first (a simplification of ActivePods).
        meta = pod["metadata"]
        created = str(meta.get("creationTimestamp", ""))
        inverted = "".join(chr(0x10FFFF - ord(c)) for c in created)
        return (1 if is_ready(pod) else 0, inverted, str(meta.get("name", "")))

    def _create(self, job: JSON, count: int) -> int:
        template = dict(job.get("spec", {}).get("template") or {})
        meta = dict(template.get("metadata") or {})
        labels = dict(meta.get("labels") or {})
        uid = str(job["metadata"]["uid"])
        name = str(job["metadata"]["name"])
        labels.update(
            {
                "batch.kubernetes.io/controller-uid": uid,
                "controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "job-name": name,
            }
        )
        meta["labels"] = labels
        template["metadata"] = meta
        return self._create_pods_of(job, template, ("batch/v1", "Job"), count)[0]

    def _delete(self, pods: list[JSON]) -> int:
        def delete_one(pod: JSON) -> Exception | None:
            try:
                delete_through(self.api, self.pod_informer, pod)
            except ApiError as exc:
                return exc
            return None

        errors = concurrently(pods, delete_one)
        return len(pods) - len(errors)

    def _update_status(
        self, job: JSON, active: list[JSON], succeeded: int, failed: int, done: bool, failing: bool
    ) -> int:
        current = job.get("status") or {}
        now = self.clock.now()
        status: JSON = {
            "active": len(active),
            "ready": sum(1 for p in active if is_ready(p)),
            "succeeded": succeeded,
            "failed": failed,
            "startTime": current.get("startTime") or format_time(now),
        }
        conditions = list(current.get("conditions") or [])
        finishing = (
            None if _finished(job) else ("Completed" if done else "BackoffLimitExceeded" if failing else None)
        )
        if not _finished(job):
            if done:
                conditions = set_condition(conditions, "Complete", "True", "", "", now)
                status["completionTime"] = format_time(now)
            elif failing:
                conditions = set_condition(
                    conditions,
                    "Failed",
                    "True",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    now,
                )
        if conditions:
            status["conditions"] = conditions
        if all(current.get(k) == v for k, v in status.items()):
            return 0
        if not patch_status(self.api, self.job_informer, job, status):
            return 0
        if finishing == "Completed":
            self.events.normal(job, "Completed", "Job completed")
        elif finishing is not None:
            self.events.warning(job, finishing, "Job has reached the specified backoff limit")
        return 1
