"""The WorkloadSpread controller's I/O: everything that talks to the API server for it.

`daemon` adds the controller (watch caches, triggers, loop, metrics) to a `Manager` of the
neutral `py_engine.runtime`, which runs it with its caches, leader election and threads;
`sources` are the watch caches a sync reads; `views` builds one sync's `ClusterView` from a
source; `triggers` routes watch events to spread keys; `loop` runs the syncs; `writer` applies a
sync's result (status, pod deletion costs, evictions, Events through the neutral
`py_engine.runtime.events` recorder). The decisions they carry out are made in the pure
`py_engine.workloadspread.controller` core, which may not import this package (`.importlinter`,
contract controller-core-no-io).
"""
