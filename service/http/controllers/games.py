from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Litestar, MediaType, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import OpenAPI
from litestar.params import Body, HeaderParameter, PathParameter, QueryParameter, SkipValidation
from litestar.response import Response, Stream
from msgspec import UnsetType

from ...games.games import Games
from ...games.hints import Hints as HintService
from ..caching import IMMUTABLE
from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..openapi.patterns import IDEMPOTENCY_KEY, IF_MATCH, NDJSON, header
from ..openapi.plugins import ComponentNamePlugin, DealUnionPlugin, TaggedUnionPlugin
from ..pages import LIMIT_DEFAULT, LIMIT_MAX, EventCursor, next_link
from ..problems import documented, problem_response
from ..schemas import EventPage, EventView, GameView, Hints, LegalMoves, MoveRequest, MoveResult, NewGameRequest
from .common import (
    bearer_token,
    etag,
    optional_bearer,
    parse_new_game,
)
from .deals import DAILY_BUSY
from .disconnect import unless_disconnected

_GAME_ID = PathParameter(description="the game's id (a UUID)")
_Limit = Annotated[
    int,
    QueryParameter(
        ge=1, le=LIMIT_MAX,
        description="at most this many events: 1 .. 200, default 50 in a JSON page. As application/x-ndjson: "
        "without it, every event after the cursor (an export); with it, a page, and a Link header (rel=\"next\") "
        "when more follow",
    ),
]
# Reads are public, except a daily game's until its date (UTC) is over and a race game's while its
# race runs: then only its player's token.
_READ_SECURITY: list[dict[str, list[str]]] = [{}, {"bearer": []}]
_HINTS_CONFLICT = {
    409: problem_response(
        "Conflict (problem+json, code game_over: the game has ended; shared_deal: solver hints are off on a deal in "
        "play, a daily deal until its date is over or a race until it has finished, and on any copy of one, however "
        "it was dealt)"
    )
}


