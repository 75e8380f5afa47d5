"""Controller machinery shared by every controller, owned by neither product.

`manager` (the `Manager`: any number of controllers over one client, one watch cache per
resource, one leader election, one `/metrics` body; used by `spreadgate controller` and the
embedded stack in real time), `stepped` (the `SteppedManager`: the same controllers, added the
same way, run in steps on listed sources without threads or election; the embedded stack in
virtual time), `reconciler` (work queue, workers, retries, failure logging; `loopmetrics`, the
metrics it records), `workqueue` (dedup and rate limits), `cachegroup` (watch caches shared per
resource, grouped per controller) and `listing` (the fresh lists a `--once` or stepped sync
reads), `triggers` (what a watch event must change to wake a controller, and the queue key),
`leader` (the Lease), `events` (core/v1 Events on the reconciled objects; the Event body itself
is `py_engine.semantics.events`). The WorkloadSpread and UnitedDeployment controllers
(`py_engine.workloadspread.controller.runtime`, `py_engine.uniteddeployment.controller.runtime`)
are built on it; it imports neither (`.importlinter`, contract runtime-is-neutral). Its sibling
`py_engine.placement` answers which subsets of nodes a pod can run on.
"""
