"""The WorkloadSpread controller's I/O: everything that talks to the API server.

`daemon` assembles a running controller (client, watch caches, triggers,
loop, optional leader lease); `sources` are the watch caches a sync reads;
`views` builds one sync's `ClusterView` from a source; `triggers` routes
watch events to spread keys; `workqueue` dedups and rate-limits those keys;
`loop` runs the workers; `writer` applies a sync's result (status, pod
deletion costs, evictions, Events); `leader` holds the Lease. `reconciler`
(queue, workers, retries, failure logging), `assembly` (caches, leadership,
threads), `cachegroup` and `listing` (watch caches and fresh lists a sync
reads) and `events` (the Event body and its recording) are shared with the
UnitedDeployment controller (`py_engine.unitedctl`, which sits above this
package). The decisions
they carry out are made in the pure `py_engine.controller` core, which may
not import this package (`.importlinter`, contract controller-core-no-io).
"""
