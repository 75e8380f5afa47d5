"""The in-cluster loops of the embedded cluster: workload controllers and the
garbage collector, all built on the informer/work-queue helper in `base`."""
