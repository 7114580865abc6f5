"""service.http.server.HeadWithBody: a response's head goes out with its body, in order, never later
than the event loop's next turn or a close."""

from __future__ import annotations

import asyncio
from typing import Any

from service.http.server import HeadWithBody

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close", None))

    def is_closing(self) -> bool:
        return False


async def test_the_head_and_the_body_are_one_write() -> None:
    raw = Recorder()
    transport = HeadWithBody(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
    transport.write(HEAD)
    assert raw.calls == []
    transport.write(b"{}")
    assert raw.calls == [("write", HEAD + b"{}")]
    await asyncio.sleep(0)  # the scheduled flush finds nothing held
    assert raw.calls == [("write", HEAD + b"{}")]
    assert transport.is_closing() is False  # everything else is the transport's


async def test_a_head_alone_goes_out_on_the_next_turn_of_the_loop() -> None:
    raw = Recorder()
    transport = HeadWithBody(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
    transport.write(HEAD)  # a stream's head: its first event may come much later
    await asyncio.sleep(0)
    assert raw.calls == [("write", HEAD)]
    transport.write(b"event: view\n\n")
    assert raw.calls == [("write", HEAD), ("write", b"event: view\n\n")]


async def test_a_close_sends_the_held_head_first_and_other_writes_are_not_held() -> None:
    raw = Recorder()
    transport = HeadWithBody(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # an interim answer goes at once
    transport.write(b"0\r\n\r\n")
    transport.write(HEAD)
    transport.close()
    assert raw.calls == [
        ("write", b"HTTP/1.1 100 Continue\r\n\r\n"), ("write", b"0\r\n\r\n"), ("write", HEAD), ("close", None),
    ]
