"""CI output formats of `spreadgate validate`: JUnit XML and GitHub Actions workflow commands.

* `junit`: one `<testcase>` per validated object (classname = the file, name =
  `Kind name`), one `<failure>` per violation whose `message` is the field path and
  message; a file that could not be read is a test case with an `<error>`. GitLab,
  Jenkins, Azure Pipelines and the GitHub test-report actions ingest it.
* `github`: one `::error file=F,line=L,title=T::message` workflow command per
  violation, so GitHub Actions annotates the line of the pull request's diff, as
  conftest's `--output github` does; then a plain summary line.

Line numbers: a violation's field path (`spec.subsets[1].maxReplicas`) is looked
up in the YAML/JSON file the object came from; the line of the deepest part of
the path that exists is given (the parent of a missing field), the object's first
line when no part exists, and no line at all for standard input or a file whose
documents cannot be matched to the objects read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

STDIN = "<stdin>"
_SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class Finding:
    """One violation: the field path (may be empty) and the full message."""

    field: str
    message: str


@dataclass(frozen=True)
class Checked:
    """One validated object: where it came from (file, object index in the file) and what broke."""

    source: str
    index: int
    kind: str
    name: str
    findings: Sequence[Finding] = field(default_factory=tuple)


@dataclass(frozen=True)
class Unreadable:
    """An input that could not be read: the file and why."""

    source: str
    message: str


# ----------------------------------------------------------------------------- line numbers


def path_segments(path: str) -> list[str]:
    """`spec.subsets[1].patch.metadata.labels[app.kubernetes.io/name]` -> its keys and indices."""
    return [bracket if bracket else plain for bracket, plain in _SEGMENT.findall(path)]


def _object_nodes(text: str) -> list[yaml.Node]:
    """The node of each object in file order, flattening Lists as the document reader does."""
    nodes: list[yaml.Node] = []
    for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
        if document is None:
            continue
        candidates = document.value if isinstance(document, yaml.SequenceNode) else [document]
        for node in candidates:
            items = _child(node, "items") if _scalar(_child(node, "kind")).endswith("List") else None
            if isinstance(items, yaml.SequenceNode):
                nodes.extend(items.value)
            else:
                nodes.append(node)
    return nodes


def _scalar(node: yaml.Node | None) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else ""


def _child(node: yaml.Node | None, segment: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if _scalar(key) == segment), None)
    if isinstance(node, yaml.SequenceNode) and segment.isdigit() and int(segment) < len(node.value):
        child: yaml.Node = node.value[int(segment)]
        return child
    return None


def _key_line(node: yaml.Node, segment: str) -> int | None:
    """0-based line of the key `segment` of a mapping (where an editor shows the field)."""
    if isinstance(node, yaml.MappingNode):
        return next((int(key.start_mark.line) for key, _ in node.value if _scalar(key) == segment), None)
    return None


def field_line(node: yaml.Node, path: str) -> int:
    """1-based line of the deepest existing part of `path` inside the object `node` (a key's line)."""
    found, line = node, int(node.start_mark.line)
    for segment in path_segments(path):
        child = _child(found, segment)
        if child is None:
            break
        key_line = _key_line(found, segment)
        found, line = child, key_line if key_line is not None else int(child.start_mark.line)
    return line + 1


def line_finder(read: Callable[[str], str] | None = None) -> Callable[[str, int, str], int | None]:
    """`find(source, index, path)` -> line or None; each file is read and composed once."""
    read_text = read or (lambda source: Path(source).read_text(encoding="utf-8-sig"))
    memo: dict[str, list[yaml.Node] | None] = {}

    def find(source: str, index: int, path: str) -> int | None:
        if source == STDIN:
            return None
        if source not in memo:
            try:
                memo[source] = _object_nodes(read_text(source))
            except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
                memo[source] = None
        nodes = memo[source]
        if nodes is None or index >= len(nodes):
            return None
        return field_line(nodes[index], path)

    return find


# ----------------------------------------------------------------------------- JUnit


def junit(
    checked: Sequence[Checked],
    unreadable: Sequence[Unreadable],
    find_line: Callable[[str, int, str], int | None],
) -> str:
    """The JUnit XML report (see the module docstring)."""
    failures = sum(1 for c in checked if c.findings)
    suites = ET.Element(
        "testsuites",
        name="spreadgate validate",
        tests=str(len(checked) + len(unreadable)),
        failures=str(failures),
        errors=str(len(unreadable)),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="spreadgate validate",
        tests=suites.attrib["tests"],
        failures=str(failures),
        errors=str(len(unreadable)),
        skipped="0",
    )
    for item in checked:
        case = ET.SubElement(
            suite, "testcase", classname=item.source, name=f"{item.kind} {item.name}", file=item.source
        )
        line = find_line(item.source, item.index, "")
        if line is not None:
            case.set("line", str(line))
        for finding in item.findings:
            where = find_line(item.source, item.index, finding.field)
            failure = ET.SubElement(
                case, "failure", message=finding.message, type=finding.field or "violation"
            )
            failure.text = (
                f"{item.source}{f':{where}' if where is not None else ''}: {item.name}: {finding.message}"
            )
    for bad in unreadable:
        case = ET.SubElement(suite, "testcase", classname=bad.source, name="read", file=bad.source)
        error = ET.SubElement(case, "error", message=bad.message, type="unreadable")
        error.text = f"{bad.source}: {bad.message}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# ----------------------------------------------------------------------------- GitHub Actions


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(message: str, title: str, source: str, line: int | None) -> str:
    props = [] if source == STDIN else [f"file={_escape_property(source)}"]
    if line is not None:
        props.append(f"line={line}")
    props.append(f"title={_escape_property(title)}")
    return f"::error {','.join(props)}::{_escape_data(message)}"


def github(
    checked: Sequence[Checked],
    unreadable: Sequence[Unreadable],
    find_line: Callable[[str, int, str], int | None],
) -> str:
    """GitHub Actions workflow commands (see the module docstring)."""
    lines = [
        _command(bad.message, "spreadgate validate: unreadable input", bad.source, None) for bad in unreadable
    ]
    for item in checked:
        for finding in item.findings:
            line = find_line(item.source, item.index, finding.field)
            lines.append(_command(finding.message, f"{item.kind} {item.name}", item.source, line))
    broken = sum(1 for c in checked if c.findings)
    total = sum(len(c.findings) for c in checked)
    lines.append(
        f"spreadgate validate: {len(checked)} object(s) checked, {total} violation(s) in {broken} object(s)"
        + (f", {len(unreadable)} unreadable input(s)" if unreadable else "")
    )
    return "\n".join(lines) + "\n"


FORMATS: dict[
    str, Callable[[Sequence[Checked], Sequence[Unreadable], Callable[[str, int, str], int | None]], str]
] = {
    "junit": junit,
    "github": github,
}


def render(output: str, checked: Sequence[Checked], unreadable: Sequence[Unreadable]) -> str:
    """The report in `output` (a key of FORMATS), with line numbers read from the files."""
    return FORMATS[output](checked, unreadable, line_finder())
