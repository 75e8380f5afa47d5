"""HTTP/1.1 request heads as the front end reads them.

What is accepted, what is refused and with which status."""

from __future__ import annotations

import json

import pytest

from webhook.http1 import HttpError, parse_head, problem_response, response_head


def head(*lines: str) -> bytes:
    return "\r\n".join(lines).encode("latin-1")


def test_a_review_post_is_parsed() -> None:
    parsed = parse_head(
        head(
            "POST /mutate/pods?timeout=10s HTTP/1.1",
            "Host: x",
            "Content-Type: application/json",
            "Content-Length: 42",
        )
    )
    assert (parsed.method, parsed.target, parsed.version) == ("POST", "/mutate/pods?timeout=10s", "HTTP/1.1")
    assert parsed.content_length == 42 and parsed.keep_alive
    assert ("content-type", "application/json") in parsed.headers


@pytest.mark.parametrize(
    ("lines", "keep_alive"),
    [
        (("GET /healthz HTTP/1.1", "Connection: close"), False),
        (("GET /healthz HTTP/1.0",), False),
        (("GET /healthz HTTP/1.0", "Connection: keep-alive"), True),
        (("GET /healthz HTTP/1.1",), True),
    ],
)
def test_keep_alive_follows_the_version_and_connection_header(
    lines: tuple[str, ...], keep_alive: bool
) -> None:
    assert parse_head(head(*lines)).keep_alive is keep_alive


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        (("POST /mutate/pods HTTP/1.1", "Transfer-Encoding: chunked"), 411),
        (("POST /mutate/pods HTTP/1.1", "Content-Length: 5", "Content-Length: 6"), 400),
        (("POST /mutate/pods HTTP/1.1", "Content-Length: -1"), 400),
        (("POST /mutate/pods HTTP/1.1", "Content-Length: 1e3"), 400),
        (("POST /mutate/pods HTTP/2.0",), 505),
        (("BREW /mutate/pods HTTP/1.1",), 405),
        (("POST mutate HTTP/1.1",), 400),
        (("POST /mutate/pods HTTP/1.1", "no colon here"), 400),
        (("POST /mutate/pods HTTP/1.1", " Host: x"), 400),
        (("POST  /mutate/pods HTTP/1.1",), 400),
    ],
)
def test_malformed_or_unsupported_heads_are_refused(lines: tuple[str, ...], status: int) -> None:
    with pytest.raises(HttpError) as caught:
        parse_head(head(*lines))
    assert caught.value.status == status and caught.value.message


def test_responses_carry_length_and_connection() -> None:
    raw = response_head(200, [("Content-Type", "text/plain"), ("Content-Length", "999")], 3, keep_alive=True)
    text = raw.decode("latin-1")
    assert text.startswith("HTTP/1.1 200 OK\r\n") and text.endswith("\r\n\r\n")
    assert "Content-Length: 3\r\n" in text and "999" not in text and "Connection: keep-alive" in text
    refusal = problem_response(503, 'busy "now"', retry_after=1).decode("latin-1")
    head_text, _, body = refusal.partition("\r\n\r\n")
    assert "Retry-After: 1" in head_text and "Connection: close" in head_text
    assert json.loads(body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 503,
        "message": 'busy "now"',
    }


@pytest.mark.parametrize("length", ["\u00b2", "1\u00b9", "\u00b3\u00b3", "+1", "-0", "1e3"])
def test_a_content_length_that_is_not_ascii_digits_is_refused_with_400(length: str) -> None:
    # Superscript digits are single latin-1 bytes: str.isdigit() accepts them, int() does not.
    with pytest.raises(HttpError) as refused:
        parse_head(head("POST /mutate/pods HTTP/1.1", f"Content-Length: {length}"))
    assert refused.value.status == 400


def test_expect_100_continue_is_noted_and_other_expectations_get_417() -> None:
    assert parse_head(head("POST / HTTP/1.1", "Content-Length: 2", "Expect: 100-Continue")).expect_continue
    assert not parse_head(head("POST / HTTP/1.1", "Content-Length: 2")).expect_continue
    with pytest.raises(HttpError) as refused:
        parse_head(head("POST / HTTP/1.1", "Content-Length: 2", "Expect: something"))
    assert refused.value.status == 417
