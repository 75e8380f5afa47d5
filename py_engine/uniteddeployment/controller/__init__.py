"""UnitedDeployment's pure core: allocation, adaptive bookkeeping, partitions,
subset workload construction, revisions, status, and `plan`, the controller's
decision over a snapshot. No I/O and no clock: `now` is always passed in.
docs/uniteddeployment.md describes the rules and where they differ from Kruise.
"""
