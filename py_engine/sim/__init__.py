"""The embedded cluster: a Kubernetes API emulator with workload controllers,
a scheduler and a kubelet, for demos, simulation and end-to-end tests.

It stands in for a real cluster on machines without one, so it must keep the
API semantics Spreadgate depends on (resourceVersion conflicts, watches, the
status subresource, admission webhooks called over HTTPS).
"""
