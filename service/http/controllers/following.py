"""``/players/me/stream`` and ``/players/me/webhooks``: following an account (service.following)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, delete, get, post
from litestar.background_tasks import BackgroundTask
from litestar.di import NamedDependency
from litestar.params import Body, HeaderParameter, PathParameter, QueryParameter, SkipValidation
from litestar.response import Response, Stream

from ...bootstrap import Following
from ...following.feed import Feed, feed_messages, resume_point
from ...following.views import created_view, delivery_list, hook_list
from ...following.webhooks import Page, event_names
from ...players.accounts import Accounts
from ...players.tokens import Scope
from ...streams.hub import StreamHub
from ..openapi.document import response_headers
from ..openapi.patterns import NDJSON
from ..problems import documented, with_codes
from ..schemas import WebhookCreated, WebhookDeliveryList, WebhookList
from ..schemas.following import NewWebhookRequest
from ..versions import SERVED
from .common import bearer_token, parse_body
from .streams import stream_address

_ME: list[dict[str, list[str]]] = [{"bearer": []}]
_HOOK_ID = PathParameter(description="the webhook's id (GET /players/me/webhooks)")
_CURSOR = QueryParameter(pattern="^[A-Za-z0-9_-]{1,200}$", description="the 'next' cursor of the previous page")
_LIMIT = QueryParameter(ge=1, le=200, description="at most this many (1-200)")

STREAM_DESCRIPTION = """\
The account's events, as Server-Sent Events (`text/event-stream`) or, with
`Accept: application/x-ndjson`, as NDJSON (one JSON object a line). Each event is
`{"id", "type", "createdAt", "data"}` (`AccountEvent`); in SSE it is `event: <type>`, `id: <id>`,
`data: <the object>`. Types: `raceStarted` (with the player's game), `raceFinished` (the place),
`gameEnded` (won, stalled or resigned, and why: `abandoned` when the service ended it),
`analysisDone`, `webhookDisabled`, `challenge` (made to the player; accepted, declined or
cancelled, to both players), `tournamentStarted` (the player's first deal of a tournament was dealt),
`tournamentFinished` (the place). A move that
does not end a game sends nothing.

Ids are the account's event numbers, in commit order. Without `Last-Event-ID` the stream starts
with the next event; with it (EventSource sends it when it reconnects; NDJSON clients send the
last line's `id`), every event after that one is sent first, from any server process. Events
are kept 7 days (ACCOUNT_EVENTS_RETENTION_SECONDS): resuming after an older one starts with an
`eventsDropped` event (resync from the lists), then what is kept. An id the account never had
is `400 unknown_event_id`. Idle: a `: keep-alive` comment (SSE) or an empty line (NDJSON) every
15 s. Any scope of token will do. The stream takes a slot of the player's and of the client
address's open streams (shared with game, race and watch streams): one more is `429`. When the server
stops, an SSE stream's last message is `event: shutdown` (no `id`); reconnect with `Last-Event-ID`.
"""


class _OwnTypeStream(Stream):
    """A stream whose own media type wins over its handler's: one route, two formats (SSE, NDJSON)."""

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Any:
        return super().to_asgi_response(*args, **{**kwargs, "media_type": self.media_type})


def _paged(request: Request[Any, Any, Any], page: Page) -> dict[str, str]:
    if page.next is None:
        return {}
    query = {k: v for k, v in request.query_params.items() if k != "cursor"} | {"cursor": page.next}
    return {"Link": f"<{request.url.path}?{'&'.join(f'{k}={v}' for k, v in query.items())}>; rel=\"next\""}


class FollowingController(Controller):
    path = "/players/me"
    tags = ("following",)

    @get(
        "/stream",
        operation_id="streamMyEvents",
        summary="The account's events live (Server-Sent Events, or NDJSON): races started and finished, games "
        "ended, analyses done; resumable with Last-Event-ID",
        description=STREAM_DESCRIPTION,
        media_type="text/event-stream",
        response_description="an event stream of AccountEvent",
        responses=with_codes(documented(400, 401, 429, 503), 400, "unknown_event_id"),
        security=_ME,
    )
    async def stream(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        streams: NamedDependency[StreamHub], following: NamedDependency[Following],
        last_event_id: Annotated[
            str | None,
            HeaderParameter(name="Last-Event-ID", description="resume after this event (its id)"),
        ] = None,
    ) -> Stream:
        hub = streams
        player = await accounts.player_id(bearer_token(request))
        lines = NDJSON in request.headers.get("accept", "")
        subscription = hub.subscribe(player, f"player:{player}", stream_address(request))  # before reading
        try:
            resume = await resume_point(hub.store.pool, player, last_event_id)
        except BaseException:
            subscription.close()
            raise
        feed = Feed(hub.store.pool, subscription, player, resume, hub.keepalive,
                    following.retention_seconds, lines)
        return _OwnTypeStream(
            feed_messages(feed), media_type=NDJSON if lines else "text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            background=BackgroundTask(subscription.close),
        )

    @post(
        "/webhooks",
        operation_id="createWebhook",
        summary="Make a webhook: the account's events of the types named, posted to the URL, signed (Standard "
        "Webhooks); the signing secret is shown only here",
        status_code=201,
        responses=with_codes(
            with_codes(documented(400, 401, 403, 409, 413, 415, 429, 503), 400, "webhook_url_invalid",
                       "webhook_url_too_long", "webhook_url_private", "webhook_url_unresolvable", "unknown_event_type"),
            409, "too_many_webhooks",
        ),
        response_headers=response_headers("Location"),
        security=_ME,
    )
    async def create(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        following: NamedDependency[Following],
        data: Annotated[SkipValidation[NewWebhookRequest], Body()],
    ) -> Response[WebhookCreated]:
        asked = parse_body(_raw_events(data), NewWebhookRequest)
        player = await accounts.player_id(bearer_token(request), Scope.ACCOUNT)
        version = SERVED.requested(list(request.scope["headers"]))
        name = version.name if not isinstance(version, bytes) else SERVED.oldest.name
        hook, secret = await following.webhooks.create(player, asked.url, asked.events, name)
        return Response(created_view(hook, secret), status_code=201,
                        headers={"Location": f"/players/me/webhooks/{hook.id}"})

    @get("/webhooks", operation_id="listWebhooks", summary="The account's webhooks, newest first (never a secret)",
         responses=documented(400, 401, 403, 429, 503), response_headers=response_headers("Link"), security=_ME)
    async def list(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        following: NamedDependency[Following],
        limit: Annotated[int, _LIMIT] = 50, cursor: Annotated[str | None, _CURSOR] = None,
    ) -> Response[WebhookList]:
        player = await accounts.player_id(bearer_token(request), Scope.ACCOUNT)
        page = await following.webhooks.list(player, limit, cursor)
        return Response(hook_list(page), headers=_paged(request, page))

    @delete("/webhooks/{hook_id:uuid}", operation_id="deleteWebhook",
            summary="Delete a webhook: nothing more is delivered to it",
            responses=documented(400, 401, 403, 404, 429, 503), security=_ME)
    async def remove(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        following: NamedDependency[Following],
        hook_id: Annotated[UUID, _HOOK_ID],
    ) -> None:
        player = await accounts.player_id(bearer_token(request), Scope.ACCOUNT)
        await following.webhooks.delete(player, hook_id)

    @get("/webhooks/{hook_id:uuid}/deliveries", operation_id="listWebhookDeliveries",
         summary="A webhook's delivery attempts, newest first: time, HTTP status or error, latency, attempt",
         responses=documented(400, 401, 403, 404, 429, 503), response_headers=response_headers("Link"),
         security=_ME)
    async def deliveries(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        following: NamedDependency[Following],
        hook_id: Annotated[UUID, _HOOK_ID],
        limit: Annotated[int, _LIMIT] = 50, cursor: Annotated[str | None, _CURSOR] = None,
    ) -> Response[WebhookDeliveryList]:
        player = await accounts.player_id(bearer_token(request), Scope.ACCOUNT)
        page = await following.webhooks.deliveries(player, hook_id, limit, cursor)
        return Response(delivery_list(page), headers=_paged(request, page))


def _raw_events(data: object) -> object:
    """The body as sent, its event names checked first: an unknown one is refused in the service's
    own words (``unknown_event_type``), not as a schema mismatch."""
    if isinstance(data, dict) and isinstance(events := data.get("events"), list):
        event_names([name for name in events if isinstance(name, str)])
    return data
