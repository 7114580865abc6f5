"""``GET /watch`` and ``POST /watch``: many games live on one Server-Sent Events connection
(service.streams.watch). The two forms differ only in where the ids come from: the query
(``?games=<id>,<id>&players=<id>``) or a JSON body (300 ids do not fit every proxy's URL limit)."""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import Body, HeaderParameter, QueryParameter, SkipValidation
from litestar.response import Stream

from ...errors import WatchRefused
from ...games.games import Games
from ...streams.hub import MEDIA_TYPE, StreamHub
from ...streams.watch import MAX_IDS, WatchRequest, open_watch, watch_messages
from ..openapi.patterns import header
from ..problems import documented, with_codes
from ..schemas.watch import WatchRequest as WatchBody
from ..wording import shown
from .common import bearer_token
from .streams import event_stream, stream_address, stream_owner

_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_ID = re.compile(_UUID)
_LAST_EVENT_ID = re.compile(rf"[ \t]*({_UUID}):([0-9]{{1,10}})[ \t]*")
_IDS_PATTERN = f"^{_UUID}(,{_UUID})*$"
_LAST_EVENT_ID_PATTERN = f"^[ \\t]*{_UUID}:[0-9]{{1,10}}[ \\t]*$"
_MAX_VERSION = 2**31 - 1
CODES = ("watch_bad_id", "watch_too_many_ids", "watch_nothing_to_watch", "watch_bad_position", "watch_bad_body")

DESCRIPTION = """\
Many games live on one connection, as Server-Sent Events (`text/event-stream`): the games named
in `games`, and the games of the players named in `players` (their games in progress when the
watch opens, the newest 10 of each, and every game they start while it is open). At most 300
distinct ids in all, at least one; an id given twice counts once. In this order:

* `event: watching`, no `id`, `data: {"games": [...], "players": [...], "unavailable": [...]}`: the
  games the watch starts with that the caller may see, the players, and the named game ids that
  are no game the caller may see (an unknown id and a private game look the same);
* per game, `event: view`, `id: <game id>:<version>`, `data: {"game": <id>, "view": <the game view>}`
  first (or only `event: end` with the final view for a game already over);
* per game, `event: game-event`, `id: <game id>:<version>`, `data: {"game": <id>, "event": <the
  event>}` for each event appended from then on, exactly as `GET /games/{id}/events` shows it to
  anyone (hidden cards withheld), then `event: view` with the game as it is now;
* per game, `event: end`, `data: {"game": <id>, "view": <the final view>}` once it has ended; the
  watch goes on with the others (it stays open until the client closes it);
* `: keep-alive` comment lines when nothing else was sent for a while (15 s by default).

**Private games** (a daily game until its UTC date is over, a race game while its race runs) are
shown only to their own player (send the bearer token); to anyone else a named one is listed as
`unavailable`, one found through a player is not mentioned, and either starts appearing (its view
first) once it becomes public. **Unknown game ids** are listed as `unavailable` too, never a 404:
a site watching 300 games keeps the other 299.

**Resuming**: EventSource repeats the request with `Last-Event-ID: <game id>:<version>`; that game
resumes after that version (its events after it, no first view), and every other game starts again
with its view, so nothing is missed. `POST` may also give `after`: `{"<game id>": <version>, ...}`
resumes each of those games after its version (the header wins for its game). A game resumed
after its final version sends nothing more; a version the game has not reached gets its view.

A bearer token is optional. One watch takes one stream slot, however many games it follows: open
streams are capped per player (per client address without a token) and per client address,
game, race and watch streams together (`429 rate_limited`). Bad input is a `400` and opens
nothing: an id that is not a UUID (`watch_bad_id`), more than 300 ids (`watch_too_many_ids`),
neither games nor players (`watch_nothing_to_watch`), a `Last-Event-ID` or `after` that is not a
game id and version (`watch_bad_position`), a body that is not `{"games", "players", "after"}`
(`watch_bad_body`).
"""
_RESPONSES = with_codes(documented(400, 401, 413, 415, 429, 503), 400, *CODES)
_GET_RESPONSES = with_codes(documented(400, 401, 429, 503), 400, *CODES[:4])
_LAST_EVENT_ID_HEADER = HeaderParameter(
    name="Last-Event-ID",
    description="resume that game after that version: <game id>:<version>",
    schema_extra=header(_LAST_EVENT_ID_PATTERN, "<game id>:<version> (the id of the last message received)"),
)


def _ids(values: list[Any], what: str) -> list[uuid.UUID]:
    ids = []
    for value in values:
        if not (isinstance(value, str) and _ID.fullmatch(value)):
            raise WatchRefused(f"every id in '{what}' must be a UUID (8-4-4-4-12 hex digits), not {shown(value)}",
                               "watch_bad_id")
        ids.append(uuid.UUID(value))
    return list(dict.fromkeys(ids))  # an id given twice counts once


def _position(game: Any, version: Any, where: str) -> tuple[uuid.UUID, int]:
    if not (isinstance(game, str) and _ID.fullmatch(game)):
        raise WatchRefused(f"{where} must name a game by its UUID, not {shown(game)}", "watch_bad_position")
    if isinstance(version, float) and version.is_integer():
        version = int(version)  # JSON (and JSON Schema's integer) does not tell 5 from 5.0
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= _MAX_VERSION:
        raise WatchRefused(f"{where} must give a game version, 0 .. {_MAX_VERSION}, not {shown(version)}",
                           "watch_bad_position")
    return uuid.UUID(game), version


