"""Node labels, the only node facts scale-down ranking reads.

The SpreadConstraintsRanker looks up each pod's node and reads one label per
topology key. Nodes come from `kubectl get nodes -o json` (a `List` of nodes), a
JSON array, or a name -> labels mapping in tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from py_engine.scaledown.errors import NodeFormatError


def read_nodes(document: object) -> dict[str, dict[str, str]]:
    """Node name -> labels from a NodeList/List or an array of nodes; validates the shape."""
    if isinstance(document, Mapping):
        if "items" not in document:
            if document.get("kind") == "Node":
                document = [document]
            else:
                raise NodeFormatError("expected a NodeList or a JSON array of nodes")
        else:
            document = document["items"] if document["items"] is not None else []
    if not isinstance(document, list):
        raise NodeFormatError(f"expected a NodeList or a JSON array of nodes, got {type(document).__name__}")
    nodes: dict[str, dict[str, str]] = {}
    for position, node in enumerate(document):
        if not isinstance(node, Mapping):
            raise NodeFormatError(f"node item {position}: expected a node object")
        kind = node.get("kind")
        if kind is not None and kind != "Node":
            raise NodeFormatError(f"node item {position}: kind is {kind!r}, expected a Node")
        meta = node.get("metadata")
        if not isinstance(meta, Mapping):
            raise NodeFormatError(f"node item {position}: missing metadata")
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise NodeFormatError(f"node item {position}: metadata.name is missing or not a string")
        labels = meta.get("labels") or {}
        if not isinstance(labels, Mapping) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in labels.items()
        ):
            raise NodeFormatError(f"node {name!r}: metadata.labels must map strings to strings")
        nodes[name] = dict(labels)
    return nodes
