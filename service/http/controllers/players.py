from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode
from uuid import UUID

import msgspec
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Body, PathParameter, QueryParameter, SkipValidation
from litestar.response import Response, Stream

from ...errors import BadRequest
from ...games.games import Games
from ...games.views import parse_cursor
from ...players.accounts import Accounts
from ..idempotency import RegistrationKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..openapi.patterns import NDJSON
from ..pages import LIMIT_DEFAULT, Cursor, Limit, next_link
from ..problems import documented, with_codes
from ..schemas import GameList, NewPlayerRequest, Player, PlayerCreated
from .common import parse_body


class PlayerController(Controller):
    path = "/players"
    tags = ("players",)

    @post(
        "/",
        operation_id="createPlayer",
        summary="Register a player; the token is shown only in this response",
        status_code=201,
        responses=with_codes(keyed_responses(400, 413, 415, 429, 503, anonymous=True), 400,
                             "name_reserved", "name_invisible_characters"),
        response_headers=response_headers("Location", "Idempotent-Replayed"),
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, accounts: NamedDependency[Accounts],
        data: Annotated[SkipValidation[NewPlayerRequest], Body()], idempotency: RegistrationKeyHeader = None,
    ) -> Response[PlayerCreated]:
        asked = parse_body(data, NewPlayerRequest)

        async def create() -> Response[PlayerCreated]:
            player, token = await accounts.create_player(asked.name, asked.token_name, asked.bot)
            created = PlayerCreated(id=player.id, name=player.name, token=token.secret, created_at=player.created_at,
                                    bot=player.bot)
            return Response(created, status_code=201, headers={"Location": f"/players/{created.id}"})

        return await replayable(request, state, idempotency, create, anonymous=True)

    @get("/{player_id:uuid}", operation_id="getPlayer", summary="A player's public profile",
         responses=documented(400, 404, 429, 503))
    async def read(
        self, accounts: NamedDependency[Accounts],
        player_id: Annotated[UUID, PathParameter(description="the player's id")]
    ) -> Player:
        return await accounts.profile(player_id)

    @get(
        "/{player_id:uuid}/games",
        operation_id="listPlayerGames",
        summary="A player's games, newest first, a page at a time (find and resume a game)",
        responses=documented(400, 404, 429, 503),
        response_headers=response_headers("Link"),
    )
    async def games(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        player_id: Annotated[UUID, PathParameter(description="the player's id")],
        status: Annotated[
            Literal["playing", "ended"] | None,
            QueryParameter(description="only games in progress, or only ended games (won, stalled, resigned)"),
        ] = None,
        limit: Limit = LIMIT_DEFAULT,
        cursor: Cursor = None,
    ) -> Response[GameList]:
        page = await games.player_games(player_id, status, cursor, limit)
        return Response(page, headers=next_link(request, page.next, limit))

    @get(
        "/{player_id:uuid}/games/export",
        operation_id="exportPlayerGames",
        summary="A player's public games with their event logs as application/x-ndjson, oldest first, one "
        "{\"type\": \"game\", \"game\": <GameView>, \"events\": [<EventView>...]} per line; complete "
        "unless max cuts it, when a last line {\"type\": \"next\", \"after\": <cursor>, \"href\": <URL>} "
        "names the request that continues there (text/plain by Accept: the same lines). A daily game before "
        "its date is over and a race game while "
        "its race runs are left out; hidden cards as public reads show them",
        responses=documented(400, 404, 429, 503),
        media_type=NDJSON,
    )
    async def export_games(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        player_id: Annotated[UUID, PathParameter(description="the player's id")],
        since: Annotated[
            str | None, QueryParameter(max_length=64, schema_extra={"format": "date-time"},
                                       description="only games started at or after this RFC 3339 "
                                       "date-time (with its offset, e.g. 2026-11-30T00:00:00Z)")
        ] = None,
        until: Annotated[
            str | None, QueryParameter(max_length=64, schema_extra={"format": "date-time"},
                                       description="only games started before this RFC 3339 date-time")
        ] = None,
        max: Annotated[
            int | None, QueryParameter(ge=1, le=2**31 - 1, description="at most this many games; without it, all")
        ] = None,
        after: Annotated[
            str | None,
            QueryParameter(pattern="^[A-Za-z0-9_-]{1,200}$",
                           description="the 'after' cursor of a previous export's 'next' line: the games after it"),
        ] = None,
    ) -> Stream:
        start, end = _instant(since, "since"), _instant(until, "until")
        if start is not None and end is not None and end <= start:
            raise BadRequest("'until' must be later than 'since'")
        key = None if after is None else _cursor(after)
        lines = await games.games_export(player_id, start, end, key, max)
        query = {name: value for name, value in (("since", since), ("until", until), ("max", max)) if value is not None}
        accept = request.headers.get("accept", "")
        media_type = "text/plain; charset=utf-8" if "text/plain" in accept and NDJSON not in accept else NDJSON
        return Stream(_ndjson_lines(lines, f"/players/{player_id}/games/export", query), media_type=media_type)


def _cursor(after: str) -> tuple[datetime, UUID]:
    try:
        return parse_cursor(after)
    except BadRequest:
        raise BadRequest("'after' is not a cursor of this export: pass the 'after' of its 'next' line") from None


def _instant(text: str | None, name: str) -> datetime | None:
    """An RFC 3339 date-time with its offset, or a 400 in our words."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None or "T" not in text.upper():
        raise BadRequest(f"'{name}' must be an RFC 3339 date-time with an offset, e.g. 2026-11-30T00:00:00Z")
    return moment


async def _ndjson_lines(lines: AsyncIterator[dict[str, Any]], path: str, query: dict[str, Any]) -> AsyncIterator[bytes]:
    async for line in lines:
        shown = line
        if line["type"] == "next":
            shown = {**line, "href": f"{path}?{urlencode({**query, 'after': line['after']})}"}
        yield msgspec.json.encode(shown) + b"\n"
