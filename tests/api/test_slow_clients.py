"""A connection must bring its request whole in time (service.http.server.REQUEST_SECONDS): one that
sends nothing, or a request head or body a little at a time, is closed, so idle and half-sent
connections cannot pile up. A request that arrives in time is answered as usual."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from service.http.server import NoDelayHttpToolsProtocol

DEADLINE = 0.6


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NoDelayHttpToolsProtocol, "request_seconds", DEADLINE)


def _connect(server_url: str) -> socket.socket:
    address = urlsplit(server_url)
    return socket.create_connection((address.hostname, address.port), timeout=5)


def _closed_within(sock: socket.socket, seconds: float, drip: bytes = b"") -> float:
    """Seconds until the server closes ``sock`` (sending ``drip`` a byte every 0.1 s meanwhile)."""
    started = time.monotonic()
    sock.settimeout(0.1)
    while time.monotonic() - started < seconds:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - started
        except TimeoutError:
            pass
        except ConnectionResetError:
            return time.monotonic() - started
        if drip:
            try:
                sock.sendall(drip[:1])
            except OSError:
                return time.monotonic() - started
            drip = drip[1:]
    raise AssertionError(f"the connection was still open after {seconds} s")


def test_a_connection_that_sends_nothing_is_closed(server_url: str, short_deadline: None) -> None:
    with _connect(server_url) as sock:
        assert _closed_within(sock, DEADLINE + 2) >= DEADLINE * 0.8


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(server_url: str, short_deadline: None) -> None:
    head = b"GET /rulesets HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    with _connect(server_url) as sock:
        assert _closed_within(sock, DEADLINE + 2, drip=head) >= DEADLINE * 0.8


def test_a_body_that_never_comes_whole_is_cut_off(server_url: str, short_deadline: None) -> None:
    with _connect(server_url) as sock:
        sock.sendall(b"POST /players HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"name\":")
        assert _closed_within(sock, DEADLINE + 2) >= DEADLINE * 0.8


def test_requests_in_time_are_answered_on_one_connection(server_url: str, short_deadline: None) -> None:
    with httpx.Client(base_url=server_url) as client:
        for _ in range(3):
            assert client.get("/rulesets").status_code == 200
            time.sleep(DEADLINE / 2)
