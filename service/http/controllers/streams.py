"""``GET /games/{id}/stream``: a game live, as Server-Sent Events (see service.streams.game_streams)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get
from litestar.background_tasks import BackgroundTask
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, PathParameter, QueryParameter
from litestar.response import Response, Stream

from ...errors import BadRequest
from ...games.games import Games
from ...players.accounts import Accounts
from ...streams.game_streams import game_messages
from ...streams.hub import MEDIA_TYPE, StreamHub, Subscription
from ..openapi.patterns import VERSION_HEADER, header
from ..problems import documented
from .common import bearer_token

_VERSION = re.compile(r"[ \t]*([0-9]{1,10})[ \t]*")  # service.http.openapi.patterns.VERSION_HEADER
_DIGITS = re.compile(r"([0-9]{1,10})")
_MAX_VERSION = 2**31 - 1

DESCRIPTION = """\
Server-Sent Events (`text/event-stream`), in this order:

* `event: view`, `id: <version>`, `data: <the game view>`: the game as it is now;
* `event: game-event`, `id: <version>`, `data: <the event>`: each event appended from then on, by
  any server process, exactly as `GET /games/{id}/events` shows it (hidden cards withheld while
  the game is in progress);
* `event: view` again after each change, once every event appended so far was sent: the game as
  it is now (an undo's event does not say what the waste shows afterwards);
* `: keep-alive` comment lines when nothing else was sent for a while (15 s by default);
* `event: analysis`, `id: <final version>`, `data: {"status", "progress": {"done", "total"}}`: when
  the game has ended and its analysis was asked for (`POST /games/{id}/analysis`), its status
  and progress whenever they change, until it is `done` or `failed` (then `GET
  /games/{id}/analysis` has the verdicts); before `end`;
* `event: end`, `id: <final version>`, `data: <the final view>` once the game has ended (won,
  stalled or resigned), after its last events (and its analysis); then the server closes the stream.

**Resuming**: with `Last-Event-ID: <version>` (EventSource sends it when it reconnects) or
`?after=<version>` (the header wins), no view is sent: the stream starts with the events after
that version. Resuming a game that has ended after its final version answers `204` (which tells
EventSource to stop reconnecting).

A bearer token is optional, except for a daily game whose date (UTC) is not over yet (only its
player: `401` without the token, `403` with another) and a race game while its race runs (only
its player: `403` for anyone else). Open streams are capped
per player (per client address without a token) and per client address: one more is
`429 rate_limited` with `Retry-After`. \
When the server stops, the stream's last message is `event: shutdown` (`retry: 1000`, `data:
{"detail": "..."}`, no `id`); if it loses its database, the stream just ends. Either way, reconnect
with `Last-Event-ID`.
"""


def event_stream(messages: AsyncIterator[bytes], subscription: Subscription) -> Stream:
    """The Server-Sent Events response of ``subscription``: cached by nobody, not buffered by a
    proxy, and the subscription closed once the response is done."""
    return Stream(
        messages,
        media_type=MEDIA_TYPE,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(subscription.close),
    )


async def stream_owner(request: Request[Any, Any, Any], accounts: Accounts, token: str | None) -> str:
    """Whose slot an open stream takes: the token's player, else the client address."""
    if token is not None:
        return f"player:{await accounts.player_id(token)}"
    return stream_address(request)


def stream_address(request: Request[Any, Any, Any]) -> str:
    """The client address, whose slots every open stream from it takes too."""
    return f"address:{request.client.host if request.client else '?'}"


def _version(text: str | None, what: str, pattern: re.Pattern[str]) -> int | None:
    if text is None:
        return None
    found = pattern.fullmatch(text)
    if found is None or int(found.group(1)) > _MAX_VERSION:
        raise BadRequest(f"{what} must be a game version, 0 .. {_MAX_VERSION}")
    return int(found.group(1))


def _resume_after(header: str | None, query: str | None) -> int | None:
    """Both are checked (bad input is refused even where it would not count); the header wins."""
    after = _version(query, "?after", _DIGITS)
    resume = _version(header, "Last-Event-ID (the id of the last message received)", _VERSION)
    return after if resume is None else resume


class StreamController(Controller):
    path = "/games"
    tags = ("games",)

    @get(
        "/{game_id:uuid}/stream",
        operation_id="streamGame",
        summary="The game live (Server-Sent Events): its view, each new event and view, an analysis's progress, "
        "the end",
        description=DESCRIPTION,
        media_type=MEDIA_TYPE,
        response_description="an event stream: view, game-event ... , analysis ... , end",
        responses={
            204: ResponseSpec(
                data_container=None,
                description="resumed after the final version of a finished game: nothing more will come",
            ),
            **documented(400, 401, 403, 404, 429, 503),
        },
        security=[{}, {"bearer": []}],
    )
    async def stream(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        streams: NamedDependency[StreamHub],
        game_id: Annotated[UUID, PathParameter(description="the game's id (a UUID)")],
        after: Annotated[
            str | None,  # parsed like Last-Event-ID: digits only (no "null", no "1.0")
            QueryParameter(
                description="resume: only the events after this version, no view",
                schema_extra={"one_of": None, "type": "integer", "minimum": 0, "maximum": _MAX_VERSION},
            ),
        ] = None,
        last_event_id: Annotated[
            str | None,
            HeaderParameter(
                name="Last-Event-ID",
                description="resume after this version (wins over ?after)",
                schema_extra=header(VERSION_HEADER, "resume after this version, 0 .. 2^31 - 1 (wins over ?after)"),
            ),
        ] = None,
    ) -> Stream:
        hub = streams
        resume = _resume_after(last_event_id, after)
        token = bearer_token(request)
        owner = await stream_owner(request, games.access.accounts, token)
        # before reading: no append can slip between
        subscription = hub.subscribe(game_id, owner, stream_address(request))
        try:
            game = await games.stored_game(game_id)
            withhold = await games.access.readable(game, token)  # a race game: its player only, while the race runs
            if resume is not None and resume > game.version:
                raise BadRequest(
                    f"game {game_id} is at version {game.version}: there is no version {resume} to resume after"
                )
        except BaseException:
            subscription.close()
            raise
        if resume is not None and game.finished_at is not None and resume >= game.version:
            subscription.close()
            # The handler's type names its one success class (Stream); the 204 is documented beside it.
            return Response(None, status_code=204)  # type: ignore[return-value]
        return event_stream(game_messages(hub, subscription, game, resume, withhold), subscription)
