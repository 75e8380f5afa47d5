"""Pod admission: tracing a pod to its WorkloadSpread, choosing a subset,
counting slots, and building the JSON patch.

Decisions are pure functions of (objects, clock) in the modules of this
package; `service.AdmissionService` is the one pipeline that chains them, over
the two ports of `ports` (what it reads, where reservations are committed).
The I/O behind the webhook's ports lives in `runtime/`; the offline ones
(`snapshot`, `recording`, `offline`) serve `spreadgate admit` and the tests.
Import the modules directly; this package re-exports nothing.
"""
