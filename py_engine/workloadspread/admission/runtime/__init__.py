"""The admission runtime: the I/O behind the webhook's admission service.

`service_view.LiveAdmissionView` reads through watch caches (the live `AdmissionReader`);
`committer.Committer` writes reservations to WorkloadSpread statuses with group commit (the
live `SpreadCommitter`). `access_review.KubeAccessReviewer` asks the API server whether an
author may do what a WorkloadSpread or UnitedDeployment would do (the validation service's
`AccessReviewer`, py_engine/validation/authorization.py). Both ports are described in
`py_engine.workloadspread.admission.ports`; the pure
decisions stay in `py_engine.workloadspread.admission`, which must not import this package or the API client
(`.importlinter`).
"""
