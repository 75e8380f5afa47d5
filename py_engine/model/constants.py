"""Names and keys of the WorkloadSpread API, Spreadgate's and Kruise's."""

from __future__ import annotations

from typing import Final

GROUP: Final = "spreadgate.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
KIND: Final = "WorkloadSpread"
PLURAL: Final = "workloadspreads"

# OpenKruise's group: manifests written for it are read as Spreadgate's own.
KRUISE_GROUP: Final = "apps.kruise.io"
SPREAD_GROUPS: Final = frozenset({GROUP, KRUISE_GROUP})

# Pod annotation naming the spread and subset a pod was admitted into:
# compact JSON {"name": ..., "subset": ...} (+ "uid" for generateName pods).
MATCHED_ANNOTATION: Final = "spreadgate.dev/matched-workloadspread"
KRUISE_MATCHED_ANNOTATION: Final = "apps.kruise.io/matched-workloadspread"

# WorkloadSpread annotations that tune Spreadgate beyond Kruise's fields.
IN_SUBSET_SPREAD_ANNOTATION: Final = "spreadgate.dev/in-subset-spread"
RECOVERY_WINDOW_ANNOTATION: Final = "spreadgate.dev/recovery-window-seconds"
IGNORE_PATCH_EXISTING_PODS_ANNOTATION: Final = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"

DEFAULT_RECOVERY_WINDOW_SECONDS: Final = 300
CREATING_POD_TIMEOUT_SECONDS: Final = 30
DELETING_POD_TIMEOUT_SECONDS: Final = 15

# Status map key when a workload's pods are not versioned (everything but Deployment/ReplicaSet).
VERSION_IGNORED: Final = "versionIgnored"

SCHEDULABLE_CONDITION: Final = "Schedulable"

# Largest value of an int32 field; an unlimited subset's quota in the controller.
MAX_INT32: Final = 2**31 - 1

# The most subsets a WorkloadSpread (spec.subsets) or a UnitedDeployment
# (spec.topology.subsets) may have: the CRDs' maxItems and the policies' `max_subsets`
# (tests/validation/test_subset_bound.py keeps the three equal). Why 100:
# docs/operations.md, "Validation cost: the subset bound and the evaluation deadline".
MAX_SUBSETS: Final = 100
