"""Pure Kubernetes object semantics shared by every layer.

Nothing here performs I/O: timestamps, the injectable clock, label selectors,
node affinity, tolerations, resource quantities and strategic-merge patching
are all functions of plain dict objects, exactly as the API server sees them.
"""
