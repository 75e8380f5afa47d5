"""Server-side Tables (py_engine.sim.tables): CRD printer columns and the built-in printers."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from py_engine.assembled_stack import load_crd
from py_engine.sim.interface import ApiError
from py_engine.sim.resources import ResourceDef, builtin_defs, defs_from_crd
from py_engine.sim.tables import go_float, human_duration, to_table, wants_table

pytestmark = pytest.mark.timeout(30)

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
CREATED = (NOW - timedelta(seconds=330)).strftime("%Y-%m-%dT%H:%M:%SZ")


def builtin(kind: str) -> ResourceDef:
    return next(d for d in builtin_defs() if d.kind == kind)


def names(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


def wide(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"] if c["priority"] > 0]


def spread(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "api-zones", "namespace": "default", "creationTimestamp": CREATED},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
            "subsets": [{"name": "a"}, {"name": "b"}],
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (330, "5m30s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 1800, "3h30m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (730 * 86400, "2y"),
        (731 * 86400, "2y1d"),
        (3000 * 86400, "8y"),
    ],
)
def test_human_duration_matches_kubernetes(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(
    ("accept", "want"),
    [
        (
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
            "application/json",
            True,
        ),
        ("application/json;as=Table;v=v1;g=meta.k8s.io", True),
        ("application/json", False),
        (None, False),
        ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", False),
    ],
)
def test_the_accept_header_decides(accept: str | None, want: bool) -> None:
    assert wants_table(accept) is want


def test_crd_columns_come_from_the_product_crd() -> None:
    rd = defs_from_crd(load_crd())[0]
    table = to_table(
        rd, [spread(subsetStatuses=[{"name": "a", "replicas": 2}, {"name": "b", "replicas": 7}])], NOW, "42"
    )
    crd_columns = load_crd()["spec"]["versions"][0]["additionalPrinterColumns"]
    assert names(table) == ["Name", *[c["name"] for c in crd_columns]]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert [c["type"] for c in table["columnDefinitions"][1:]] == [c["type"] for c in crd_columns]
    # First-Subset-Pods is an integer column: the first subset's replicas.
    assert table["rows"][0]["cells"] == ["api-zones", "Deployment", "api", "Adaptive", 30, 2, "5m30s"]
    assert table["metadata"] == {"resourceVersion": "42"}
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_crd_cells_follow_the_column_type() -> None:
    crd = copy.deepcopy(load_crd())
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Str", "type": "string", "jsonPath": ".spec.targetRef"},
        {"name": "Int", "type": "integer", "jsonPath": ".spec.targetRef.name"},
        {
            "name": "Num",
            "type": "number",
            "jsonPath": ".spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
        },
        {"name": "Bool", "type": "boolean", "jsonPath": ".spec.flag"},
        {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
        {"name": "Bad", "type": "string", "jsonPath": ".spec[?(@.x ~ 1)]", "priority": 1},
    ]
    rd = defs_from_crd(crd)[0]
    obj = spread()
    obj["spec"]["flag"] = True
    row = to_table(rd, [obj], NOW, "1")["rows"][0]["cells"]
    assert row == [
        "api-zones",
        '{"apiVersion":"apps/v1","kind":"Deployment","name":"api"}',
        None,
        30.0,
        True,
        None,
        None,
    ]
    table = to_table(rd, [obj], NOW, "1")
    assert wide(table) == ["Bad"]
    assert table["columnDefinitions"][1]["description"] == (
        "Custom resource definition column (in JSONPath format): .spec.targetRef"
    )


def test_a_crd_version_without_columns_gets_age() -> None:
    crd = copy.deepcopy(load_crd())
    del crd["spec"]["versions"][0]["additionalPrinterColumns"]
    table = to_table(defs_from_crd(crd)[0], [spread()], NOW, "1")
    assert names(table) == ["Name", "Age"] and table["rows"][0]["cells"] == ["api-zones", "5m30s"]


def test_include_object_modes() -> None:
    rd = builtin("ConfigMap")
    cm = {"metadata": {"name": "c", "namespace": "default", "creationTimestamp": CREATED}, "data": {"a": "1"}}
    assert to_table(rd, [cm], NOW, "1", "Object")["rows"][0]["object"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        **cm,
    }
    assert to_table(rd, [cm], NOW, "1", "None")["rows"][0]["object"] is None
    assert to_table(rd, [cm], NOW, "1", headers=False)["columnDefinitions"] == []
    with pytest.raises(ApiError) as err:
        to_table(rd, [cm], NOW, "1", "Everything")
    assert err.value.code == 400


def pod(**overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "default", "creationTimestamp": CREATED},
        "spec": {"nodeName": "zone-a-0", "containers": [{"name": "c"}, {"name": "d"}]},
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.244.0.1"}],
            "containerStatuses": [
                {"name": "c", "ready": True, "restartCount": 1, "state": {"running": {}}},
                {
                    "name": "d",
                    "ready": False,
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                },
            ],
        },
    }
    for key, value in overrides.items():
        obj[key] = {**obj[key], **value}
    return obj


def test_pod_columns_and_cells() -> None:
    table = to_table(builtin("Pod"), [pod()], NOW, "1")
    assert names(table) == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    assert wide(table) == ["IP", "Node", "Nominated Node", "Readiness Gates"]
    assert table["rows"][0]["cells"] == [
        "p",
        "1/2",
        "CrashLoopBackOff",
        "3",
        "5m30s",
        "10.244.0.1",
        "zone-a-0",
        "<none>",
        "<none>",
    ]


def test_pod_status_reasons() -> None:
    rd = builtin("Pod")
    pending = {
        "metadata": {"name": "q", "creationTimestamp": CREATED},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }
    assert to_table(rd, [pending], NOW, "1")["rows"][0]["cells"][:6] == [
        "q",
        "0/1",
        "Pending",
        "0",
        "5m30s",
        "<none>",
    ]
    terminating = pod(metadata={"deletionTimestamp": CREATED})
    assert to_table(rd, [terminating], NOW, "1")["rows"][0]["cells"][2] == "Terminating"
    init = pod(
        spec={"initContainers": [{"name": "i"}]},
        status={"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"running": {}}}]},
    )
    assert to_table(rd, [init], NOW, "1")["rows"][0]["cells"][2] == "Init:0/1"
    done = pod(
        status={
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
            ],
        }
    )
    row = to_table(rd, [done], NOW, "1")["rows"][0]
    assert row["cells"][2] == "Completed" and row["conditions"][0]["type"] == "Completed"
    restarted = pod()
    restarted["status"]["containerStatuses"][1]["lastState"] = {"terminated": {"finishedAt": CREATED}}
    assert to_table(rd, [restarted], NOW, "1")["rows"][0]["cells"][3] == "3 (5m30s ago)"
    gated = pod(
        spec={"readinessGates": [{"conditionType": "x"}, {"conditionType": "y"}]},
        status={"conditions": [{"type": "x", "status": "True"}]},
    )
    assert to_table(rd, [gated], NOW, "1")["rows"][0]["cells"][-1] == "1/2"


def test_node_columns_and_cells() -> None:
    node = {
        "metadata": {
            "name": "n",
            "creationTimestamp": CREATED,
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.30.0", "containerRuntimeVersion": "sim://1.0"},
        },
    }
    table = to_table(builtin("Node"), [node], NOW, "1")
    assert names(table) == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "Internal-IP",
        "External-IP",
        "OS-Image",
        "Kernel-Version",
        "Container-Runtime",
    ]
    assert table["rows"][0]["cells"] == [
        "n",
        "Ready,SchedulingDisabled",
        "control-plane,edge",
        "5m30s",
        "v1.30.0",
        "10.0.0.1",
        "<none>",
        "<unknown>",
        "<unknown>",
        "sim://1.0",
    ]
    no_status = {"metadata": {"name": "m"}}
    assert to_table(builtin("Node"), [no_status], NOW, "1")["rows"][0]["cells"][1:4] == [
        "Unknown",
        "<none>",
        "<unknown>",
    ]


def test_workload_columns() -> None:
    spec = {
        "replicas": 3,
        "selector": {
            "matchLabels": {"app": "x"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        },
        "template": {
            "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "s", "image": "busybox"}]}
        },
    }
    meta = {"name": "x", "creationTimestamp": CREATED}
    deploy = {
        "metadata": meta,
        "spec": spec,
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
    table = to_table(builtin("Deployment"), [deploy], NOW, "1")
    assert names(table) == [
        "Name",
        "Ready",
        "Up-to-date",
        "Available",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    assert table["rows"][0]["cells"] == [
        "x",
        "2/3",
        3,
        2,
        "5m30s",
        "c,s",
        "nginx,busybox",
        "app=x,tier in (a,b)",
    ]
    rs = {"metadata": meta, "spec": spec, "status": {"replicas": 3, "readyReplicas": 1}}
    table = to_table(builtin("ReplicaSet"), [rs], NOW, "1")
    assert names(table)[:5] == ["Name", "Desired", "Current", "Ready", "Age"]
    assert table["rows"][0]["cells"][:5] == ["x", 3, 3, 1, "5m30s"]
    sts = to_table(builtin("StatefulSet"), [rs], NOW, "1")
    assert (
        names(sts) == ["Name", "Ready", "Age", "Containers", "Images"] and sts["rows"][0]["cells"][1] == "1/3"
    )
    job = {
        "metadata": meta,
        "spec": {"completions": 2, **spec},
        "status": {"succeeded": 1, "startTime": CREATED},
    }
    jobs = to_table(builtin("Job"), [job], NOW, "1")
    assert jobs["rows"][0]["cells"][:4] == ["x", "1/2", "5m30s", "5m30s"]


def test_other_kinds() -> None:
    ns = {"metadata": {"name": "default", "creationTimestamp": CREATED}, "status": {"phase": "Active"}}
    table = to_table(builtin("Namespace"), [ns], NOW, "1")
    assert names(table) == ["Name", "Status", "Age"] and table["rows"][0]["cells"] == [
        "default",
        "Active",
        "5m30s",
    ]
    lease = {"metadata": {"name": "l", "creationTimestamp": CREATED}, "spec": {"holderIdentity": "me"}}
    assert to_table(builtin("Lease"), [lease], NOW, "1")["rows"][0]["cells"] == ["l", "me", "5m30s"]
    secret = {"metadata": {"name": "s"}}
    table = to_table(builtin("Secret"), [secret], NOW, "1")
    assert names(table) == ["Name", "Age"] and table["rows"][0]["cells"] == ["s", "<unknown>"]
    assert to_table(builtin("Secret"), [], NOW, "7") == {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "7"},
        "columnDefinitions": table["columnDefinitions"],
        "rows": [],
    }


def test_service_columns() -> None:
    svc = {
        "metadata": {"name": "web", "creationTimestamp": CREATED},
        "spec": {
            "type": "NodePort",
            "clusterIPs": ["10.96.0.10"],
            "selector": {"app": "web"},
            "ports": [{"port": 80, "nodePort": 30080}, {"port": 53, "protocol": "UDP"}],
        },
    }
    table = to_table(builtin("Service"), [svc], NOW, "1")
    assert names(table) == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert table["rows"][0]["cells"] == [
        "web",
        "NodePort",
        "10.96.0.10",
        "<none>",
        "80:30080/TCP,53/UDP",
        "5m30s",
        "app=web",
    ]
    lb = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}}
    assert to_table(builtin("Service"), [lb], NOW, "1")["rows"][0]["cells"][1:5] == [
        "LoadBalancer",
        "<none>",
        "<pending>",
        "<none>",
    ]


def test_event_columns_have_the_name_last() -> None:
    event = {
        "metadata": {"name": "web.17a", "creationTimestamp": CREATED},
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": " 0/3 nodes are available. ",
        "involvedObject": {"kind": "Pod", "name": "web-1"},
        "source": {"component": "default-scheduler"},
        "firstTimestamp": CREATED,
        "lastTimestamp": (NOW - timedelta(seconds=20)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "count": 4,
    }
    table = to_table(builtin("Event"), [event], NOW, "1")
    assert names(table) == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ]
    assert wide(table) == ["Subobject", "Source", "First Seen", "Count", "Name"]
    assert table["rows"][0]["cells"] == [
        "20s",
        "Warning",
        "FailedScheduling",
        "pod/web-1",
        "",
        "default-scheduler",
        "0/3 nodes are available.",
        "5m30s",
        4,
        "web.17a",
    ]
    new_api = {
        "metadata": {"name": "e"},
        "eventTime": CREATED,
        "reportingComponent": "spreadgate",
        "reportingInstance": "c-1",
        "involvedObject": {"kind": "WorkloadSpread"},
    }
    cells = to_table(builtin("Event"), [new_api], NOW, "1")["rows"][0]["cells"]
    assert (
        cells[0] == "5m30s"
        and cells[3] == "workloadspread"
        and cells[5] == "spreadgate, c-1"
        and cells[8] == 1
    )


@pytest.mark.parametrize(
    ("column", "field", "reason"),
    [
        ({"name": "X", "type": "text", "jsonPath": ".spec.a"}, "type", "FieldValueNotSupported"),
        ({"name": "X", "type": "string", "jsonPath": "spec.a"}, "jsonPath", "FieldValueInvalid"),
        ({"name": "X", "type": "string", "jsonPath": ".spec[?(@.a ~ 1)]"}, "jsonPath", "FieldValueInvalid"),
        (
            {"name": "X", "type": "string", "format": "colour", "jsonPath": ".spec.a"},
            "format",
            "FieldValueNotSupported",
        ),
        ({"type": "string", "jsonPath": ".spec.a"}, "name", "FieldValueRequired"),
    ],
)
def test_a_crd_with_a_bad_printer_column_is_refused(column: dict[str, Any], field: str, reason: str) -> None:
    from py_engine.sim.apiserver import ApiServer

    crd = copy.deepcopy(load_crd())
    crd["spec"]["versions"][0]["additionalPrinterColumns"].append(column)
    api = ApiServer()
    try:
        with pytest.raises(ApiError) as err:
            api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, crd)
        assert err.value.code == 422
        cause = err.value.status["details"]["causes"][0]
        assert cause["field"] == f"spec.versions[0].additionalPrinterColumns[6].{field}"
        assert cause["reason"] == reason
        api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, load_crd())
    finally:
        api.close()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0, "2"),
        (1.5, "1.5"),
        (1e6, "1e+06"),
        (123456789.0, "1.23456789e+08"),
        (100000.0, "100000"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5, "-2.5"),
        (1234567.5, "1.2345675e+06"),
        (0.0, "0"),
    ],
)
def test_string_columns_print_floats_as_go_does(value: float, text: str) -> None:
    assert go_float(value) == text
    crd = copy.deepcopy(load_crd())
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "V", "type": "string", "jsonPath": ".spec.v"}
    ]
    obj = spread()
    obj["spec"]["v"] = value
    assert to_table(defs_from_crd(crd)[0], [obj], NOW, "1")["rows"][0]["cells"] == ["api-zones", text]
