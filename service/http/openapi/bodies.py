"""The bodies of the OpenAPI document that are not JSON, which Litestar gives no schema: the
ndjson exports, line by line; the Server-Sent Events streams, as text and message by message
(``StreamMessage``, ``RaceStreamMessage``); and the other media types an operation also answers
with by ``Accept`` (``ALSO``). ``complete`` (service.http.openapi.document) puts them in place.
"""

from __future__ import annotations

from litestar.openapi.spec import OpenAPIType, Reference, Schema

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
_STREAM_MESSAGE = Schema(
    type=OpenAPIType.OBJECT,
    title="StreamMessage",
    description="One Server-Sent Events message of a game's stream: `view` (the game view, first and after each "
    "change), `game-event` (an event as the log shows it), `analysis` (once a finished game's analysis has been "
    "asked for: its status and progress, at each change until it is done or failed), `end` (the final view) or "
    "`shutdown` (the server is stopping: the last message, with `retry` and without `id`); `id` is the game "
    "version (for `analysis`, the final one).",
    required=["event", "data"],
    properties={
        "event": Schema(type=OpenAPIType.STRING, enum=["view", "game-event", "analysis", "end", "shutdown"]),
        "id": Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"),
        "retry": _RETRY,
        "data": Schema(
            type=OpenAPIType.STRING,
            content_media_type="application/json",
            content_schema=Schema(
                any_of=[
                    Reference(COMPONENTS + "GameView"), Reference(COMPONENTS + "EventView"), _ANALYSIS_DATA,
                    _SHUTDOWN_DATA,
                ]
            ),
            description='JSON: a GameView for view and end, an EventView for game-event, {"status", "progress": '
            '{"done", "total"}} for analysis, {"detail"} for shutdown',
        ),
    },
)
_RACE_STREAM_MESSAGE = Schema(
    type=OpenAPIType.OBJECT,
    title="RaceStreamMessage",
    description="One Server-Sent Events message of a race's stream: `race` (the race view, first and after each "
    "change of standings), `end` (the final view) or `shutdown` (the server is stopping: the last message, "
    "with `retry` and without `id`); `id` grows with every change.",
    required=["event", "data"],
    properties={
        "event": Schema(type=OpenAPIType.STRING, enum=["race", "end", "shutdown"]),
        "id": Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"),
        "retry": _RETRY,
        "data": Schema(
            type=OpenAPIType.STRING,
            content_media_type="application/json",
            content_schema=Schema(any_of=[Reference(COMPONENTS + "RaceView"), _SHUTDOWN_DATA]),
            description='JSON: a RaceView for race and end, {"detail"} for shutdown',
        ),
    },
)
MESSAGES = {"StreamMessage": _STREAM_MESSAGE, "RaceStreamMessage": _RACE_STREAM_MESSAGE}


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
    '({"game": <GameView>, "events": [<EventView>, ...]}), each "stats", "race-entry" and "daily-entry" row',
)
ALSO: dict[str, dict[str, Schema]] = {
    "listEvents": {NDJSON: _LINES},
    "exportEvents": {"text/plain": _LINES},
    "exportPlayerGames": {"text/plain": _GAME_LINES},
    "exportMe": {"text/plain": _ACCOUNT_LINES},
}
# The schema of each non-JSON body (Litestar gives them none).
BODIES = {NDJSON: _LINES, EVENT_STREAM: _event_stream("StreamMessage")}
# ... unless the operation's own is given here.
OWN_BODIES = {
    "streamRace": {EVENT_STREAM: _event_stream("RaceStreamMessage")},
    "exportPlayerGames": {NDJSON: _GAME_LINES},
    "exportMe": {NDJSON: _ACCOUNT_LINES},
}
