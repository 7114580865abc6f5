from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.params import Body, PathParameter, QueryParameter, SkipValidation
from litestar.response import Response

from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi import response_headers
from ..problems import documented
from ..schemas import GameList, NewPlayerRequest, Player, PlayerCreated
from .common import PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, games_of, parse_body, to_wire


class PlayerController(Controller):
    path = "/players"
    tags = ("players",)

    @post(
        "/",
        operation_id="createPlayer",
        summary="Register a player; the token is shown only in this response",
        status_code=201,
        responses=keyed_responses(400, 413, 415, 429, 503),
        response_headers=response_headers("Location", "Idempotent-Replayed"),
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, data: Annotated[SkipValidation[NewPlayerRequest], Body()],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[PlayerCreated]:
        asked = parse_body(data, NewPlayerRequest)

        async def create() -> Response[PlayerCreated]:
            created = to_wire(await games_of(state).create_player(asked.name, asked.token_name), PlayerCreated)
            return Response(created, status_code=201, headers={"Location": f"/players/{created.id}"})

        return await replayable(request, state, idempotency, create, anonymous=True)

    @get("/{player_id:uuid}", operation_id="getPlayer", summary="A player's public profile",
         responses=documented(400, 404, 429, 503))
    async def read(
        self, state: State, player_id: Annotated[UUID, PathParameter(description="the player's id")]
    ) -> Player:
        return to_wire(await games_of(state).player(player_id), Player)

    @get(
        "/{player_id:uuid}/games",
        operation_id="listPlayerGames",
        summary="A player's games, newest first, a page at a time (find and resume a game)",
        responses=documented(400, 404, 429, 503),
    )
    async def games(
        self,
        state: State,
        player_id: Annotated[UUID, PathParameter(description="the player's id")],
        status: Annotated[
            Literal["playing", "ended"] | None,
            QueryParameter(description="only games in progress, or only ended games (won, stalled, resigned)"),
        ] = None,
        limit: Annotated[
            int, QueryParameter(ge=1, le=PAGE_LIMIT_MAX, description="at most this many games")
        ] = PAGE_LIMIT_DEFAULT,
        before: Annotated[
            str | None,
            QueryParameter(
                pattern="^[A-Za-z0-9_-]{1,200}$",
                description="the 'nextBefore' cursor of the previous page (opaque): the games older than that page",
            ),
        ] = None,
    ) -> GameList:
        return to_wire(await games_of(state).player_games(player_id, status, before, limit), GameList)
