"""Reading manifests: multi-document YAML, JSON, Lists, and refusing bad input clearly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from py_engine.validation.documents import (
    MAX_INPUT_BYTES,
    Document,
    DocumentError,
    parse_documents,
    read_documents,
)

_BILLION_LAUGHS = b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n".encode() for i in range(1, 9)
)


def test_multi_document_yaml_skips_empty_documents() -> None:
    docs = parse_documents("f.yaml", b"---\nkind: A\n---\n---\nkind: B\nmetadata: {name: b}\n")
    assert [d.kind for d in docs] == ["A", "B"]
    assert docs[1].name == "b"
    assert docs[0].name == "document 1"


def test_yaml_only_values_become_json() -> None:
    docs = parse_documents("f.yaml", b"kind: A\nmetadata: {labels: {1: 2}}\ndate: 2024-01-01\n")
    assert docs[0].obj["metadata"]["labels"] == {"1": 2}
    assert docs[0].obj["date"] == "2024-01-01"


def test_json_and_lists_are_flattened() -> None:
    docs = parse_documents("f.json", b'{"kind": "List", "items": [{"kind": "A"}, {"kind": "B"}]}')
    assert [d.kind for d in docs] == ["A", "B"]
    docs = parse_documents("f.json", b'[{"kind": "A"}]')
    assert [d.kind for d in docs] == ["A"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"a: [1, 2\n", "not valid YAML or JSON at line"),
        (b"\x00\x01\x02", "binary data"),
        (b"\xff\xfe\xfa", "not UTF-8"),
        (b"- 1\n- 2\n", "is not a Kubernetes object (got int)"),
        (b'{"kind": "PodList", "items": "x"}', "items is not a list"),
        (b'{"kind": "PodList", "items": [1]}', "items[0] is not a Kubernetes object"),
        (b"[" * 5000, "nested too deeply"),
        (b"a: &x [*x]\n", "expands to more than"),
        (_BILLION_LAUGHS, "expands to more than"),
    ],
)
def test_unreadable_documents_raise_clear_errors(data: bytes, fragment: str) -> None:
    with pytest.raises(DocumentError) as excinfo:
        parse_documents("bad.yaml", data)
    assert fragment in str(excinfo.value)
    assert str(excinfo.value).startswith("bad.yaml: ")


def test_oversized_input_is_refused_without_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (MAX_INPUT_BYTES + 10))
    results = list(read_documents([str(big)]))
    assert len(results) == 1
    assert isinstance(results[0], DocumentError)
    assert "larger than" in results[0].message


def test_directories_expand_to_manifest_files(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("kind: B\n")
    (tmp_path / "a.json").write_text('{"kind": "A"}')
    (tmp_path / "notes.txt").write_text("ignored")
    kinds = [d.kind for d in read_documents([str(tmp_path)]) if isinstance(d, Document)]
    assert kinds == ["A", "B"]


def test_stdin_and_missing_files() -> None:
    results = list(read_documents(["-"], stdin=io.BytesIO(b"kind: A\n")))
    assert isinstance(results[0], Document) and results[0].source == "<stdin>"
    missing = list(read_documents(["/nonexistent/x.yaml"]))
    assert isinstance(missing[0], DocumentError) and "no such file" in missing[0].message
