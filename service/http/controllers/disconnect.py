"""Work that stops when its client has gone: the request's task is not cancelled by the server
when the connection closes, so a handler doing costly work watches for it itself."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from litestar import Request

from ...errors import Unavailable

T = TypeVar("T")


async def _disconnected(request: Request[Any, Any, Any]) -> None:
    """Returns when the ASGI server reports the client's connection closed."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(request: Request[Any, Any, Any], work: Awaitable[T]) -> T:
    """``work``'s result, or ``work`` cancelled as soon as the client disconnects (then a 503 that
    nobody reads: the reply has nowhere to go)."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        watch.cancel()
        with contextlib.suppress(BaseException):
            await watch
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise Unavailable("the client closed the connection before the answer was ready")
