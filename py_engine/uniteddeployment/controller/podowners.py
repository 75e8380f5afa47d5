"""The pods of a snapshot grouped by what may control them, so that finding one workload's
pods reads that workload's candidates instead of every pod of the UnitedDeployment.

`ownership.pod_owner_test` stays the one decider (docs/uniteddeployment.md, "Subset
workloads"); this index only narrows the pods it is asked about, and never leaves out a pod
the test would accept:

* a pod whose controller reference carries a uid is a candidate of the workload with that
  uid; one whose reference names the workload is a candidate too (the test falls back to the
  name when either side has no uid, as in hand-written snapshots);
* a Deployment's pods are controlled by its ReplicaSets, named `<deployment>-<hash>`: a pod
  controlled by a ReplicaSet is a candidate of the one Deployment `ownership.deployment_behind`
  names;
* a pod without a controller belongs to the workload whose selector matches it: when that
  selector has `matchLabels`, only pods carrying one of its pairs can match.

Every workload of a five-subset UnitedDeployment scanned all its pods before: a quarter of a
steady pass over 1,000 of them (docs/scale.md, "Controller").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.semantics import objects
from py_engine.uniteddeployment.controller.ownership import controller_ref, deployment_behind, pod_owner_test

Obj = Mapping[str, Any]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class PodOwners:
    """See the module docstring. Built once per snapshot of pods; `of()` keeps snapshot order."""

    def __init__(self, pods: Sequence[Obj]) -> None:
        self._pods = pods
        self._by_uid: dict[str, list[int]] = {}
        self._by_name: dict[tuple[str, str | None], list[int]] = {}
        self._odd_names: list[int] = []  # a reference whose name is neither a string nor absent
        self._by_deployment: dict[tuple[str, str], list[int]] = {}
        self._ownerless: dict[str, list[int]] = {}
        self._ownerless_by_label: dict[tuple[str, str, str], list[int]] = {}
        for position, pod in enumerate(pods):
            namespace = objects.namespace(pod, default="")
            ref = controller_ref(pod)
            if ref is None:
                self._ownerless.setdefault(namespace, []).append(position)
                labels = objects.labels(pod)
                for key, value in labels.items():
                    if isinstance(value, str):
                        self._ownerless_by_label.setdefault((namespace, key, value), []).append(position)
                continue
            uid, name = _text(ref.get("uid")), ref.get("name")
            if uid is not None:
                self._by_uid.setdefault(uid, []).append(position)
            if name is None or isinstance(name, str):  # compared as it is (`ownership._names`)
                self._by_name.setdefault((namespace, name), []).append(position)
            else:
                self._odd_names.append(position)
            deployment = deployment_behind(ref, pod)
            if deployment is not None:
                self._by_deployment.setdefault((namespace, deployment), []).append(position)

    def _candidates(self, workload: Obj) -> set[int]:
        namespace = objects.namespace(workload, default="")
        name = objects.meta(workload).get("name")
        found: set[int] = set(self._odd_names)  # the only ones a name of another type can equal
        if name is None or isinstance(name, str):
            found.update(self._by_name.get((namespace, name), ()))
        uid = _text(objects.uid(workload))
        if uid is not None:
            found.update(self._by_uid.get(uid, ()))
        if workload.get("kind") == "Deployment":
            found.update(self._by_deployment.get((namespace, str(name or "")), ()))
        found.update(self._ownerless_candidates(workload, namespace))
        return found

    def _ownerless_candidates(self, workload: Obj, namespace: str) -> Sequence[int]:
        spec = workload.get("spec")
        selector = spec.get("selector") if isinstance(spec, Mapping) else None
        match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
        pairs = (
            [(k, v) for k, v in match_labels.items() if isinstance(k, str) and isinstance(v, str)]
            if isinstance(match_labels, Mapping)
            else []
        )
        if not pairs or len(pairs) != len(match_labels or {}):
            return self._ownerless.get(namespace, ())
        return min((self._ownerless_by_label.get((namespace, k, v), []) for k, v in pairs), key=len)

    def of(self, workload: Obj) -> tuple[Obj, ...]:
        """The pods `workload` controls (`ownership.owns_pod`), in snapshot order."""
        owns = pod_owner_test(workload)
        pods = self._pods
        return tuple(pods[i] for i in sorted(self._candidates(workload)) if owns(pods[i]))


def pods_of(workload: Obj, pods: Sequence[Obj]) -> tuple[Obj, ...]:
    """The pods `workload` controls among `pods` (for one workload; `PodOwners` for many)."""
    return PodOwners(pods).of(workload)