def _last_event_id(text: str | None) -> tuple[uuid.UUID, int] | None:
    if text is None:
        return None
    found = _LAST_EVENT_ID.fullmatch(text)
    if found is None or int(found.group(2)) > _MAX_VERSION:
        raise WatchRefused(
            "Last-Event-ID must be the id of a watch's message: <game id>:<version>, the version 0 .. "
            f"{_MAX_VERSION}", "watch_bad_position",
        )
    return uuid.UUID(found.group(1)), int(found.group(2))


def watch_request(games: list[Any], players: list[Any], after: dict[Any, Any], last_event_id: str | None
                  ) -> WatchRequest:
    """The checked request: ids distinct, at most ``MAX_IDS`` of them, at least one; ``after`` with
    ``Last-Event-ID`` merged in (the header wins for its game)."""
    game_ids, player_ids = _ids(games, "games"), _ids(players, "players")
    if not game_ids and not player_ids:
        raise WatchRefused("a watch needs at least one game or player id ('games', 'players')",
                           "watch_nothing_to_watch")
    if len(game_ids) + len(player_ids) > MAX_IDS:
        raise WatchRefused(f"a watch takes at most {MAX_IDS} distinct ids, games and players together, not "
                           f"{len(game_ids) + len(player_ids)}", "watch_too_many_ids")
    positions = dict(_position(game, version, "'after'") for game, version in after.items())
    resume = _last_event_id(last_event_id)
    if resume is not None:
        positions[resume[0]] = resume[1]
    return WatchRequest(tuple(game_ids), tuple(player_ids), positions)


def _query_list(text: str | None) -> list[Any]:
    return [] if text is None else text.split(",")


def _body(data: object) -> WatchRequest:
    if not isinstance(data, dict):
        raise WatchRefused(f'the request body must be a JSON object such as {{"games": [...]}}, not {shown(data)}',
                           "watch_bad_body")
    extra = [str(name) for name in data if name not in ("games", "players", "after")]
    if extra:
        raise WatchRefused(f"the request body takes only 'games', 'players' and 'after', not {', '.join(extra)}",
                           "watch_bad_body")
    games, players, after = data.get("games", []), data.get("players", []), data.get("after", {})
    for name, value, kind in (("games", games, list), ("players", players, list), ("after", after, dict)):
        if not isinstance(value, kind):
            wanted = "a list of ids" if kind is list else 'an object such as {"<game id>": 7}'
            raise WatchRefused(f"'{name}' must be {wanted}, not {shown(value)}", "watch_bad_body")
    return watch_request(games, players, after, None)


class WatchController(Controller):
    path = "/watch"
    tags = ("games",)

    async def _open(self, request: Request[Any, Any, Any], games: Games, hub: StreamHub,
                    asked: WatchRequest) -> Stream:
        token = bearer_token(request)
        owner = await stream_owner(request, games.access.accounts, token)
        subscription = hub.subscribe(uuid.uuid4(), owner, stream_address(request))  # before reading
        try:
            watch = await open_watch(hub, subscription, games, token, asked)
        except BaseException:
            subscription.close()
            raise
        return event_stream(watch_messages(watch), subscription)

    @get(
        "/",
        operation_id="watchGames",
        summary="Many games live on one connection (Server-Sent Events): named games and players' games",
        description=DESCRIPTION,
        media_type=MEDIA_TYPE,
        response_description="an event stream: watching, then view, game-event ... , end per game",
        responses=_GET_RESPONSES,
        security=[{}, {"bearer": []}],
    )
    async def watch(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        streams: NamedDependency[StreamHub],
        game_ids: Annotated[str | None, QueryParameter(
            name="games", description="game ids, comma-separated",
            schema_extra={"one_of": None, "type": "string", "pattern": _IDS_PATTERN})] = None,
        player_ids: Annotated[str | None, QueryParameter(
            name="players", description="player ids, comma-separated",
            schema_extra={"one_of": None, "type": "string", "pattern": _IDS_PATTERN})] = None,
        last_event_id: Annotated[str | None, _LAST_EVENT_ID_HEADER] = None,
    ) -> Stream:
        asked = watch_request(_query_list(game_ids), _query_list(player_ids), {}, last_event_id)
        return await self._open(request, games, streams, asked)

    @post(
        "/",
        operation_id="watchGamesPost",
        summary="Many games live on one connection (Server-Sent Events), the ids in a JSON body",
        description=DESCRIPTION,
        status_code=200,
        media_type=MEDIA_TYPE,
        response_description="an event stream: watching, then view, game-event ... , end per game",
        responses=_RESPONSES,
        security=[{}, {"bearer": []}],
    )
    async def watch_post(
        self,
        request: Request[Any, Any, Any],
        games: NamedDependency[Games],
        streams: NamedDependency[StreamHub],
        data: Annotated[SkipValidation[WatchBody], Body()],
        last_event_id: Annotated[str | None, _LAST_EVENT_ID_HEADER] = None,
    ) -> Stream:
        asked = _body(data)
        resume = _last_event_id(last_event_id)
        if resume is not None:
            asked.after[resume[0]] = resume[1]
        return await self._open(request, games, streams, asked)
