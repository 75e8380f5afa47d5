"""OpenAPI v3 documents and Table responses over HTTPS (py_engine.sim.openapi, py_engine.sim.tables)."""

from __future__ import annotations

import copy
import json
from typing import Any

import cluster_fixtures
import pytest
import urllib3

from py_engine.assembled_stack import load_crd
from py_engine.sim.apiserver import ApiServer

pytestmark = pytest.mark.timeout(60)

CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"
SPREADS = "spreadgate.dev/v1alpha1/workloadspreads"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
GV = "apis/spreadgate.dev/v1alpha1"
SCHEMA = "dev.spreadgate.v1alpha1.WorkloadSpread"


http = cluster_fixtures.admin_http  # the fixture, under the name the tests use


def get(
    pool: urllib3.HTTPSConnectionPool, path: str, accept: str = "application/json"
) -> tuple[int, str, Any]:
    resp = pool.request("GET", path, headers={"Accept": accept})
    return resp.status, str(resp.headers.get("Content-Type")), json.loads(resp.data)


def spread(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "subsets": [{"name": "a", "maxReplicas": 1}, {"name": "b"}],
        },
    }


def test_crd_schema_is_published_for_explain(apiserver: ApiServer, http: urllib3.HTTPSConnectionPool) -> None:
    status, _, root = get(http, "/openapi/v3")
    assert status == 200 and GV not in root["paths"]
    apiserver.create(CRDS, None, load_crd())
    root = get(http, "/openapi/v3")[2]
    url = root["paths"][GV]["serverRelativeURL"]
    assert url.startswith(f"/{GV}?hash=".replace("/apis", "/openapi/v3/apis"))
    doc = get(http, url)[2]
    schema = doc["components"]["schemas"][SCHEMA]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "spreadgate.dev", "version": "v1alpha1", "kind": "WorkloadSpread"}
    ]
    published = load_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"] == published["properties"]["spec"]
    ref = schema["properties"]["metadata"]["allOf"][0]["$ref"]
    assert ref.removeprefix("#/components/schemas/") in doc["components"]["schemas"]
    assert schema["properties"]["kind"]["description"]
    item = "/apis/spreadgate.dev/v1alpha1/namespaces/{namespace}/workloadspreads/{name}"
    assert doc["paths"][item]["patch"]["parameters"][0]["name"] == "fieldValidation"
    # The document's URL changes when the CRD does, so clients caching by URL see the change.
    crd = apiserver.get(CRDS, None, "workloadspreads.spreadgate.dev")
    crd = copy.deepcopy(crd)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "changed"
    apiserver.update(CRDS, None, "workloadspreads.spreadgate.dev", crd)
    again = get(http, "/openapi/v3")[2]["paths"][GV]["serverRelativeURL"]
    assert again != url
    assert get(http, again)[2]["components"]["schemas"][SCHEMA]["description"] == "changed"
    # Built-in group/versions carry no schemas; OpenAPI v2 is not served.
    assert get(http, get(http, "/openapi/v3")[2]["paths"]["api/v1"]["serverRelativeURL"])[2][
        "components"
    ] == {"schemas": {}}
    assert get(http, "/openapi/v2")[0] == 404


def test_custom_resources_list_and_get_as_tables(
    apiserver: ApiServer, http: urllib3.HTTPSConnectionPool
) -> None:
    apiserver.create(CRDS, None, load_crd())
    apiserver.create(SPREADS, "default", spread("s1"))
    apiserver.patch(
        SPREADS,
        "default",
        "s1",
        {"status": {"subsetStatuses": [{"name": "a", "replicas": 1, "missingReplicas": 1}]}},
        "merge",
        subresource="status",
    )
    status, ctype, table = get(
        http, "/apis/spreadgate.dev/v1alpha1/namespaces/default/workloadspreads", TABLE
    )
    assert status == 200 and ctype == TABLE and table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:3] == ["Name", "Workload-Kind", "Workload"]
    assert table["rows"][0]["cells"][:3] == ["s1", "Deployment", "api"]
    assert table["rows"][0]["cells"][5] == 1  # First-Subset-Pods is an integer column
    one = get(
        http,
        "/apis/spreadgate.dev/v1alpha1/namespaces/default/workloadspreads/s1?includeObject=Object",
        TABLE,
    )[2]
    assert one["rows"][0]["object"]["spec"]["subsets"][0]["name"] == "a"
    assert (
        get(http, "/apis/spreadgate.dev/v1alpha1/namespaces/default/workloadspreads", "application/json")[2][
            "kind"
        ]
        == "WorkloadSpreadList"
    )
    bad = get(http, "/apis/spreadgate.dev/v1alpha1/workloadspreads?includeObject=All", TABLE)
    assert bad[0] == 400 and bad[2]["reason"] == "BadRequest"


def test_watch_as_table_sends_columns_once(apiserver: ApiServer, http: urllib3.HTTPSConnectionPool) -> None:
    apiserver.create("v1/configmaps", "default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    apiserver.create("v1/configmaps", "default", {"metadata": {"name": "b"}})
    resp = http.request(
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
        headers={"Accept": TABLE},
        preload_content=False,
    )
    try:
        assert resp.status == 200
        events = [json.loads(line) for line in resp.data.splitlines() if line.strip()]
    finally:
        resp.release_conn()
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    assert [c["name"] for c in events[0]["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert events[1]["object"]["columnDefinitions"] == []
    assert [e["object"]["rows"][0]["cells"][:2] for e in events] == [["a", 1], ["b", 0]]
