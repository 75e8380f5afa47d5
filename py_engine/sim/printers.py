"""kube-apiserver's printers for built-in kinds: the columns and cells of their Tables.

Pods, nodes, namespaces, deployments, replicasets, statefulsets, jobs,
services, events, configmaps and leases get the columns kube-apiserver's
printers declare, wide ones (`priority: 1`) included, and cells computed the
same way (a pod's STATUS from its init and app container states, a node's
roles from its labels, ...). Every other built-in kind gets `Name` and `Age`.
`py_engine.sim.tables` assembles the Table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from py_engine.semantics import objects
from py_engine.semantics.timeutil import TimestampError, parse_time
from py_engine.sim.interface import JSON

__all__ = ["AGE_DESC", "NAME_DESC", "Printer", "builtin_columns", "human_duration"]

NAME_DESC = "Name must be unique within a namespace."
AGE_DESC = "CreationTimestamp is a timestamp representing the server time when this object was created."

Column = tuple[str, str, int, str]
"""(name, type, priority, description)."""

Printer = Callable[[JSON, datetime], list[Any]]


# ------------------------------------------------------------------- time


def human_duration(seconds: float) -> str:
    """kube's `duration.HumanDuration`: ~2-3 significant figures."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _since(ts: Any, now: datetime) -> str:
    if not isinstance(ts, str) or not ts:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(ts)).total_seconds())
    except TimestampError:
        return "<invalid>"


def _dict(obj: Mapping[str, Any], key: str) -> JSON:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ------------------------------------------------------------ built-in kinds


def _finished(status: JSON) -> str:
    """When the container last terminated (`lastState.terminated.finishedAt`), "" when never.

    RFC 3339 UTC timestamps of one format compare as strings."""
    value = _dict(_dict(status, "lastState"), "terminated").get("finishedAt")
    return value if isinstance(value, str) else ""


def _pod(obj: JSON, now: datetime) -> list[Any]:
    meta, spec, status = objects.meta(obj), _dict(obj, "spec"), _dict(obj, "status")
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for cond in _list(status, "conditions"):
        if (
            isinstance(cond, dict)
            and cond.get("type") == "PodScheduled"
            and cond.get("reason") == "SchedulingGated"
        ):
            reason = "SchedulingGated"
    containers = _list(spec, "containers")
    init_specs = {c.get("name"): c for c in _list(spec, "initContainers") if isinstance(c, dict)}
    sidecars = {n for n, c in init_specs.items() if c.get("restartPolicy") == "Always"}
    total = len(containers) + len(sidecars)
    ready = restarts = sidecar_restarts = 0
    last_restart: str = ""
    sidecar_last_restart: str = ""
    initializing = False
    init_statuses = [c for c in _list(status, "initContainerStatuses") if isinstance(c, dict)]
    for i, cs in enumerate(init_statuses):
        state = _dict(cs, "state")
        term, waiting = _dict(state, "terminated"), _dict(state, "waiting")
        restarts += _int(cs.get("restartCount"))
        last_restart = max(last_restart, _finished(cs))
        if cs.get("name") in sidecars:
            sidecar_restarts += _int(cs.get("restartCount"))
            sidecar_last_restart = max(sidecar_last_restart, _finished(cs))
        if state.get("terminated") is not None and _int(term.get("exitCode")) == 0:
            continue
        if cs.get("name") in sidecars and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if state.get("terminated") is not None:
            if term.get("reason"):
                reason = f"Init:{term['reason']}"
            elif _int(term.get("signal")):
                reason = f"Init:Signal:{_int(term.get('signal'))}"
            else:
                reason = f"Init:ExitCode:{_int(term.get('exitCode'))}"
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    initialized = any(
        isinstance(c, dict) and c.get("type") == "Initialized" and c.get("status") == "True"
        for c in _list(status, "conditions")
    )
    if not initializing or initialized:
        restarts, last_restart = sidecar_restarts, sidecar_last_restart
        has_running = False
        for cs in reversed([c for c in _list(status, "containerStatuses") if isinstance(c, dict)]):
            state = _dict(cs, "state")
            term, waiting = _dict(state, "terminated"), _dict(state, "waiting")
            restarts += _int(cs.get("restartCount"))
            last_restart = max(last_restart, _finished(cs))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif state.get("terminated") is not None and term.get("reason"):
                reason = str(term["reason"])
            elif state.get("terminated") is not None:
                sig = _int(term.get("signal"))
                reason = f"Signal:{sig}" if sig else f"ExitCode:{_int(term.get('exitCode'))}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(
                isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                for c in _list(status, "conditions")
            )
            reason = "Running" if pod_ready else "NotReady"
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    ips = [p.get("ip") for p in _list(status, "podIPs") if isinstance(p, dict) and p.get("ip")]
    gates = _list(spec, "readinessGates")
    gates_cell = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in _list(status, "conditions") if isinstance(c, dict)}
        true = sum(1 for g in gates if isinstance(g, dict) and conds.get(g.get("conditionType")) == "True")
        gates_cell = f"{true}/{len(gates)}"
    restarts_cell = str(restarts)
    if restarts and last_restart:
        restarts_cell = f"{restarts} ({_since(last_restart, now)} ago)"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        _since(meta.get("creationTimestamp"), now),
        ips[0] if ips else "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_cell,
    ]


