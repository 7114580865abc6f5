"""Tournaments (service/tournaments): create, join, the next deal, view, the standings live
(Server-Sent Events), and the list of tournaments (the newest list style: ``limit``, ``cursor``;
``items``, ``next`` and ``Link``)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Body, PathParameter, QueryParameter, SkipValidation
from litestar.response import Response, Stream

from ...games.games import Games
from ...streams.hub import MEDIA_TYPE, StreamHub
from ...streams.tournament_streams import DESCRIPTION, tournament_messages
from ...tournaments.rows import STATUSES
from ...tournaments.tournaments import Board, NewTournament, Tournaments
from ...tournaments.views import list_view, tournament_view
from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..pages import LIMIT_DEFAULT, Cursor, Limit, next_link
from ..problems import documented, with_codes
from ..schemas import GameView, NewTournamentRequest, TournamentList, TournamentView
from .common import bearer_token, etag, parse_body
from .races import no_body
from .streams import event_stream, stream_address, stream_owner

_TOURNAMENT = PathParameter(description="the tournament's id (a UUID)")
_TOKEN: list[dict[str, list[str]]] = [{"bearer": []}]
_STATUS = QueryParameter(
    description="only the tournaments of this status now: preparing, upcoming, running or finished (anything else: "
    "400 unknown_tournament_status); without it, every tournament",
    schema_extra={"enum": list(STATUSES)},
)


def _view(tournaments: Tournaments, board: Board) -> TournamentView:
    return tournament_view(board, tournaments.clock())


class TournamentController(Controller):
    path = "/tournaments"
    tags = ("tournaments",)

    @post(
        "/", operation_id="createTournament", status_code=201,
        summary="Create a tournament of duplicate play: every entrant plays the same secret deals in the same order "
        "(preparing until its deals are proven winnable)",
        responses=with_codes(keyed_responses(400, 401, 413, 415, 429, 503), 400, "tournament_deals_out_of_range",
                             "tournament_minutes_out_of_range", "tournament_start_passed",
                             "tournament_start_too_far"),
        response_headers=response_headers("Location", "Idempotent-Replayed"), security=_TOKEN,
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, tournaments: NamedDependency[Tournaments],
        data: Annotated[SkipValidation[NewTournamentRequest], Body()], idempotency: IdempotencyKeyHeader = None,
    ) -> Response[TournamentView]:
        asked = parse_body(data, NewTournamentRequest)
        wanted = NewTournament(asked.deals, asked.starts_at, asked.minutes,
                               None if asked.ruleset is None else str(asked.ruleset), asked.rated)

        async def create() -> Response[TournamentView]:
            view = _view(tournaments, await tournaments.create(bearer_token(request), wanted))
            return Response(view, status_code=201, headers={"Location": f"/tournaments/{view.id}"})

        return await replayable(request, state, idempotency, create)

    @get(
        "/", operation_id="listTournaments",
        summary="Tournaments, newest first, a page at a time; ?status= lists only those of one status",
        responses=with_codes(documented(400, 429, 503), 400, "unknown_tournament_status"),
        response_headers=response_headers("Link"),
    )
    async def listing(
        self, request: Request[Any, Any, Any], tournaments: NamedDependency[Tournaments],
        status: Annotated[str | None, _STATUS] = None, limit: Limit = LIMIT_DEFAULT, cursor: Cursor = None,
    ) -> Response[TournamentList]:
        page = list_view(await tournaments.listing(status, cursor, limit))
        return Response(page, headers=next_link(request, page.next, limit))

    @post(
        "/{tournament_id:uuid}/entries", operation_id="joinTournament", status_code=201,
        summary="Enter a tournament (any time before its end; 409 tournament_over after)",
        responses=keyed_responses(400, 401, 404, 413, 415, 429, 503, conflicts="tournament_over, already_entered"),
        response_headers=response_headers("Location", "Idempotent-Replayed"), security=_TOKEN,
    )
    async def join(
        self, request: Request[Any, Any, Any], state: State, tournaments: NamedDependency[Tournaments],
        tournament_id: Annotated[UUID, _TOURNAMENT],
        idempotency: IdempotencyKeyHeader = None,
    ) -> Response[TournamentView]:
        await no_body(request)

        async def join() -> Response[TournamentView]:
            view = _view(tournaments, await tournaments.join(tournament_id, bearer_token(request)))
            return Response(view, status_code=201, headers={"Location": f"/tournaments/{view.id}"})

        return await replayable(request, state, idempotency, join)

    @post(
        "/{tournament_id:uuid}/games", operation_id="dealTournamentGame", status_code=201,
        summary="Deal the caller their next deal of the tournament: an ordinary game, private to them until the "
        "tournament has finished",
        responses=keyed_responses(400, 401, 404, 413, 415, 429, 503,
                                  conflicts="tournament_game_in_play, tournament_over, tournament_deals_done, "
                                  "tournament_preparing, tournament_not_started, not_in_tournament"),
        response_headers=response_headers("Location", "ETag", "Idempotent-Replayed"), security=_TOKEN,
    )
    async def next_game(
        self, request: Request[Any, Any, Any], state: State, games: NamedDependency[Games],
        tournaments: NamedDependency[Tournaments],
        tournament_id: Annotated[UUID, _TOURNAMENT], idempotency: IdempotencyKeyHeader = None,
    ) -> Response[GameView]:
        await no_body(request)

        async def deal() -> Response[GameView]:
            token = bearer_token(request)
            game_id = await tournaments.next_game(tournament_id, token)
            view = await games.view(game_id, token)
            headers = {"Location": f"/games/{view.id}", "ETag": etag(view.version)}
            return Response(view, status_code=201, headers=headers)

        return await replayable(request, state, idempotency, deal)

    @get(
        "/{tournament_id:uuid}", operation_id="getTournament",
        summary="The tournament: status, times, and the standings (figures only, never a card)",
        responses=documented(400, 404, 429, 503),
    )
    async def read(self, tournaments: NamedDependency[Tournaments],
        tournament_id: Annotated[UUID, _TOURNAMENT]) -> TournamentView:
        return _view(tournaments, await tournaments.current(tournament_id))

    @get(
        "/{tournament_id:uuid}/stream", operation_id="streamTournament",
        summary="The tournament live (Server-Sent Events): its view, then each change of standings, then the end",
        description=DESCRIPTION, media_type=MEDIA_TYPE, response_description="an event stream: tournament ... , end",
        responses=documented(400, 401, 404, 429, 503), security=[{}, {"bearer": []}],
    )
    async def stream(
        self, request: Request[Any, Any, Any], tournaments: NamedDependency[Tournaments],
        streams: NamedDependency[StreamHub],
        tournament_id: Annotated[UUID, _TOURNAMENT],
    ) -> Stream:
        owner = await stream_owner(request, tournaments.accounts, bearer_token(request))
        subscription = streams.subscribe(tournament_id, owner, stream_address(request))
        try:
            board = await tournaments.current(tournament_id)
        except BaseException:
            subscription.close()
            raise
        return event_stream(tournament_messages(streams, subscription, tournaments, board), subscription)
