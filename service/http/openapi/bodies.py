"""The bodies of the OpenAPI document that are not JSON, which Litestar gives no schema: the
ndjson exports, line by line; the Server-Sent Events streams, as text and message by message
(``StreamMessage``, ``RaceStreamMessage``, ``WatchMessage``); and the other media types an operation also answers
with by ``Accept`` (``ALSO``). ``complete`` (service.http.openapi.document) puts them in place.
"""

from __future__ import annotations

from litestar.openapi.spec import OpenAPIFormat, OpenAPIType, Reference, Schema

from .patterns import COMPONENTS, EVENT_STREAM, NDJSON

_LINES = Schema(
    type=OpenAPIType.STRING,
    description="one event per line, each a JSON object as in EventView (#/components/schemas/EventView), oldest first",
)
_SHUTDOWN_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["detail"],
    properties={"detail": Schema(type=OpenAPIType.STRING, description="why the stream ends, in words")},
)
_ANALYSIS_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["status", "progress"],
    properties={
        "status": Schema(type=OpenAPIType.STRING, enum=["queued", "running", "done", "failed"]),
        "progress": Reference(COMPONENTS + "AnalysisProgress"),
    },
    description="the game's analysis as it progresses: its status and the positions settled so far",
)
_RETRY = Schema(
    type=OpenAPIType.STRING,
    pattern="^[0-9]+$",
    description="with shutdown only: the milliseconds a client (EventSource) waits before it reconnects",
)
def _message(title: str, description: str, events: list[str], id_pattern: str, data: list[Schema | Reference],
             data_description: str) -> Schema:
    """One Server-Sent Events message of a stream: its ``event``, ``id``, ``retry`` and JSON ``data``."""
    return Schema(
        type=OpenAPIType.OBJECT,
        title=title,
        description=description,
        required=["event", "data"],
        properties={
            "event": Schema(type=OpenAPIType.STRING, enum=events),
            "id": Schema(type=OpenAPIType.STRING, pattern=id_pattern),
            "retry": _RETRY,
            "data": Schema(
                type=OpenAPIType.STRING,
                content_media_type="application/json",
                content_schema=Schema(any_of=data),
                description=data_description,
            ),
        },
    )


_STREAM_MESSAGE = _message(
    "StreamMessage",
    "One Server-Sent Events message of a game's stream: `view` (the game view, first and after each "
    "change), `game-event` (an event as the log shows it), `analysis` (once a finished game's analysis has been "
    "asked for: its status and progress, at each change until it is done or failed), `end` (the final view) or "
    "`shutdown` (the server is stopping: the last message, with `retry` and without `id`); `id` is the game "
    "version (for `analysis`, the final one).",
    ["view", "game-event", "analysis", "end", "shutdown"],
    "^[0-9]+$",
    [Reference(COMPONENTS + "GameView"), Reference(COMPONENTS + "EventView"), _ANALYSIS_DATA, _SHUTDOWN_DATA],
    'JSON: a GameView for view and end, an EventView for game-event, {"status", "progress": '
    '{"done", "total"}} for analysis, {"detail"} for shutdown',
)
_RACE_STREAM_MESSAGE = _message(
    "RaceStreamMessage",
    "One Server-Sent Events message of a race's stream: `race` (the race view, first and after each "
    "change of standings), `end` (the final view) or `shutdown` (the server is stopping: the last message, "
    "with `retry` and without `id`); `id` grows with every change.",
    ["race", "end", "shutdown"],
    "^[0-9]+$",
    [Reference(COMPONENTS + "RaceView"), _SHUTDOWN_DATA],
    'JSON: a RaceView for race and end, {"detail"} for shutdown',
)
_WATCHING_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["games", "players", "unavailable"],
    properties={
        "games": Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.STRING),
                        description="the games it starts with that the caller may see"),
        "players": Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.STRING),
                          description="the players whose games are followed"),
        "unavailable": Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.STRING),
                              description="named game ids that are no game the caller may see (unknown or private)"),
    },
)
_WATCH_VIEW_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["game", "view"],
    properties={"game": Schema(type=OpenAPIType.STRING), "view": Reference(COMPONENTS + "GameView")},
)
_WATCH_EVENT_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["game", "event"],
    properties={"game": Schema(type=OpenAPIType.STRING), "event": Reference(COMPONENTS + "EventView")},
)
_WATCH_MESSAGE = _message(
    "WatchMessage",
    "One Server-Sent Events message of a watch: `watching` (first, without `id`: what is followed), "
    "`view` (a game's view, first and after each change), `game-event` (an event as the log shows it), `end` (a "
    "game's final view) or `shutdown` (the server is stopping: the last message, with `retry` and without `id`); "
    "`id` is `<game id>:<version>`.",
    ["watching", "view", "game-event", "end", "shutdown"],
    "^[0-9a-f-]{36}:[0-9]+$",
    [_WATCHING_DATA, _WATCH_VIEW_DATA, _WATCH_EVENT_DATA, _SHUTDOWN_DATA],
    'JSON: {"games", "players", "unavailable"} for watching, {"game", "view": <GameView>} for '
    'view and end, {"game", "event": <EventView>} for game-event, {"detail"} for shutdown',
)
_ACCOUNT_TYPES = [
    "raceStarted", "raceFinished", "gameEnded", "analysisDone", "webhookDisabled", "challenge", "tournamentStarted",
    "tournamentFinished", "eventsDropped",
]
_ACCOUNT_EVENT = Schema(
    type=OpenAPIType.OBJECT,
    title="AccountEvent",
    description="One event of an account (GET /players/me/stream; a webhook's `data`). `data` by type: raceStarted "
    "{race, game, entrants, timeLimitSeconds}; raceFinished {race, game, place, entrants, timeUp, rated}; gameEnded "
    "{game, status, reason, moveCount, race}; analysisDone {game, status}; webhookDisabled {webhook, url, reason}; "
    "challenge {challenge, action (created, accepted, declined, cancelled), from, to, ruleset, rated, "
    "timeLimitSeconds, expiresAt, race}; eventsDropped (streams only) {after, resumedAfter, retentionSeconds}. "
    "tournamentStarted {tournament, game, deals, endsAt}; tournamentFinished {tournament, place, entrants, dealsWon, "
    "rated}.",
    required=["id", "type", "createdAt", "data"],
    properties={
        "id": Schema(type=OpenAPIType.INTEGER, minimum=0, description="the event's number on the account, in "
                     "commit order (Last-Event-ID resumes after it)"),
        "type": Schema(type=OpenAPIType.STRING, enum=_ACCOUNT_TYPES),
        "createdAt": Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.DATE_TIME),
        "data": Schema(type=OpenAPIType.OBJECT, additional_properties=True),
    },
)
_ACCOUNT_STREAM_MESSAGE = _message(
    "AccountStreamMessage",
    "One Server-Sent Events message of an account's stream: `event` is the AccountEvent's type and `id` its "
    "number; `shutdown` (the server is stopping: the last message, with `retry` and without `id`).",
    [*_ACCOUNT_TYPES, "shutdown"],
    "^[0-9]+$",
    [Reference(COMPONENTS + "AccountEvent"), _SHUTDOWN_DATA],
    'JSON: an AccountEvent, or {"detail"} for shutdown',
)
_ACCOUNT_EVENT_LINES = Schema(
    type=OpenAPIType.STRING,
    description="one AccountEvent (#/components/schemas/AccountEvent) per line, oldest first; an empty line "
    "every keep-alive interval of silence",
)
MESSAGES = {"StreamMessage": _STREAM_MESSAGE, "RaceStreamMessage": _RACE_STREAM_MESSAGE,
            "WatchMessage": _WATCH_MESSAGE, "AccountStreamMessage": _ACCOUNT_STREAM_MESSAGE,
            "AccountEvent": _ACCOUNT_EVENT}


