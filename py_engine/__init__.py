"""Spreadgate engine: spread a workload's pods over ordered subsets of nodes.

Sub-packages are layered (see `.importlinter`, whose contracts enforce it):
`cli` on top; `assembled_stack` (the whole product on the embedded cluster, for
demo, simulate, the playground and tests) below it; the embedded cluster `sim`
beside the `webhook`, importing nothing of the product's runtime; the
UnitedDeployment runtime `unitedctl`; then the decision packages (`admission`,
whose I/O sits in `admission.runtime`; `controller`, whose loop, writer,
leader lease and watch sources sit in `controller.runtime`; `united`), the pure
`validation`, `scaledown` and `model`; and at the bottom the edges: `apiclient` (the
API client: the only package that talks to an API server), `policy` (Rego
engines), and `semantics` (pure Kubernetes object semantics: labels, quantities,
scheduling rules, strategic merge, object accessors; no I/O).
"""

__version__ = "0.1.0"
