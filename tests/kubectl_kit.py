"""The real `kubectl` for the tests that drive it: skipped without it on a developer's machine,
a failure in CI.

The README's test command names kubectl (Debian's kubernetes-client) as its one prerequisite
beyond Python; `.ci/run` installs it and fails when it cannot, so a CI run never passes with
these tests skipped. Mark a test `@pytest.mark.kubectl` (checked before its fixtures start) or
call `require_kubectl()` where the binary's path is needed.
"""

from __future__ import annotations

import os
import shutil

import pytest

# The columns `kubectl get sgws` prints: the WorkloadSpread CRD's printer columns (written out
# here, so a changed CRD shows in the tests that compare against them).
SPREAD_COLUMNS = [
    "NAME",
    "WORKLOAD-KIND",
    "WORKLOAD",
    "STRATEGY",
    "ADAPTIVE-RESCHEDULE-SECONDS",
    "FIRST-SUBSET-PODS",
    "AGE",
]
KUBECTL = shutil.which("kubectl")
MISSING = (
    "kubectl is not installed (Debian package kubernetes-client: the test command's prerequisite, see README)"
)


def require_kubectl() -> str:
    """kubectl's path; skips the calling test without it, fails it when `CI` is set."""
    if KUBECTL is not None:
        return KUBECTL
    if os.environ.get("CI"):
        pytest.fail(f"{MISSING}; CI installs it (.ci/run) and must not skip these tests")
    pytest.skip(MISSING)