def _event_stream(message: str) -> Schema:
    """Read as a whole (as most generators do) the body is text; read message by message (as OpenAPI
    before 3.2 has an event stream's schema do), each message is a ``message``."""
    return Schema(
        any_of=[
            Schema(
                type=OpenAPIType.STRING,
                description="the stream as text: `event:`, `id:`, `data:` and `retry:` lines, `: keep-alive` comments",
            ),
            Reference(COMPONENTS + message),
        ],
    )


_GAME_LINES = Schema(
    type=OpenAPIType.STRING,
    description='one JSON object per line, oldest game first: {"type": "game", "game": <GameView>, "events": '
    '[<EventView>, ...]} for each game (#/components/schemas/GameView, #/components/schemas/EventView); when max '
    'cut the export short, a last line {"type": "next", "after": <cursor>, "href": <the request that continues>}',
)
# Media types an operation also answers with (by Accept), after its own: a generator that reads one
# media type per status takes the first it knows (openapi-python-client knows JSON and text/*, not
# ndjson, so it reads exportEvents as text).
_ACCOUNT_LINES = Schema(
    type=OpenAPIType.STRING,
    description='one JSON object per line, each with a "type": "player" first, then each "token", each "game" '
    '({"game": <GameView>, "events": [<EventView>, ...]}), each "stats", "race-entry", "daily-entry" '
    'and "webhook" (no secret) row',
)
ALSO: dict[str, dict[str, Schema]] = {
    "listEvents": {NDJSON: _LINES},
    "exportEvents": {"text/plain": _LINES},
    "exportPlayerGames": {"text/plain": _GAME_LINES},
    "exportMe": {"text/plain": _ACCOUNT_LINES},
    "streamMyEvents": {NDJSON: _ACCOUNT_EVENT_LINES},
}
# The schema of each non-JSON body (Litestar gives them none).
BODIES = {NDJSON: _LINES, EVENT_STREAM: _event_stream("StreamMessage")}
# ... unless the operation's own is given here.
OWN_BODIES = {
    "streamRace": {EVENT_STREAM: _event_stream("RaceStreamMessage")},
    "watchGames": {EVENT_STREAM: _event_stream("WatchMessage")},
    "watchGamesPost": {EVENT_STREAM: _event_stream("WatchMessage")},
    "streamMyEvents": {EVENT_STREAM: _event_stream("AccountStreamMessage")},
    "exportPlayerGames": {NDJSON: _GAME_LINES},
    "exportMe": {NDJSON: _ACCOUNT_LINES},
}
