"""How server-side apply merges each part of an object: the list and map types.

Server-side apply (py_engine/sim/apply.py) needs, for every list, whether it is
*atomic* (replaced as a whole and owned as one field), a *set* of scalars, or a
*map* of items identified by key fields; and, for every object, whether it is
granular (each field owned on its own) or *atomic*. Custom resources say so in
their CRD's `openAPIV3Schema` (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
`x-kubernetes-map-type`). For built-in kinds the emulator carries no OpenAPI, so the
annotations Kubernetes' Go types declare (`+listType`, `+listMapKey`, `+mapType`,
`+structType`) are written here in the same schema form, for the kinds the embedded
cluster serves; anything not described is treated as kube-apiserver treats a schema-less
value: objects granular, lists atomic.

Schemas are plain OpenAPI-style dicts, read with `child`, `items`, `list_type`,
`map_keys`, `key_default` and `is_atomic_map`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = Mapping[str, Any]

_ATOMIC: Schema = {"type": "object", "x-kubernetes-map-type": "atomic"}
_SET: Schema = {"type": "array", "x-kubernetes-list-type": "set"}


def _list_map(*keys: str, item: Schema | None = None) -> Schema:
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
        "items": item or {"type": "object"},
    }


def _object(**fields: Schema) -> Schema:
    return {"type": "object", "properties": fields}


OBJECT_META: Schema = _object(finalizers=_SET, ownerReferences=_list_map("uid"))
"""ObjectMeta, for every kind (a CRD's schema never describes metadata)."""

_LABEL_SELECTOR = _ATOMIC  # metav1.LabelSelector is +structType=atomic
_CONDITIONS = _list_map("type")
_KEY_REF = _ATOMIC  # ConfigMapKeySelector, SecretKeySelector, ObjectFieldSelector, ...

_CONTAINER = _object(
    ports=_list_map("containerPort", "protocol", item=_object(protocol={"type": "string", "default": "TCP"})),
    env=_list_map(
        "name",
        item=_object(
            valueFrom=_object(
                fieldRef=_KEY_REF, resourceFieldRef=_KEY_REF, configMapKeyRef=_KEY_REF, secretKeyRef=_KEY_REF
            )
        ),
    ),
    volumeMounts=_list_map("mountPath"),
    volumeDevices=_list_map("devicePath"),
)

_POD_SPEC = _object(
    containers=_list_map("name", item=_CONTAINER),
    initContainers=_list_map("name", item=_CONTAINER),
    ephemeralContainers=_list_map("name", item=_CONTAINER),
    volumes=_list_map("name"),
    imagePullSecrets=_list_map("name", item=_ATOMIC),  # LocalObjectReference is +structType=atomic
    hostAliases=_list_map("ip"),
    topologySpreadConstraints=_list_map(
        "topologyKey", "whenUnsatisfiable", item=_object(labelSelector=_LABEL_SELECTOR)
    ),
    resourceClaims=_list_map("name"),
    schedulingGates=_list_map("name"),
    nodeSelector=_ATOMIC,  # +mapType=atomic
    affinity=_object(nodeAffinity=_object(requiredDuringSchedulingIgnoredDuringExecution=_ATOMIC)),
    # tolerations, readinessGates, podAffinity terms: atomic lists (no list type declared)
)

_POD_TEMPLATE = _object(metadata=OBJECT_META, spec=_POD_SPEC)

_POD_STATUS = _object(
    conditions=_CONDITIONS,
    podIPs=_list_map("ip"),
    hostIPs=_list_map("ip"),
    containerStatuses=_list_map("name"),
    initContainerStatuses=_list_map("name"),
)


def _workload(**spec: Schema) -> Schema:
    return _object(
        metadata=OBJECT_META,
        spec=_object(selector=_LABEL_SELECTOR, template=_POD_TEMPLATE, **spec),
        status=_object(conditions=_CONDITIONS),
    )


_WEBHOOK = _object(namespaceSelector=_LABEL_SELECTOR, objectSelector=_LABEL_SELECTOR)

BUILTIN: dict[str, Schema] = {
    "Pod": _object(metadata=OBJECT_META, spec=_POD_SPEC, status=_POD_STATUS),
    "Deployment": _workload(),
    "ReplicaSet": _workload(),
    "StatefulSet": _workload(),
    "Job": _workload(),
    "Service": _object(
        metadata=OBJECT_META,
        spec=_object(
            ports=_list_map("port", "protocol", item=_object(protocol={"type": "string", "default": "TCP"})),
            selector=_ATOMIC,
        ),
    ),
    "Node": _object(
        metadata=OBJECT_META, status=_object(conditions=_CONDITIONS, addresses=_list_map("type"))
    ),
    "Namespace": _object(metadata=OBJECT_META, status=_object(conditions=_CONDITIONS)),
    "HorizontalPodAutoscaler": _object(
        metadata=OBJECT_META, spec=_object(scaleTargetRef=_ATOMIC), status=_object(conditions=_CONDITIONS)
    ),
    "MutatingWebhookConfiguration": _object(metadata=OBJECT_META, webhooks=_list_map("name", item=_WEBHOOK)),
    "ValidatingWebhookConfiguration": _object(
        metadata=OBJECT_META, webhooks=_list_map("name", item=_WEBHOOK)
    ),
    "CustomResourceDefinition": _object(metadata=OBJECT_META, status=_object(conditions=_CONDITIONS)),
}
_GENERIC: Schema = _object(metadata=OBJECT_META)


def object_schema(kind: str, crd_schema: Schema | None, is_crd: bool) -> Schema:
    """The schema server-side apply walks for one object of `kind`."""
    if not is_crd:
        return BUILTIN.get(kind, _GENERIC)
    props = dict((crd_schema or {}).get("properties") or {})
    props["metadata"] = OBJECT_META
    return {**(crd_schema or {}), "type": "object", "properties": props}


def child(schema: Schema | None, name: str) -> Schema | None:
    """The schema of field `name` of an object (None: not described)."""
    if not schema:
        return None
    props = schema.get("properties")
    if props:
        found = props.get(name)
        if isinstance(found, dict):
            return found
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def items(schema: Schema | None) -> Schema | None:
    found = schema.get("items") if schema else None
    return found if isinstance(found, dict) else None


def list_type(schema: Schema | None) -> str:
    """`atomic` (also for undescribed lists), `set` or `map`."""
    found = schema.get("x-kubernetes-list-type") if schema else None
    return found if found == "set" or found == "map" else "atomic"


def map_keys(schema: Schema | None) -> tuple[str, ...]:
    keys = schema.get("x-kubernetes-list-map-keys") if schema else None
    return tuple(str(k) for k in keys) if isinstance(keys, list) else ()


def key_default(item_schema: Schema | None, key: str) -> Any:
    """The schema default of a list-map key field (kube-apiserver fills a missing key with it)."""
    field = child(item_schema, key)
    return field.get("default") if field else None


def is_atomic_map(schema: Schema | None) -> bool:
    return schema is not None and schema.get("x-kubernetes-map-type") == "atomic"


__all__ = [
    "BUILTIN",
    "OBJECT_META",
    "Schema",
    "child",
    "is_atomic_map",
    "items",
    "key_default",
    "list_type",
    "map_keys",
    "object_schema",
]