_POD_COLUMNS: list[Column] = [
    ("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
    ("Status", "string", 0, "The aggregate status of the containers in this pod."),
    ("Restarts", "string", 0, "The number of times the containers in this pod have been restarted."),
    ("Age", "string", 0, AGE_DESC),
    ("IP", "string", 1, "IP address allocated to the pod. Routable at least within the cluster."),
    ("Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."),
    (
        "Nominated Node",
        "string",
        1,
        "nominatedNodeName is set only when this pod preempts other pods on the node.",
    ),
    (
        "Readiness Gates",
        "string",
        1,
        "If specified, all readiness gates will be evaluated for pod readiness.",
    ),
]


def _node(obj: JSON, now: datetime) -> list[Any]:
    meta, spec, status = objects.meta(obj), _dict(obj, "spec"), _dict(obj, "status")
    ready = next(
        (c for c in _list(status, "conditions") if isinstance(c, dict) and c.get("type") == "Ready"), None
    )
    states = ["Unknown"] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    labels = _dict(meta, "labels")
    roles = sorted(
        {k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k}
        | ({str(labels["kubernetes.io/role"])} if labels.get("kubernetes.io/role") else set())
    )
    info = _dict(status, "nodeInfo")

    def address(kind: str) -> str:
        return next(
            (
                str(a.get("address"))
                for a in _list(status, "addresses")
                if isinstance(a, dict) and a.get("type") == kind
            ),
            "<none>",
        )

    return [
        meta.get("name", ""),
        ",".join(states),
        ",".join(roles) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        str(info.get("kubeletVersion") or ""),
        address("InternalIP"),
        address("ExternalIP"),
        str(info.get("osImage") or "<unknown>"),
        str(info.get("kernelVersion") or "<unknown>"),
        str(info.get("containerRuntimeVersion") or "<unknown>"),
    ]


_NODE_COLUMNS: list[Column] = [
    ("Status", "string", 0, "The status of the node"),
    ("Roles", "string", 0, "The roles of the node"),
    ("Age", "string", 0, AGE_DESC),
    ("Version", "string", 0, "Kubelet Version reported by the node."),
    ("Internal-IP", "string", 1, "List of addresses reachable to the node."),
    ("External-IP", "string", 1, "List of addresses reachable to the node."),
    (
        "OS-Image",
        "string",
        1,
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    ),
    ("Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r'."),
    ("Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node."),
]


def _template_cells(spec: JSON) -> list[str]:
    pod_spec = _dict(_dict(spec, "template"), "spec")
    containers = [c for c in _list(pod_spec, "containers") if isinstance(c, dict)]
    return [
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    ]


def _selector(spec: JSON) -> str:
    """`metav1.FormatLabelSelector`: `<none>` for nil, `<none>` for empty too (as the printer does)."""
    sel = _dict(spec, "selector")
    parts = [f"{k}={v}" for k, v in sorted(_dict(sel, "matchLabels").items())]
    for expr in _list(sel, "matchExpressions"):
        if not isinstance(expr, dict):
            continue
        key, op, values = expr.get("key"), expr.get("operator"), ",".join(map(str, _list(expr, "values")))
        parts.append(
            {
                "In": f"{key} in ({values})",
                "NotIn": f"{key} notin ({values})",
                "Exists": f"{key}",
                "DoesNotExist": f"!{key}",
            }.get(str(op), f"{key} {op} ({values})")
        )
    return ",".join(parts) or "<none>"


_TEMPLATE_COLUMNS: list[Column] = [
    ("Containers", "string", 1, "Names of each container in the template."),
    ("Images", "string", 1, "Images referenced by each container in the template."),
]
"""The wide columns of every kind with a pod template (`_template_cells`)."""


def _desired(spec: JSON) -> int:
    """`spec.replicas`, 1 when unset (the API default the printers assume)."""
    return _int(spec.get("replicas")) if "replicas" in spec else 1


WorkloadCells = Callable[[JSON, JSON, datetime], list[Any]]
"""The kind's own cells of a workload's row, from its spec and status at `now`."""


def _workload(cells: WorkloadCells, *, selector: bool) -> Printer:
    """A workload's row as kube's printers lay it out: `Name`, the kind's own cells, `Age`,
    the template's containers and images, and (for most kinds) the selector."""

    def printer(obj: JSON, now: datetime) -> list[Any]:
        meta, spec, status = objects.meta(obj), _dict(obj, "spec"), _dict(obj, "status")
        row = [meta.get("name", ""), *cells(spec, status, now), _since(meta.get("creationTimestamp"), now)]
        row += _template_cells(spec)
        if selector:
            row.append(_selector(spec))
        return row

    return printer


def _ready_of_desired(spec: JSON, status: JSON) -> str:
    return f"{_int(status.get('readyReplicas'))}/{_desired(spec)}"


_deployment = _workload(
    lambda spec, status, _now: [
        _ready_of_desired(spec, status),
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
    ],
    selector=True,
)


_DEPLOYMENT_COLUMNS: list[Column] = [
    ("Ready", "string", 0, "Number of the pod with ready state"),
    (
        "Up-to-date",
        "string",
        0,
        "Total number of non-terminated pods targeted by this deployment "
        "that have the desired template spec.",
    ),
    (
        "Available",
        "string",
        0,
        "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    ("Age", "string", 0, AGE_DESC),
    *_TEMPLATE_COLUMNS,
    ("Selector", "string", 1, "Label selector for pods."),
]


_replicaset = _workload(
    lambda spec, status, _now: [
        _desired(spec),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
    ],
    selector=True,
)


_REPLICASET_COLUMNS: list[Column] = [
    ("Desired", "integer", 0, "Number of desired pods."),
    ("Current", "integer", 0, "Replicas is the most recently observed number of replicas."),
    ("Ready", "integer", 0, "The number of ready replicas for this replica set."),
    ("Age", "string", 0, AGE_DESC),
    *_TEMPLATE_COLUMNS,
    ("Selector", "string", 1, "Selector is a label query over pods that should match the replica count."),
]


_statefulset = _workload(lambda spec, status, _now: [_ready_of_desired(spec, status)], selector=False)


_STATEFULSET_COLUMNS: list[Column] = [
    ("Ready", "string", 0, "Number of the pod with ready state"),
    ("Age", "string", 0, AGE_DESC),
    *_TEMPLATE_COLUMNS,
]


def _job_cells(spec: JSON, status: JSON, now: datetime) -> list[Any]:
    """`Completions` and `Duration`."""
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    else:
        parallelism = _int(spec.get("parallelism")) if "parallelism" in spec else 1
        completions = f"{succeeded}/1" if parallelism <= 1 else f"{succeeded}/1 of {parallelism}"
    start, done = status.get("startTime"), status.get("completionTime")
    duration = ""
    if isinstance(start, str):
        try:
            end = parse_time(done) if isinstance(done, str) else now
            duration = human_duration((end - parse_time(start)).total_seconds())
        except TimestampError:
            duration = "<invalid>"
    return [completions, duration]


_job = _workload(_job_cells, selector=True)


_JOB_COLUMNS: list[Column] = [
    (
        "Completions",
        "string",
        0,
        "The desired number of successfully finished pods the job should be run with.",
    ),
    ("Duration", "string", 0, "Time required to complete the job."),
    ("Age", "string", 0, AGE_DESC),
    *_TEMPLATE_COLUMNS,
    ("Selector", "string", 1, "A label query over pods that should match the pod count."),
]


def _one_cell(cell: Callable[[JSON], Any]) -> Printer:
    """A printer of `Name`, one cell of the object, `Age` (namespaces, config maps, leases)."""

    def printer(obj: JSON, now: datetime) -> list[Any]:
        meta = objects.meta(obj)
        return [meta.get("name", ""), cell(obj), _since(meta.get("creationTimestamp"), now)]

    return printer


_namespace = _one_cell(lambda obj: str(_dict(obj, "status").get("phase") or ""))
_configmap = _one_cell(lambda obj: len(_dict(obj, "data")) + len(_dict(obj, "binaryData")))
_lease = _one_cell(lambda obj: str(_dict(obj, "spec").get("holderIdentity") or ""))


def _service(obj: JSON, now: datetime) -> list[Any]:
    meta, spec, status = objects.meta(obj), _dict(obj, "spec"), _dict(obj, "status")
    kind = str(spec.get("type") or "")
    cluster_ips = [str(ip) for ip in _list(spec, "clusterIPs")]
    external = [str(ip) for ip in _list(spec, "externalIPs")]
    if kind == "LoadBalancer":
        ingress = [
            str(i.get("ip") or i.get("hostname") or "")
            for i in _list(_dict(status, "loadBalancer"), "ingress")
            if isinstance(i, dict)
        ]
        external_cell = ",".join([i for i in ingress if i] + external) or "<pending>"
    elif kind == "ExternalName":
        external_cell = str(spec.get("externalName") or "")
    else:
        external_cell = ",".join(external) or "<none>"
    ports = []
    for port in _list(spec, "ports"):
        if not isinstance(port, dict):
            continue
        protocol = port.get("protocol") or "TCP"
        node_port = _int(port.get("nodePort"))
        ports.append(
            f"{_int(port.get('port'))}:{node_port}/{protocol}"
            if node_port
            else f"{_int(port.get('port'))}/{protocol}"
        )
    selector = ",".join(f"{k}={v}" for k, v in sorted(_dict(spec, "selector").items())) or "<none>"
    return [
        meta.get("name", ""),
        kind,
        cluster_ips[0] if cluster_ips else "<none>",
        external_cell,
        ",".join(ports) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        selector,
    ]


_SERVICE_COLUMNS: list[Column] = [
    ("Type", "string", 0, "type determines how the Service is exposed."),
    ("Cluster-IP", "string", 0, "clusterIP is the IP address of the service."),
    (
        "External-IP",
        "string",
        0,
        "externalIPs is a list of IP addresses for which nodes in the cluster will "
        "also accept traffic for this service.",
    ),
    ("Port(s)", "string", 0, "The list of ports that are exposed by this service."),
    ("Age", "string", 0, AGE_DESC),
    (
        "Selector",
        "string",
        1,
        "Route service traffic to pods with label keys and values matching this selector.",
    ),
]


def _event(obj: JSON, now: datetime) -> list[Any]:
    meta, involved, source = objects.meta(obj), _dict(obj, "involvedObject"), _dict(obj, "source")
    first = _since(obj.get("firstTimestamp") or obj.get("eventTime"), now)
    last = _since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = _int(obj.get("count")) or 1
    series = _dict(obj, "series")
    if series:
        last, count = _since(series.get("lastObservedTime"), now), _int(series.get("count"))
    kind, name = str(involved.get("kind") or "").lower(), involved.get("name")
    if source.get("component"):
        origin = ", ".join(str(x) for x in (source.get("component"), source.get("host")) if x)
    else:
        origin = ", ".join(str(x) for x in (obj.get("reportingComponent"), obj.get("reportingInstance")) if x)
    return [
        last,
        str(obj.get("type") or ""),
        str(obj.get("reason") or ""),
        f"{kind}/{name}" if name else kind,
        str(involved.get("fieldPath") or ""),
        origin,
        str(obj.get("message") or "").strip(),
        first,
        count,
        meta.get("name", ""),
    ]


_EVENT_COLUMNS: list[JSON] = [
    {"name": n, "type": t, "format": f, "description": d, "priority": p}
    for n, t, f, p, d in [
        (
            "Last Seen",
            "string",
            "",
            0,
            "The time at which the most recent occurrence of this event was recorded.",
        ),
        (
            "Type",
            "string",
            "",
            0,
            "Type of this event (Normal, Warning), new types could be added in the future",
        ),
        (
            "Reason",
            "string",
            "",
            0,
            "This should be a short, machine understandable string that gives the reason "
            "for the transition into the object's current status.",
        ),
        ("Object", "string", "", 0, "The object that this event is about."),
        ("Subobject", "string", "", 1, "If the object reference is to a part of an object, the path to it."),
        ("Source", "string", "", 1, "The component reporting this event."),
        ("Message", "string", "", 0, "A human-readable description of the status of this operation."),
        ("First Seen", "string", "", 1, "The time at which the event was first recorded."),
        ("Count", "string", "", 1, "The number of times this event has occurred."),
        ("Name", "string", "name", 1, NAME_DESC),
    ]
]


def _generic(obj: JSON, now: datetime) -> list[Any]:
    meta = objects.meta(obj)
    return [meta.get("name", ""), _since(meta.get("creationTimestamp"), now)]


_AGE: list[Column] = [("Age", "string", 0, AGE_DESC)]

_BUILTIN: dict[tuple[str, str], tuple[list[Column], Printer]] = {
    ("", "Pod"): (_POD_COLUMNS, _pod),
    ("", "Node"): (_NODE_COLUMNS, _node),
    ("", "Namespace"): ([("Status", "string", 0, "The status of the namespace"), *_AGE], _namespace),
    ("", "ConfigMap"): ([("Data", "string", 0, "Data contains the configuration data."), *_AGE], _configmap),
    ("apps", "Deployment"): (_DEPLOYMENT_COLUMNS, _deployment),
    ("apps", "ReplicaSet"): (_REPLICASET_COLUMNS, _replicaset),
    ("apps", "StatefulSet"): (_STATEFULSET_COLUMNS, _statefulset),
    ("batch", "Job"): (_JOB_COLUMNS, _job),
    ("coordination.k8s.io", "Lease"): ([("Holder", "string", 0, "The holder of the lease"), *_AGE], _lease),
    ("", "Service"): (_SERVICE_COLUMNS, _service),
}


def builtin_columns(group: str, kind: str) -> tuple[list[JSON], Printer]:
    """The column definitions and the row printer of a built-in kind."""
    if (group, kind) == ("", "Event"):
        return _EVENT_COLUMNS, _event  # the one built-in table whose name is a wide column, not the first
    columns, printer = _BUILTIN.get((group, kind), (_AGE, _generic))
    defs: list[JSON] = [
        {"name": "Name", "type": "string", "format": "name", "description": NAME_DESC, "priority": 0}
    ]
    defs += [{"name": n, "type": t, "format": "", "description": d, "priority": p} for n, t, p, d in columns]
    return defs, printer