class GameController(Controller):
    path = "/games"
    tags = ("games",)

    @post(
        "/",
        operation_id="createGame",
        summary="Deal a new game: by seed, explicit deck, pool deal, daily deal or lesson (the ruleset defaults to "
        "open-runs)",
        description=(
            "A daily deal is one game per player while its date (UTC) is on: a second one is `409 "
            "daily_already_played`, whose `game` names the player's game of it; once the date is over the deal may "
            "be dealt again as practice. Dealing a `deck` that copies a deal in play is allowed (the solver refuses "
            "it: `shared_deal` on its hints and analysis)."
        ),
        status_code=201,
        responses={**keyed_responses(400, 401, 413, 415, 429, 503, conflicts="daily_already_played"), 503: DAILY_BUSY},
        response_headers=response_headers("Location", "ETag", "Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, games: NamedDependency[Games],
        data: Annotated[SkipValidation[NewGameRequest], Body()], idempotency: IdempotencyKeyHeader = None,
    ) -> Response[GameView]:
        asked = parse_new_game(data)
        given = {} if asked.deal is None else {
            name: value for name, value in msgspec.structs.asdict(asked.deal).items() if value is not None
        }

        async def create() -> Response[GameView]:
            view = await games.create_game(bearer_token(request), asked.ruleset, given)
            headers = {"Location": f"/games/{view.id}", "ETag": etag(view.version)}
            return Response(view, status_code=201, headers=headers)

        return await replayable(request, state, idempotency, create)

    @get(
        "/{game_id:uuid}",
        operation_id="getGame",
        summary="The game view (ETag is its version; If-None-Match gives 304)",
        responses=documented(400, 401, 403, 404, 429, 503),
        response_headers=response_headers("ETag"),
        security=_READ_SECURITY,
    )
    async def read(
        self, request: Request[Any, Any, Any], games: NamedDependency[Games], game_id: Annotated[UUID, _GAME_ID]
    ) -> Response[GameView]:
        view = await games.view(game_id, optional_bearer(request))
        return Response(view, headers={"ETag": view_etag(view)})

    @get(
        "/{game_id:uuid}/legal-moves",
        operation_id="listLegalMoves",
        summary="Every legal move now, each a MoveRequest that can be sent back as it is",
        responses=documented(400, 401, 403, 404, 429, 503),
        response_headers=response_headers("ETag"),
        security=_READ_SECURITY,
    )
    async def legal_moves(
        self, request: Request[Any, Any, Any], games: NamedDependency[Games], game_id: Annotated[UUID, _GAME_ID]
    ) -> Response[LegalMoves]:
        body = await games.legal_moves(game_id, optional_bearer(request))
        return Response(body, headers={"ETag": etag(body.version)})

    @get(
        "/{game_id:uuid}/hints",
        operation_id="getHints",
        summary="Legal moves ranked by usefulness; ?solver=true adds the solver's next move (marks the game assisted)",
        responses={**documented(400, 401, 403, 404), **_HINTS_CONFLICT, **documented(429), 503: problem_response(
            "Service unavailable (problem+json, code solver_busy: too many solver hints wait for the solver; "
            "unavailable: the database is away), with Retry-After")},
        response_headers=response_headers("ETag"),
        security=[{}, {"bearer": []}],
    )
    async def hints(
        self,
        request: Request[Any, Any, Any],
        hints: NamedDependency[HintService],
        game_id: Annotated[UUID, _GAME_ID],
        solver: Annotated[
            bool,
            QueryParameter(
                description=(
                    "also ask the solver (needs the player's bearer token; records that the game was assisted). "
                    "Refused with 409 shared_deal on a daily deal until its date (UTC) is over and in a race "
                    "until it has finished, and on any game whose deck is a copy of either (relabelled copies too: "
                    "ranks rotated, suits swapped by colour, columns reordered): the solver sees the hidden "
                    "cards. Limited per player (all their "
                    "tokens together) and per client address (429 rate_limited with Retry-After); 503 "
                    "solver_busy with Retry-After while too many solver hints wait for the solver. A refused "
                    "hint records nothing."
                )
            ),
        ] = False,
    ) -> Response[Hints]:
        if not solver:
            found = await hints.hints(game_id, False, optional_bearer(request))
        else:  # costly: dropped if the client goes away before the solver has answered
            address = request.client.host if request.client else "?"
            found = await unless_disconnected(request, hints.hints(game_id, True, bearer_token(request), address))
        body = found
        return Response(body, headers={"ETag": etag(body.version)})

    @get(
        "/{game_id:uuid}/events",
        operation_id="listEvents",
        summary="The event log: a JSON page, or the same events as application/x-ndjson by Accept; hidden cards "
        "withheld while playing",
        responses=documented(400, 401, 403, 404, 429, 503),
        response_headers=response_headers("Link"),
        media_type=MediaType.JSON,
        security=_READ_SECURITY,
    )
    async def events(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        game_id: Annotated[UUID, _GAME_ID],
        cursor: EventCursor = None,
        limit: _Limit = LIMIT_DEFAULT,
    ) -> Response[EventPage]:
        after = 0 if cursor is None else int(cursor)
        if _wants_ndjson(request):
            return await _export(request, games, game_id, after, limit_given(request), NDJSON)
        page = await games.events(game_id, after, limit, optional_bearer(request))
        return Response(page, headers=next_link(request, page.next, limit))

    @get(
        "/{game_id:uuid}/events.ndjson",
        operation_id="exportEvents",
        summary="The event log as application/x-ndjson, one event (an EventView) per line, whatever the Accept "
        "header says but text/plain (the same lines, for clients that read text): every event, or with limit at most "
        "that many and a Link header where more follow",
        responses=documented(400, 401, 403, 404, 429, 503),
        response_headers=response_headers("Link"),
        media_type=NDJSON,
        security=_READ_SECURITY,
    )
    async def export_events(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        game_id: Annotated[UUID, _GAME_ID],
        cursor: EventCursor = None,
        limit: _Limit = LIMIT_DEFAULT,
    ) -> Response[str]:
        accept = request.headers.get("accept", "")
        as_text = "text/plain" in accept and NDJSON not in accept
        after = 0 if cursor is None else int(cursor)
        lines = "text/plain; charset=utf-8" if as_text else NDJSON
        return await _export(request, games, game_id, after, limit_given(request), lines)

    @get(
        "/{game_id:uuid}/states/{version:int}",
        operation_id="getGameState",
        summary="The game view as it was after that many events (rebuilt from the stored events)",
        responses=documented(400, 401, 403, 404, 429, 503),
        response_headers=response_headers("ETag"),
        security=_READ_SECURITY,
    )
    async def state_at(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        game_id: Annotated[UUID, _GAME_ID],
        version: Annotated[
            int, PathParameter(ge=1, le=2**31 - 1, description="a version of the game, 1 .. its current version")
        ],
    ) -> Response[GameView]:
        view = await games.state_at(game_id, version, optional_bearer(request))
        headers = {"ETag": view_etag(view)}
        if view.status == "playing" or not isinstance(view.table.stock.cards, UnsetType):
            headers["Cache-Control"] = IMMUTABLE  # its events never change, nor (now) what it shows
        return Response(view, headers=headers)


def limit_given(request: Request[Any, Any, Any]) -> int | None:
    """The ``limit`` when the client sent one (validated by then): an NDJSON export without one is complete."""
    return int(request.query_params["limit"]) if "limit" in request.query_params else None


async def _export(
    request: Request[Any, Any, Any], games: Games, game_id: UUID, after: int, limit: int | None, media_type: str
) -> Response[Any]:
    """The events as lines of JSON: every one after ``after``, streamed a page at a time; with a
    ``limit``, at most that many, and when that cut the log short a ``Link: <...?cursor=N&limit=L>;
    rel="next"`` header names where the rest begins. ``Response[Any]``: the OpenAPI document describes the body
    as the string it is on the wire (exportEvents) or as listEvents' other media type."""
    token = optional_bearer(request)
    if limit is not None:
        page = await games.events(game_id, after, limit, token)
        lines = b"".join(msgspec.json.encode(event) + b"\n" for event in page.items)
        return Response(lines, media_type=media_type, headers=next_link(request, page.next, limit))
    pages = await games.event_export(game_id, after, token)
    return _OwnMediaTypeStream(_lines(pages), media_type=media_type)


class _OwnMediaTypeStream(Stream):
    """A stream whose media type wins over its handler's (listEvents is JSON unless Accept asks for
    ndjson; Litestar would otherwise prefer the handler's)."""

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Any:
        return super().to_asgi_response(*args, **{**kwargs, "media_type": self.media_type})


async def _lines(pages: AsyncIterator[list[EventView]]) -> AsyncIterator[bytes]:
    async for events in pages:
        yield b"".join(msgspec.json.encode(event) + b"\n" for event in events)


def view_etag(view: GameView) -> str:
    """A game view's ETag: its version, ``"7"``; ``"7-hidden"`` while an ended game's face-down cards
    stay hidden (a daily game until its date is over, a race game until the race is), since the
    view changes when they are shown."""
    hidden = view.status != "playing" and isinstance(view.table.stock.cards, UnsetType)
    return f'"{view.version}-hidden"' if hidden else etag(view.version)


def _wants_ndjson(request: Request[Any, Any, Any]) -> bool:
    accept = request.headers.get("accept", "")
    return NDJSON in accept and "application/json" not in accept.split(NDJSON)[0]


class _MoveDocument(Controller):
    """``POST /games/{id}/moves`` as OpenAPI documents it. The operation is served by the ASGI
    route ``service.http.move_route.make_move`` (Litestar documents no ASGI route), so this
    declaration only ever goes into a document: ``document_move`` builds it in an app of its own
    that is never served."""

    path = "/games"
    tags = ("games",)

    @post(
        "/{game_id:uuid}/moves",
        operation_id="makeMove",
        summary="Make one move: draw, recycle, move a card, undo or resign",
        status_code=200,
        responses={**documented(400, 401, 403, 404, 409, 412, 413, 415, 422, 429, 503), 400: problem_response(
            "Invalid request (problem+json, code invalid_request; idempotency_key_reused: the Idempotency-Key was "
            "sent with another move)")},
        response_headers=response_headers("ETag", "Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def move(
        self,
        request: Request[Any, Any, Any],
        state: State,
        game_id: Annotated[UUID, _GAME_ID],
        data: Annotated[SkipValidation[MoveRequest], Body()],
        if_match_header: Annotated[
            str | None,
            HeaderParameter(
                name="If-Match",
                description='apply only at this version, e.g. "7"',
                schema_extra=header(IF_MATCH, 'apply only at this version: "7", W/"7" or 7; * for any'),
            ),
        ] = None,
        idempotency_header: Annotated[
            str | None,
            HeaderParameter(
                name="Idempotency-Key",
                description="a retry with the same key returns the first result",
                schema_extra=header(
                    IDEMPOTENCY_KEY,
                    "1-255 visible ASCII characters; a retry with the same key returns the first result, "
                    "the same key with another move is a 400 idempotency_key_reused (as on the creating "
                    "POSTs). Keys are kept "
                    "IDEMPOTENCY_KEY_HOURS (at least 24 hours); after that a key is new again",
                ),
            ),
        ] = None,
    ) -> Response[MoveResult]:
        raise AssertionError("documentation only: service.http.move_route.make_move serves this operation")



def document_move(document: OpenAPI) -> None:
    """Add the move operation, and the schemas it names, to the app's document."""
    config = OpenAPIConfig(title=document.info.title, version=document.info.version)
    plugins = [ComponentNamePlugin(), DealUnionPlugin(), TaggedUnionPlugin()]
    alone = Litestar(route_handlers=[_MoveDocument], plugins=plugins, openapi_config=config, logging_config=None)
    source = alone.openapi_schema
    if document.paths is None or source.paths is None:
        raise ValueError("an OpenAPI document without paths")
    document.paths.update(source.paths)
    components, schemas = document.components, source.components.schemas or {}
    components.schemas = {**schemas, **(components.schemas or {})}
