"""The server process's access log (service.http.request_ids.AccessLines): one JSON line per
request, the lines of one turn of the event loop written in one write."""

from __future__ import annotations

import asyncio
import io
import json
import re
from typing import Any

from service.http.request_ids import AccessLines


class CountingStream(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        return super().write(data)


def fields(request_id: str, status: int = 200) -> dict[str, Any]:
    return {"request_id": request_id, "method": "POST", "route": "/games/{game_id}/moves", "status": status,
            "duration_ms": 1.25, "client": "127.0.0.1", "player": None}


def test_the_lines_of_one_turn_leave_in_one_write_at_the_next() -> None:
    stream = CountingStream()
    lines = AccessLines(stream)

    async def requests() -> int:
        lines.write(fields("a"))
        lines.write(fields("b", 422))
        written_before_the_turn_ended = stream.writes
        await asyncio.sleep(0)  # the loop's next turn
        lines.write(fields("c"))
        await asyncio.sleep(0)
        return written_before_the_turn_ended

    assert asyncio.run(requests()) == 0
    assert stream.writes == 2
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["request_id"] for r in records] == ["a", "b", "c"]
    assert records[1]["status"] == 422
    assert {r["logger"] for r in records} == {"canfield.access"}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]) for r in records)


def test_without_a_loop_a_line_is_written_at_once_and_text_is_plain() -> None:
    stream = CountingStream()
    AccessLines(stream, text=True).write(fields("t"))
    line = stream.getvalue().decode()
    assert stream.writes == 1
    assert "INFO canfield.access request request_id=t method=POST" in line
    assert "player=" not in line, "an absent field is left out"
    assert line.endswith("\n")
    assert line.count("\n") == 1
