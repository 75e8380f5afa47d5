"""The UnitedDeployment controller runtime: the I/O around `py_engine.uniteddeployment.controller.plan`.

Watch caches (or fresh lists) feed a work queue keyed by UnitedDeployment; a
sync builds a snapshot, asks the subset policy which subsets have a node for a
new pod (Adaptive), runs the pure plan and applies it: creates, updates and
deletes of subset workloads and ControllerRevisions, the reserved pod label,
the status (only when it changed), Events, and a requeue. It is built on the
neutral `py_engine.runtime` (work queue, reconcile loop, watch caches, leader
election, Events, the `Manager` that runs it beside the WorkloadSpread controller)
and `py_engine.placement` (node fit), never on the WorkloadSpread packages.
docs/uniteddeployment.md, "The controller".
"""
