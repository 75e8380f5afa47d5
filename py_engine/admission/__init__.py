"""Pod admission: tracing a pod to its WorkloadSpread, choosing a subset,
counting slots, and building the JSON patch. Decisions are pure functions of
(objects, clock); the committer is the one place that writes.
"""
