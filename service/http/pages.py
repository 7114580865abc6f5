"""Paged lists, in the one style of every list: ``limit`` (1 .. 200, default 50) and the opaque
``cursor`` of the page before; the page is ``{"items": [...], "next": <cursor or null>}`` with a
``Link: <...>; rel="next"`` header while a next page follows (JSON and NDJSON pages alike).

A ``limit`` out of range is a 400 ``limit_out_of_range``; a cursor that is not one of the list's
(another list's, another date's board, a changed one) is a 400 ``cursor_invalid``
(``service.http.problems`` names the codes of Litestar's own refusals of these parameters).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Request
from litestar.params import QueryParameter

from ..cursors import LENGTH

LIMIT_MAX = 200
LIMIT_DEFAULT = 50
LIMIT_CODE = "limit_out_of_range"
CURSOR_CODE = "cursor_invalid"

Limit = Annotated[
    int, QueryParameter(ge=1, le=LIMIT_MAX, description="at most this many items: 1 .. 200 (default 50)")
]
Cursor = Annotated[
    str | None,
    QueryParameter(
        pattern=f"^[A-Za-z0-9_-]{{1,{LENGTH}}}$",
        description="the 'next' of the previous page (opaque): the page after it",
    ),
]
EventCursor = Annotated[
    str | None,
    QueryParameter(
        pattern="^[0-9]{1,10}$",
        description="the 'next' of the previous page, the version of its last event: the events after it "
        "(0 or none: from the first)",
    ),
]


def next_link(request: Request[Any, Any, Any], following: str | None, limit: int) -> dict[str, str]:
    """The ``Link`` header of a page: the same request (its other parameters kept) from ``following``."""
    if following is None:
        return {}
    kept = [(name, value) for name, value in request.query_params.multi_items() if name not in ("cursor", "limit")]
    query = urlencode([*kept, ("cursor", following), ("limit", str(limit))])
    return {"Link": f'<{request.url.path}?{query}>; rel="next"'}
