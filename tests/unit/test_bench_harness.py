"""The benchmark harness's own arithmetic and request bytes (bench/harness): what every
benchmark's figures rest on."""

from __future__ import annotations

import math

import msgspec

from bench.harness.client import build_request
from bench.harness.env import HOST
from bench.harness.stats import median, percentile


def test_percentile_takes_the_nearest_rank_in_milliseconds() -> None:
    values = [1_000_000 * n for n in range(1, 101)]  # 1 .. 100 ms, in ns
    assert percentile(values, 0.5) == 51.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert math.isnan(percentile([], 0.5))


def test_median_of_odd_and_even_counts() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_build_request_is_one_complete_http_request() -> None:
    raw = build_request("POST", "/games/x/moves", 8000, {"type": "draw"}, "tok", {"If-Match": '"3"'})
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /games/x/moves HTTP/1.1"
    assert f"Host: {HOST}:8000" in lines
    assert "Authorization: Bearer tok" in lines
    assert 'If-Match: "3"' in lines
    assert f"Content-Length: {len(body)}" in lines
    assert msgspec.json.decode(body) == {"type": "draw"}


def test_build_request_without_a_body_has_no_content_headers() -> None:
    raw = build_request("GET", "/health", 8000)
    assert raw == f"GET /health HTTP/1.1\r\nHost: {HOST}:8000\r\n\r\n".encode()
