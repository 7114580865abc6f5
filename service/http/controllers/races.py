"""Races (service/races/races.py): create, join, leave, start, cancel, view, and the live standings
(Server-Sent Events)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Body, PathParameter, SkipValidation
from litestar.response import Response, Stream

from ...errors import BadRequest
from ...races.races import Races
from ...races.rows import RaceRow
from ...races.views import lobby_view, race_view
from ...streams.hub import MEDIA_TYPE, StreamHub
from ...streams.race_streams import DESCRIPTION, race_messages
from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..pages import LIMIT_DEFAULT, Cursor, Limit, next_link
from ..problems import documented, problem_response, with_codes
from ..schemas import NewRaceRequest, OpenRaces, RaceView
from .common import bearer_token, parse_new_race
from .streams import event_stream, stream_address, stream_owner

_RACE_ID = PathParameter(description="the race's id (a UUID)")


async def no_body(request: Request[Any, Any, Any]) -> None:
    """Join and start take no body: none at all, or an empty JSON object; anything else is a 400."""
    raw = await request.body()
    if not raw.strip():
        return
    try:
        empty = msgspec.json.decode(raw) == {}
    except msgspec.DecodeError:
        empty = False
    if not empty:
        raise BadRequest("this request takes no body (or an empty JSON object)")


def _created(race: RaceRow) -> Response[RaceView]:
    return Response(race_view(race), status_code=201, headers={"Location": f"/races/{race.id}"})


class RaceController(Controller):
    path = "/races"
    tags = ("races",)

    @post(
        "/",
        operation_id="createRace",
        summary="Create a race on one deal (open; its creator is the first entrant)",
        status_code=201,
        responses={
            **keyed_responses(400, 401, 413, 415, 429, 503),
            429: problem_response(
                "Too many requests (problem+json, code rate_limited; race_deal_pending: the player's earlier "
                "races without a deal are still waiting for theirs), with Retry-After"
            ),
            503: problem_response(
                "Service unavailable (problem+json, code race_deals_busy: too many races wait for their secret "
                "deal to be proven winnable; unavailable: no deal was proven in time, or the database is away), "
                "with Retry-After"
            ),
        },
        response_headers=response_headers("Location", "Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, races: NamedDependency[Races],
        data: Annotated[SkipValidation[NewRaceRequest], Body()],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[RaceView]:
        asked = parse_new_race(data)

        async def create() -> Response[RaceView]:
            return _created(await races.create(bearer_token(request), asked))

        return await replayable(request, state, idempotency, create)

    @post(
        "/{race_id:uuid}/entries",
        operation_id="joinRace",
        summary="Join an open race (409 once it has started or is full, or if you are in it already)",
        status_code=201,
        responses=keyed_responses(400, 401, 404, 413, 415, 429, 503,
                                  conflicts="race_not_open, race_full, already_entered"),
        response_headers=response_headers("Location", "Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def join(
        self, request: Request[Any, Any, Any], state: State, races: NamedDependency[Races],
        race_id: Annotated[UUID, _RACE_ID],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[RaceView]:
        await no_body(request)

        async def join() -> Response[RaceView]:
            return _created(await races.join(race_id, bearer_token(request)))

        return await replayable(request, state, idempotency, join)

    @post(
        "/{race_id:uuid}/start",
        operation_id="startRace",
        summary="Start the race (its creator only): every entrant is dealt a game of the same deck at once",
        status_code=200,
        responses=keyed_responses(400, 401, 403, 404, 413, 415, 429, 503, conflicts="race_not_open"),
        response_headers=response_headers("Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def start(
        self, request: Request[Any, Any, Any], state: State, races: NamedDependency[Races],
        race_id: Annotated[UUID, _RACE_ID],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[RaceView]:
        await no_body(request)

        async def start() -> Response[RaceView]:
            return Response(race_view(await races.start(race_id, bearer_token(request))))

        return await replayable(request, state, idempotency, start)

    @delete(
        "/{race_id:uuid}/entries/me",
        operation_id="leaveRace",
        summary="Leave an open race (its creator leaving cancels it: every entrant's race stream ends)",
        status_code=200,
        responses=with_codes(documented(400, 401, 404, 409, 429, 503), 409, "not_in_race", "race_not_open"),
        security=[{"bearer": []}],
    )
    async def leave(
        self, request: Request[Any, Any, Any], races: NamedDependency[Races], race_id: Annotated[UUID, _RACE_ID]
    ) -> RaceView:
        return race_view(await races.leave(race_id, bearer_token(request)))

    @post(
        "/{race_id:uuid}/cancel",
        operation_id="cancelRace",
        summary="Cancel an open race (its creator only): it ends, never started, and its streams say so",
        status_code=200,
        responses=keyed_responses(400, 401, 403, 404, 413, 415, 429, 503, conflicts="race_not_open",
                                  forbidden="not_race_creator"),
        response_headers=response_headers("Idempotent-Replayed"),
        security=[{"bearer": []}],
    )
    async def cancel(
        self, request: Request[Any, Any, Any], state: State, races: NamedDependency[Races],
        race_id: Annotated[UUID, _RACE_ID],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[RaceView]:
        await no_body(request)

        async def cancel() -> Response[RaceView]:
            return Response(race_view(await races.cancel(race_id, bearer_token(request))))

        return await replayable(request, state, idempotency, cancel)

    @get(
        "/open",  # not "/": Litestar's automatic OPTIONS would then name only one of GET and POST in Allow
        operation_id="listOpenRaces",
        summary="Open races to join, newest first (the lobby)",
        responses=documented(400, 429, 503),
        response_headers=response_headers("Link"),
    )
    async def lobby(
        self, request: Request[Any, Any, Any], races: NamedDependency[Races], limit: Limit = LIMIT_DEFAULT,
        cursor: Cursor = None,
    ) -> Response[OpenRaces]:
        page = lobby_view(await races.lobby(limit, cursor))
        return Response(page, headers=next_link(request, page.next, limit))

    @get(
        "/{race_id:uuid}",
        operation_id="getRace",
        summary="The race: status, ruleset, deal source and per entrant their game's figures and place (never a card)",
        responses=documented(400, 404, 429, 503),
    )
    async def read(self, races: NamedDependency[Races], race_id: Annotated[UUID, _RACE_ID]) -> RaceView:
        return race_view(await races.current(race_id))

    @get(
        "/{race_id:uuid}/stream",
        operation_id="streamRace",
        summary="The race live (Server-Sent Events): its view, then each change of standings, then the end",
        description=DESCRIPTION,
        media_type=MEDIA_TYPE,
        response_description="an event stream: race ... , end",
        responses=documented(400, 401, 404, 429, 503),
        security=[{}, {"bearer": []}],
    )
    async def stream(
        self, request: Request[Any, Any, Any], races: NamedDependency[Races], streams: NamedDependency[StreamHub],
        race_id: Annotated[UUID, _RACE_ID]
    ) -> Stream:
        owner = await stream_owner(request, races.accounts, bearer_token(request))
        # before reading: no change can slip between
        subscription = streams.subscribe(race_id, owner, stream_address(request))
        try:
            race = await races.current(race_id)
        except BaseException:
            subscription.close()
            raise
        return event_stream(race_messages(streams, subscription, races, race), subscription)
