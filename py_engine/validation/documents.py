"""Reading Kubernetes manifests from files, directories and standard input.

Accepts what `kubectl apply -f` accepts: YAML (multi-document) or JSON, single
objects or `List`/`*List` objects with `items`. Input that is too large, binary
or not a mapping is refused with a message naming the file and document, never
a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from py_engine.semantics import objects

MAX_INPUT_BYTES = 8 * 1024 * 1024
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class DocumentError(ValueError):
    """A file or document that cannot be read as Kubernetes objects."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


@dataclass(frozen=True)
class Document:
    """One Kubernetes object and where it came from (`file` and document number)."""

    source: str
    index: int
    obj: dict[str, Any]

    @property
    def name(self) -> str:
        return objects.name(self.obj) or f"document {self.index + 1}"

    @property
    def kind(self) -> str:
        kind = self.obj.get("kind")
        return kind if isinstance(kind, str) and kind else "<no kind>"


def expand_paths(paths: Iterable[str]) -> Iterator[str]:
    """Files as given; directories as their manifest files, recursively, in sorted order."""
    for raw in paths:
        path = Path(raw)
        if raw != "-" and path.is_dir():
            yield from (
                str(p) for p in sorted(path.rglob("*")) if p.is_file() and p.suffix in MANIFEST_SUFFIXES
            )
        else:
            yield raw


def read_bytes(source: str, stdin: Any = None) -> bytes:
    """Read at most MAX_INPUT_BYTES (+1 to detect overflow) from a file or `-`."""
    try:
        if source == "-":
            import sys

            stream = stdin if stdin is not None else sys.stdin.buffer
            data: bytes = stream.read(MAX_INPUT_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise DocumentError(source, "no such file") from None
    except IsADirectoryError:
        raise DocumentError(source, "is a directory") from None
    except OSError as exc:
        raise DocumentError(source, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise DocumentError(source, f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; refusing to parse")
    return data


def parse_documents(source: str, data: bytes) -> list[Document]:
    """Parse bytes into objects, flattening Lists; raise DocumentError when unreadable."""
    if b"\x00" in data:
        raise DocumentError(source, "binary data, not a YAML or JSON manifest")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DocumentError(source, "not UTF-8 text, not a YAML or JSON manifest") from None
    raw_documents = _load(source, text)
    documents: list[Document] = []
    for raw in raw_documents:
        if raw is None:
            continue  # an empty document between `---` separators
        if not isinstance(raw, dict):
            raise DocumentError(
                source, f"document {len(documents) + 1} is not a Kubernetes object (got {type(raw).__name__})"
            )
        for obj in _flatten(source, raw):
            documents.append(Document(source=source, index=len(documents), obj=as_json_object(source, obj)))
    return documents


def read_documents(paths: Iterable[str], stdin: Any = None) -> Iterator[Document | DocumentError]:
    """Every object of every input, or a DocumentError in place of an unreadable file."""
    for source in expand_paths(paths):
        try:
            yield from parse_documents(source if source != "-" else "<stdin>", read_bytes(source, stdin))
        except DocumentError as exc:
            yield exc


def _load(source: str, text: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(text)
        except RecursionError:
            raise DocumentError(source, "document nested too deeply") from None
        except ValueError:
            pass  # YAML is a superset of JSON's syntax; let the YAML parser report the error
        else:
            return value if isinstance(value, list) else [value]
    try:
        documents: list[Any] = []
        for document in yaml.safe_load_all(text):
            # A top-level sequence of objects reads like a JSON array of them.
            documents.extend(document if isinstance(document, list) else [document])
        return documents
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid syntax"
        raise DocumentError(source, f"not valid YAML or JSON{where}: {problem}") from None
    except RecursionError:
        raise DocumentError(source, "document nested too deeply") from None


def _flatten(source: str, obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
        items = obj["items"]
        if not isinstance(items, list):
            raise DocumentError(source, f"{kind}.items is not a list")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise DocumentError(source, f"{kind}.items[{i}] is not a Kubernetes object")
            yield item
    else:
        yield obj


MAX_NODES = 1_000_000


def _too_many_nodes(obj: Any, limit: int = MAX_NODES) -> bool:
    """True when the value has more than `limit` nodes once YAML aliases are expanded.

    YAML aliases share one object in memory, so a small file can describe a
    structure of billions of nodes ("billion laughs"); count before expanding it.
    """
    seen = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _float64_int(text: str) -> int:
    """An integer literal; ValueError beyond float64, which kubectl cannot carry either."""
    value = int(text)
    if len(text) > 300:
        try:
            float(value)
        except OverflowError:
            raise ValueError("number out of range") from None
    return value


def as_json_object(source: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as JSON would carry it, as kubectl converts YAML: keys become
    strings, and YAML-only scalars (dates, timestamps) become their text."""
    if _too_many_nodes(obj):
        raise DocumentError(source, f"document expands to more than {MAX_NODES} values (YAML aliases?)")
    try:
        # JSON has no NaN or Infinity, and kubectl no number beyond float64; the policy engine fails on them
        text = json.dumps(obj, default=str, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate (escape "\ud800") is no text; the policy engine dies on one
        converted: dict[str, Any] = json.loads(text, parse_int=_float64_int)
    except UnicodeEncodeError:
        raise DocumentError(
            source,
            "document holds a string that is not valid Unicode (a lone UTF-16 surrogate such as \\ud800)",
        ) from None
    except ValueError:
        raise DocumentError(
            source, "document cannot be represented as JSON (NaN, infinity or a number beyond float64)"
        ) from None
    except (TypeError, RecursionError):
        raise DocumentError(source, "document cannot be represented as JSON") from None
    return converted
