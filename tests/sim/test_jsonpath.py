"""The JSONPath dialect of CRD printer columns (py_engine.sim.jsonpath)."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.sim.jsonpath import JsonPathError, compile_path, evaluate

pytestmark = pytest.mark.timeout(30)

OBJ: dict[str, Any] = {
    "metadata": {"name": "s", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"subsets": [{"name": "a", "max": 1}, {"name": "b", "max": 5}, {"name": "c"}]},
    "status": {"subsetStatuses": [{"replicas": 2}, {"replicas": 0}, {"replicas": 7}]},
}


@pytest.mark.parametrize(
    ("path", "want"),
    [
        (".metadata.name", ["s"]),
        ("{.metadata.name}", ["s"]),
        (".metadata.missing", []),
        (".metadata.name.deeper", []),
        (".status.subsetStatuses[*].replicas", [2, 0, 7]),
        (".status.subsetStatuses[0].replicas", [2]),
        (".status.subsetStatuses[-1].replicas", [7]),
        (".status.subsetStatuses[5].replicas", []),
        (".status.subsetStatuses[1:].replicas", [0, 7]),
        (".spec.subsets[?(@.max)].name", ["a", "b"]),
        (".spec.subsets[?(@.max > 1)].name", ["b"]),
        (".spec.subsets[?(@.name == 'c')].name", ["c"]),
        ('.spec.subsets[?(@.name != "c")].name', ["a", "b"]),
        (".metadata.labels['app.kubernetes.io/name']", ["web"]),
        ("..replicas", [2, 0, 7]),
        (".status.*", [[{"replicas": 2}, {"replicas": 0}, {"replicas": 7}]]),
    ],
)
def test_paths_select_what_kubernetes_selects(path: str, want: list[Any]) -> None:
    assert evaluate(path, OBJ) == want


@pytest.mark.parametrize(
    "path", ["metadata.name", ".metadata[", ".a[x]", ".a[1:2:3:4]", ".a b", ".a[?(@.x ~ 1)]"]
)
def test_unsupported_expressions_raise(path: str) -> None:
    with pytest.raises(JsonPathError):
        compile_path(path)


def test_a_compiled_path_is_reusable() -> None:
    path = compile_path(".spec.subsets[*].name")
    assert path.evaluate(OBJ) == ["a", "b", "c"]
    assert path.evaluate({"spec": {}}) == []
