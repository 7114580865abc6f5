"""The bare endpoint for the API benchmark: Litestar with no database and no work.

``POST /bare`` decodes the same small JSON body a move sends and answers ``{"ok": true}``: what
the HTTP stack alone (server, Litestar's routing, body and response layers) costs a move-shaped
request. Served the way the service is (``service.http.server``). ``GET /health`` is for waiting on.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, get, post


@post("/bare", status_code=200)
async def bare(data: dict[str, Any]) -> dict[str, bool]:
    return {"ok": True}


@get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


app = Litestar(route_handlers=[bare, health], logging_config=None, debug=False)
