"""Ratings (service/ratings): a player's ratings and their history, and a ruleset's rating list.

The lists are in the API's newest style (docs/versions.md): ``limit`` 1..200 (50), an opaque
``cursor``, ``{"items", "next"}`` and a ``Link: <...>; rel="next"`` header when more follow."""

from __future__ import annotations

from typing import Annotated, Any, Protocol, TypeVar
from urllib.parse import urlencode
from uuid import UUID

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import PathParameter, QueryParameter
from litestar.response import Response

from ...cursors import LENGTH
from ...ratings.ratings import Ratings
from ..openapi.document import response_headers
from ..problems import documented
from ..schemas import PlayerRatings, RatingHistory, RatingList

LIMIT_DEFAULT, LIMIT_MAX = 50, 200
_PLAYER = PathParameter(description="the player's id")
_RULESET = PathParameter(description="a ruleset's id: classic, draw-one or open-runs", max_length=40)
Limit = Annotated[int, QueryParameter(ge=1, le=LIMIT_MAX, description=f"at most this many (1-{LIMIT_MAX})")]
Cursor = Annotated[
    str | None,
    QueryParameter(pattern=f"^[A-Za-z0-9_-]{{1,{LENGTH}}}$",
                   description="the 'next' of the previous page (opaque); without it, the first page"),
]


class Page(Protocol):
    """A page of a list in the newest style: its items and the cursor of the next page."""

    @property
    def next(self) -> str | None: ...


P = TypeVar("P", bound=Page)


def paged(request: Request[Any, Any, Any], page: P, limit: int) -> Response[P]:
    """A page of a list in the newest style, with its Link header when a next page follows."""
    headers = {}
    if page.next is not None:
        query = urlencode({"limit": limit, "cursor": page.next})
        headers["Link"] = f'<{request.url.path}?{query}>; rel="next"'
    return Response(page, headers=headers)


class RatingController(Controller):
    path = "/"
    tags = ("ratings",)

    @get("/players/{player_id:uuid}/ratings", operation_id="getPlayerRatings",
         summary="A player's rating in every ruleset they were rated in (rated races only)",
         responses=documented(400, 404, 429, 503))
    async def of_player(self, ratings: NamedDependency[Ratings], player_id: Annotated[UUID, _PLAYER]) -> PlayerRatings:
        return await ratings.of_player(player_id)

    @get("/players/{player_id:uuid}/ratings/{ruleset:str}/history", operation_id="getPlayerRatingHistory",
         summary="A player's rating in a ruleset, one point per rated race, newest first, a page at a time",
         responses=documented(400, 404, 429, 503), response_headers=response_headers("Link"))
    async def history(
        self, request: Request[Any, Any, Any], ratings: NamedDependency[Ratings], player_id: Annotated[UUID, _PLAYER],
        ruleset: Annotated[str, _RULESET], limit: Limit = LIMIT_DEFAULT, cursor: Cursor = None,
    ) -> Response[RatingHistory]:
        page = await ratings.history(player_id, ruleset, cursor, limit)
        return paged(request, page, limit)

    @get("/ratings/{ruleset:str}", operation_id="listRatings",
         summary="A ruleset's rating list: rated players best first (then by id), a page at a time; deleted "
         "accounts are left out",
         responses=documented(400, 404, 429, 503), response_headers=response_headers("Link"))
    async def rating_list(
        self, request: Request[Any, Any, Any], ratings: NamedDependency[Ratings], ruleset: Annotated[str, _RULESET],
        limit: Limit = LIMIT_DEFAULT, cursor: Cursor = None,
    ) -> Response[RatingList]:
        page = await ratings.rating_list(ruleset, cursor, limit)
        return paged(request, page, limit)
