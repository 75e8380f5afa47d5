"""Controller machinery shared by every controller, owned by neither product.

`reconciler` (work queue, workers, retries, failure logging), `workqueue` (dedup and rate
limits), `assembly` (watch caches, leadership, threads), `cachegroup` and `listing` (the watch
caches and fresh lists a sync reads), `leader` (the Lease). The WorkloadSpread and
UnitedDeployment controllers (`py_engine.workloadspread.controller.runtime`,
`py_engine.uniteddeployment.controller.runtime`) are built on it; it imports neither
(`.importlinter`, contract runtime-is-neutral).
"""
