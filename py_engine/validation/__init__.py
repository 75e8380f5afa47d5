"""Validating WorkloadSpreads and UnitedDeployments with the Rego policies.

Shared by `spreadgate validate`, the webhook's `/validate/workloadspreads` and
`/validate/uniteddeployments` and the tests: reading manifests (YAML/JSON, multi-document,
Lists), building each kind's policy input and turning violations into field-addressed
messages (`validator`, `uniteddeployment`), and the one service both validating endpoints call
(`service.ValidationService`: a review in, a `verdict.Verdict` out, the author's rights
checked through `authorization.AuthorGate` by the rules of `authorship`).
"""

from py_engine.validation.documents import Document, DocumentError, read_documents
from py_engine.validation.patch_fields import PATCH_VIOLATION_RULE, parse_patch_fields
from py_engine.validation.validator import VALIDATION_RULE, Violation, build_review_input, validate_spread

__all__ = [
    "PATCH_VIOLATION_RULE",
    "VALIDATION_RULE",
    "Document",
    "DocumentError",
    "Violation",
    "build_review_input",
    "parse_patch_fields",
    "read_documents",
    "validate_spread",
]
