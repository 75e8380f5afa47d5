"""Spreadgate engine: spread a workload's pods over ordered subsets of nodes.

Sub-packages are layered (see `.importlinter`): `cli` on top; `sim` beside the
webhook; `admission` and `controller` use the pure decision modules
(`validation`, `scaledown`, `model`), which stand on the edges (`kube`, `policy`)
and on `k8s`, pure Kubernetes object semantics.
"""

__version__ = "0.1.0"
