"""The WorkloadSpread controller's I/O: everything that talks to the API server for it.

`daemon` assembles a running controller (client, watch caches, triggers, loop, optional leader
lease) on the neutral `py_engine.runtime` machinery; `sources` are the watch caches a sync reads;
`views` builds one sync's `ClusterView` from a source; `triggers` routes watch events to spread
keys; `loop` runs the syncs; `writer` applies a sync's result (status, pod deletion costs,
evictions, Events); `events` records Events. The decisions they carry out are made in the pure
`py_engine.workloadspread.controller` core, which may not import this package (`.importlinter`,
contract controller-core-no-io).
"""
