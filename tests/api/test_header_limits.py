"""Limits on a request's head, over a raw socket against the server as production runs it: more than
16 KiB of request line and headers, or more than 100 header lines, is `431 headers_too_large` as
problem+json; a 100 MB header is cut off after about 16 KiB, answered before it is all sent, and
never kept."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from service.http.server import HEAD_BYTES_MAX, HEADERS_MAX


@pytest.fixture
def address(server_url: str) -> tuple[str, int]:
    url = urlsplit(server_url)
    assert url.hostname is not None
    assert url.port is not None
    return url.hostname, url.port


def _exchange(address: tuple[str, int], request: bytes) -> bytes:
    with socket.create_connection(address, timeout=10) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)  # may be refused before it is all sent: the answer is on its way
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


def _problem(answer: bytes) -> tuple[int, dict[str, str], dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return status, headers, json.loads(body[: int(headers["content-length"])])


def _assert_431(answer: bytes, words: str) -> None:
    status, headers, body = _problem(answer)
    assert status == 431, answer[:300]
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    assert body["status"] == 431
    assert body["code"] == "headers_too_large"
    assert body["title"] == "Request header fields too large"
    assert words in str(body["detail"])
    assert body["instance"] == f"urn:canfield:request:{headers['x-request-id']}"


def test_a_head_of_20_kib_is_431(address: tuple[str, int], server_url: str) -> None:
    request = b"GET /rulesets HTTP/1.1\r\nHost: test\r\nX-Padding: " + b"a" * (20 * 1024) + b"\r\n\r\n"
    _assert_431(_exchange(address, request), "may take at most 16 KiB")
    assert httpx.get(server_url + "/rulesets").status_code == 200  # still serving


def test_a_long_request_line_counts_too(address: tuple[str, int]) -> None:
    request = b"GET /rulesets?" + b"x" * (HEAD_BYTES_MAX + 10) + b" HTTP/1.1\r\nHost: test\r\n\r\n"
    _assert_431(_exchange(address, request), "may take at most 16 KiB")


def test_101_headers_are_431(address: tuple[str, int]) -> None:
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(HEADERS_MAX))  # with Host: 101
    _assert_431(_exchange(address, b"GET /rulesets HTTP/1.1\r\nHost: test\r\n" + headers + b"\r\n"),
                f"at most {HEADERS_MAX} header lines")


def test_a_head_just_within_both_limits_is_served(address: tuple[str, int]) -> None:
    start = b"GET /rulesets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(HEADERS_MAX - 3))  # Host, Connection, X-Pad: 100
    pad = HEAD_BYTES_MAX - len(start) - len(headers) - len(b"X-Pad: \r\n\r\n")
    request = start + headers + b"X-Pad: " + b"p" * pad + b"\r\n\r\n"
    assert len(request) == HEAD_BYTES_MAX
    assert request.count(b"\r\n") - 2 == HEADERS_MAX  # less the request line's and the blank line's
    answer = _exchange(address, request)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_the_limit_holds_on_a_keep_alive_connection(address: tuple[str, int]) -> None:
    """A second request on the same connection has its own 16 KiB."""
    small = b"GET /rulesets HTTP/1.1\r\nHost: test\r\nX-Pad: " + b"a" * (10 * 1024) + b"\r\n\r\n"
    big = b"GET /rulesets HTTP/1.1\r\nHost: test\r\nX-Pad: " + b"a" * (20 * 1024) + b"\r\n\r\n"
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(small)
        first = b""
        while b"\r\n\r\n" not in first:
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:300]
        head, _, body = first.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        while len(body) < length:
            body += sock.recv(65536)
        sock.sendall(big)
        second = b""
        while chunk := sock.recv(65536):
            second += chunk
    _assert_431(second, "may take at most 16 KiB")


def _chunks(total: int, size: int) -> Iterator[bytes]:
    block = b"a" * size
    for _ in range(total // size):
        yield block


def test_a_100_mb_header_is_answered_after_about_16_kib_and_never_kept(address: tuple[str, int]) -> None:
    total = 100 * 1024 * 1024
    sent = 0
    answer = b""
    with socket.create_connection(address, timeout=10) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        sock.sendall(b"GET /rulesets HTTP/1.1\r\nHost: test\r\nX-Huge: ")
        deadline = time.monotonic() + 60
        for chunk in _chunks(total, 64 * 1024):
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break  # the server has answered
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
            assert time.monotonic() < deadline, f"no answer after {sent} bytes"
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    _assert_431(answer, "may take at most 16 KiB")
    # The answer came long before the 100 MB were sent: what was sent after the first 16 KiB only
    # filled the socket buffers on both sides (a few MB at most), and the server kept none of it.
    assert sent < total // 10, sent
