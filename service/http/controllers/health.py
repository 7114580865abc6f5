from __future__ import annotations

from litestar import get
from litestar.datastructures import State

from ...errors import Unavailable
from ..problems import documented
from ..schemas import Health
from .common import games_of


@get("/health", operation_id="getHealth", summary="200 when the database answers, 503 otherwise", tags=["service"],
     responses=documented(400, 503))
async def health(state: State) -> Health:
    try:
        await games_of(state).ping()
    except Exception:
        raise Unavailable("the database is not answering") from None
    return Health(status="ok", database="up")
