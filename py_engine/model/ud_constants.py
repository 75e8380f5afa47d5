"""Names and keys of the UnitedDeployment API, Spreadgate's and Kruise's.

Spreadgate writes its own `spreadgate.dev/...` keys; Kruise's `apps.kruise.io/...`
keys are read as well so workloads and pods a Kruise controller created are
recognised after a migration (docs/uniteddeployment.md, "Adoption from Kruise").
"""

from __future__ import annotations

from typing import Final

from py_engine.model.constants import GROUP, KRUISE_GROUP

UD_VERSION: Final = "v1beta1"
UD_ALPHA_VERSION: Final = "v1alpha1"
UD_API_VERSION: Final = f"{GROUP}/{UD_VERSION}"
UD_KIND: Final = "UnitedDeployment"
UD_PLURAL: Final = "uniteddeployments"
UD_SHORT_NAME: Final = "sgud"
UD_GROUPS: Final = frozenset({GROUP, KRUISE_GROUP})
UD_VERSIONS: Final = frozenset({UD_VERSION, UD_ALPHA_VERSION})

# Label on subset workloads, their selector and their pod template: the subset name.
SUBSET_NAME_LABEL: Final = f"{GROUP}/subset-name"
KRUISE_SUBSET_NAME_LABEL: Final = f"{KRUISE_GROUP}/subset-name"
# Label on subset workloads and pod templates: the full ControllerRevision name.
REVISION_LABEL: Final = f"{GROUP}/controller-revision-hash"
KRUISE_REVISION_LABEL: Final = f"{KRUISE_GROUP}/controller-revision-hash"
# Annotation on subset workloads: the subset's raw patch JSON ("" without a patch).
SUBSET_PATCH_ANNOTATION: Final = f"{GROUP}/subset-patch"
KRUISE_SUBSET_PATCH_ANNOTATION: Final = f"{KRUISE_GROUP}/subset-patch"
# Pod label of reservation mode: "true" while a pod is reserved, else "false".
RESERVED_POD_LABEL: Final = f"{GROUP}/united-deployment-reserved-pod"
KRUISE_RESERVED_POD_LABEL: Final = f"{KRUISE_GROUP}/united-deployment-reserved-pod"
# Annotation on subset workloads: the template label/annotation keys applied last time,
# so keys removed from the template are removed from the workload (a Kruise quirk fixed).
TEMPLATE_KEYS_ANNOTATION: Final = f"{GROUP}/template-metadata-keys"
# Annotation on subset workloads: the name of the UnitedDeployment that created them, so an
# orphan (its owner deleted with --cascade=orphan) is adopted only by a UnitedDeployment it names.
CREATED_BY_ANNOTATION: Final = f"{GROUP}/united-deployment"
# ControllerRevision label holding the hash part of the revision name.
REVISION_HASH_LABEL: Final = "controller.kubernetes.io/hash"

DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
DEFAULT_RESCHEDULE_CRITICAL_SECONDS: Final = 30
DEFAULT_UNSCHEDULABLE_DURATION_SECONDS: Final = 300
MAX_INT32: Final = 2**31 - 1

# Template key -> (subset workload apiVersion, kind), in Kruise's priority order.
TEMPLATE_KINDS: Final = (
    ("statefulSetTemplate", "apps/v1", "StatefulSet"),
    ("advancedStatefulSetTemplate", f"{KRUISE_GROUP}/v1beta1", "StatefulSet"),
    ("cloneSetTemplate", f"{KRUISE_GROUP}/v1beta1", "CloneSet"),
    ("deploymentTemplate", "apps/v1", "Deployment"),
)
