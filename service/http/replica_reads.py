"""Read-your-writes over HTTP when reads may go to a replica (``DATABASE_READ_URL``; service.store.replica).

Installed only with a replica:

* **A write** (any method but GET, HEAD and OPTIONS) answered 2xx carries ``Read-After: <LSN>``,
  the primary's WAL position once it has committed; this process also keeps it for the bearer
  token that made the write.
* **A read** (GET, HEAD) is served by the replica only once it has replayed the ``Read-After``
  the client sends back (any server process), or the last write position this process knows of
  its bearer token, whichever is later; else by the primary. A ``Read-After`` that is not an LSN
  is a ``400 invalid_request``.
* **A read the replica failed part way** (it went down under the query) is run again on the
  primary before anything was sent, so the client never sees the replica's failure.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..store.replica import READ_CONTEXT, ReadContext, ReadPool, parse_position, position_text
from .problems import PROBLEM_JSON, problem_document

READ_AFTER = b"read-after"
READS = frozenset({"GET", "HEAD"})


class ReplicaReads:
    """The ASGI wrapper: ``app.asgi_handler = ReplicaReads(app.asgi_handler, reads)``."""

    def __init__(self, app: Any, reads: ReadPool) -> None:
        self.app = app
        self.reads = reads

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        given, token = _read_after_and_token(scope)
        if scope["method"] not in READS:
            await self.app(scope, receive, self._with_position(send, token))
            return
        after = 0
        if given is not None:
            parsed = parse_position(given.decode("latin-1"))
            if parsed is None:
                await _refuse(scope, send)
                return
            after = parsed
        context = ReadContext(max(after, self.reads.written_by(token)))
        reset = READ_CONTEXT.set(context)
        try:
            replied = await self._read_once(scope, receive, send, context)
            if not replied:  # the replica failed under the read: once more, on the primary
                context.primary_only = True
                await self.app(scope, _no_body(receive), send)
        finally:
            READ_CONTEXT.reset(reset)

    async def _read_once(self, scope: Any, receive: Any, send: Any, context: ReadContext) -> bool:
        """Run the read; False (and nothing sent) when it failed because the replica did."""
        dropped = False

        async def forward(message: Any) -> None:
            nonlocal dropped
            if message["type"] == "http.response.start" and message["status"] == 503 and context.replica_failed:
                dropped = True
            if not dropped:
                await send(message)

        await self.app(scope, receive, forward)
        return not dropped

    def _with_position(self, send: Any, token: str | None) -> Any:
        reads = self.reads

        async def positioned(message: Any) -> None:
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:
                try:
                    position = await reads.write_position()
                except Exception:  # the write is done; without a position its reads keep the lag bound
                    position = 0
                if position:
                    if token is not None:
                        reads.remember(token, position)
                    header = (READ_AFTER, position_text(position).encode())
                    message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        return positioned


def _read_after_and_token(scope: Any) -> tuple[bytes | None, str | None]:
    given = token = None
    for name, value in scope["headers"]:
        lower = name.lower()
        if lower == READ_AFTER and given is None:
            given = value
        elif lower == b"authorization" and token is None and value[:7].lower() == b"bearer ":
            token = value[7:].strip().decode("latin-1")
    return given, token


def _no_body(receive: Any) -> Any:
    """``receive`` for a second run of a read: its (empty) body again, then the connection's messages."""
    sent = False

    async def again() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return await receive()

    return again


async def _refuse(scope: Any, send: Any) -> None:
    body = msgspec.json.encode(problem_document(
        400, "invalid_request", "Read-After must be the position a write returned in its Read-After header, "
        "like 0/16B3748",
    ))
    await send({"type": "http.response.start", "status": 400, "headers": [
        (b"content-type", PROBLEM_JSON.encode()), (b"content-length", str(len(body)).encode()),
    ]})
    await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})
