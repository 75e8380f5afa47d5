"""AdmissionReview envelopes: strict parsing in, well-formed responses out.

Parsing follows controller-runtime's `http.go`: v1 (and v1beta1, answered in
the same apiVersion), `kind: AdmissionReview`, a `request` object with a
non-empty string `uid`. Anything else is a `ReviewError` (HTTP 400) with a
message saying what is wrong. Responses always echo the uid.

Nesting is limited to `MAX_DEPTH` right after the body is decoded: the admission
code walks objects recursively (copies, policy input), so a review nested a
few hundred levels deep would otherwise fail deep inside it with a
RecursionError. A pod is about 15 levels deep inside its review.

Values no Kubernetes object can hold are refused too (400): NaN and Infinity,
numbers beyond float64, and strings with a lone UTF-16 surrogate. The policy
engine fails on the first two and kills the process on the last. So is a pod
(`resource.resource: pods`) whose fields admission reads have a JSON type its
typed form cannot have (`pod_shape_problem`): the API server never sends one.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

from py_engine.semantics.jsontext import compact
from py_engine.semantics.nesting import MAX_REVIEW_DEPTH, depth_exceeds
from py_engine.workloadspread.admission.service import Decision

API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
MAX_DEPTH = MAX_REVIEW_DEPTH
MAX_WARNING_CHARS = 240


class ReviewError(Exception):
    """The body is not a usable AdmissionReview: answer `code` with `message`."""

    def __init__(self, code: int, message: str, uid: str = "", api_version: str = API_VERSIONS[0]) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.uid = uid
        self.api_version = api_version


def parse_review(body: bytes) -> tuple[str, dict[str, Any]]:
    """(apiVersion, request) of an AdmissionReview body; raises ReviewError."""
    if not body:
        raise ReviewError(400, "request body is empty")
    try:
        review = _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))  # as json.loads
    except (ValueError, RecursionError) as exc:
        raise ReviewError(400, f"request body is not valid JSON: {str(exc)[:200]}") from None
    if isinstance(review, (dict, list)) and nesting_exceeds(body, review, MAX_DEPTH):
        raise ReviewError(400, f"request body is nested deeper than {MAX_DEPTH} levels")
    if has_huge_integer(body, review):
        raise ReviewError(400, "request body is not valid JSON: a number is out of range")
    if has_lone_surrogate(body, review):
        raise ReviewError(
            400,
            "request body holds a string that is not valid Unicode (a lone UTF-16 surrogate such as \\ud800)",
        )
    if not isinstance(review, dict):
        raise ReviewError(400, "request body must be a JSON object (an AdmissionReview)")
    api_version = review.get("apiVersion")
    if review.get("kind") != "AdmissionReview":
        raise ReviewError(400, f"expected kind AdmissionReview, got {str(review.get('kind'))[:60]!r}")
    if api_version not in API_VERSIONS:
        raise ReviewError(
            400,
            f"unsupported AdmissionReview apiVersion {str(api_version)[:60]!r}; expected {API_VERSIONS[0]}",
        )
    request = review.get("request")
    if not isinstance(request, dict):
        raise ReviewError(400, "AdmissionReview has no request object", api_version=str(api_version))
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError(
            400, "AdmissionReview request.uid must be a non-empty string", api_version=str(api_version)
        )
    for key in ("operation", "namespace", "name", "subResource"):
        if key in request and request[key] is not None and not isinstance(request[key], str):
            raise ReviewError(400, f"AdmissionReview request.{key} must be a string", uid, str(api_version))
    for key in ("object", "oldObject", "resource", "options"):
        if request.get(key) is not None and not isinstance(request[key], dict):
            raise ReviewError(400, f"AdmissionReview request.{key} must be an object", uid, str(api_version))
    if "dryRun" in request and request["dryRun"] is not None and not isinstance(request["dryRun"], bool):
        raise ReviewError(400, "AdmissionReview request.dryRun must be a boolean", uid, str(api_version))
    resource = request.get("resource")
    if isinstance(resource, dict) and resource.get("resource") == "pods":
        for key in ("object", "oldObject"):
            problem = pod_shape_problem(request.get(key))
            if problem is not None:
                raise ReviewError(400, f"AdmissionReview request.{key}.{problem}", uid, str(api_version))
    return str(api_version), request


_STRING_MAPS = ("labels", "annotations")
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def pod_shape_problem(pod: Any) -> str | None:
    """What makes `pod` (a review's object or oldObject) something no API server sends, as
    "<field path> must be ...", or None. The API server decodes a pod into its typed form
    before it calls a webhook, so a field of the wrong JSON type means a forged or broken
    review: it is answered 400 here, naming the field, instead of failing inside the
    admission code (issue 24). Only the fields admission reads are checked."""
    if not isinstance(pod, dict):
        return None  # absent (DELETE without oldObject) or already refused as not an object
    metadata = pod.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            return "metadata must be an object"
        for key in ("name", "generateName", "namespace", "uid"):
            if metadata.get(key) is not None and not isinstance(metadata[key], str):
                return f"metadata.{key} must be a string"
        for key in _STRING_MAPS:
            value = metadata.get(key)
            if value is not None and not (
                isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            ):
                return f"metadata.{key} must be a map of strings"
        owners = metadata.get("ownerReferences")
        if owners is not None and not (isinstance(owners, list) and all(isinstance(o, dict) for o in owners)):
            return "metadata.ownerReferences must be a list of objects"
    spec = pod.get("spec")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        return "spec must be an object"
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        if containers is None:
            continue
        if not isinstance(containers, list):
            return f"spec.{key} must be a list of containers"
        for i, container in enumerate(containers):
            if not isinstance(container, dict):
                return f"spec.{key}[{i}] must be an object"
            if container.get("name") is not None and not isinstance(container["name"], str):
                return f"spec.{key}[{i}].name must be a string"
    return None


def nesting_exceeds(body: bytes, value: Any, limit: int) -> bool:
    """Whether the decoded JSON `value` (of `body`) nests arrays and objects more than `limit` deep.

    A body with at most `limit` opening brackets cannot be deeper, which
    settles the common case in C (a small pod review has a few dozen). Otherwise
    the containers are walked with an explicit stack (`depth_exceeds`), at a cost
    proportional to what the decoder just built.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    return depth_exceeds(value, limit)


_DIGITS_TO_ZERO = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
"""Maps every digit to "0" and anything else to a space, so a run of digits is a run of "0"s."""
_LONG_RUN = b"0" * 309
"""The digits of an integer beyond float64 (at least 309 of them)."""


def has_huge_integer(body: bytes, value: Any) -> bool:
    """Whether the decoded JSON `value` (of `body`) holds an integer beyond float64, which
    Kubernetes cannot decode (numbers are int64 or float64) and the policy engine refuses.
    A body without 309 digits in a row cannot hold one (one scan of the bytes)."""
    if _LONG_RUN not in body.translate(_DIGITS_TO_ZERO):
        return False
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, int) and not isinstance(node, bool) and abs(node) >= 2**1023:
            try:
                float(node)
            except OverflowError:
                return True
    return False


