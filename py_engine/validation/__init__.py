"""Validating WorkloadSpread manifests with the Rego validation policy.

Shared by `spreadgate validate`, the webhook's `/validate/workloadspreads` and
the tests: reading manifests (YAML/JSON, multi-document, Lists) and turning
policy violations into field-addressed messages.
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
