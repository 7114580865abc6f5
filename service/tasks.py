"""Background tasks: the one way this service stops one."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has stopped (its own CancelledError is the expected end)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