def json_float(text: str) -> float:
    """A float literal; one that overflows to infinity (1e400) is refused."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def json_constant(text: str) -> float:
    """NaN and Infinity are not JSON (Python's decoder accepts them): refused."""
    raise ValueError(f"{text} is not a JSON value")


_DECODER = json.JSONDecoder(parse_float=json_float, parse_constant=json_constant)
"""json.loads' decoder, refusing what Python accepts and JSON does not: NaN, Infinity, 1e400."""


def has_lone_surrogate(body: bytes, value: Any) -> bool:
    """Whether a string (or key) of the decoded JSON `value` (of `body`) holds a lone surrogate.

    The policy engine (regorus) kills the process on such a string, and no
    Kubernetes object can hold one (an API server encodes valid UTF-8 only).
    A UTF-8 body can only get one from a `\\ud...` escape or (CESU-8) bytes starting
    with 0xED; without those, which settles the common case with three scans of the
    bytes, it holds none. Otherwise encoding the value finds out.
    """
    if (
        json.detect_encoding(body) in ("utf-8", "utf-8-sig")
        and b"\\ud" not in body
        and b"\\uD" not in body
        and b"\xed" not in body
    ):
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def review_response(api_version: str, uid: str, decision: Decision) -> dict[str, Any]:
    """The AdmissionReview answering `uid` with `decision`."""
    response: dict[str, Any] = {"uid": uid, "allowed": decision.allowed}
    if decision.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(compact(decision.patch).encode()).decode()
    if decision.warnings:
        response["warnings"] = [w[:MAX_WARNING_CHARS] for w in decision.warnings]
    if not decision.allowed:
        status: dict[str, Any] = {"code": decision.code, "message": decision.message, "status": "Failure"}
        if decision.reason:
            status["reason"] = decision.reason
        response["status"] = status
    elif decision.message:
        response["status"] = {"code": 200, "message": decision.message}
    if decision.audit:
        response["auditAnnotations"] = dict(decision.audit)
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def error_response(api_version: str, uid: str, code: int, message: str) -> dict[str, Any]:
    """A denial carrying an error (used for bad requests that still have a uid, and for crashes)."""
    return {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "response": {
            "uid": uid,
            "allowed": False,
            "status": {"code": code, "message": message, "status": "Failure"},
        },
    }


def uid_of(body: Mapping[str, Any]) -> str:
    request = body.get("request")
    uid = request.get("uid") if isinstance(request, Mapping) else None
    return uid if isinstance(uid, str) else ""
