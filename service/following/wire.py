"""Webhooks on the wire: a webhook (as made, with its secret, and as listed) and its delivery
attempts, as msgspec Structs (camelCase on the wire). service.following.views is the one place
that builds them from what service.following.webhooks reads; service.http.schemas names them for
the HTTP layer and the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta

from ..wire import Body


class WebhookView(Body):
    id: UUID
    url: str
    events: list[str]
    api_version: Annotated[str, Meta(description="the API version whose shapes its payloads have")]
    created_at: datetime
    status: Literal["active", "disabled"]
    failing_since: datetime | None
    disabled_at: datetime | None
    disabled_reason: str | None


class WebhookCreated(WebhookView):
    secret: Annotated[str, Meta(description="the signing secret (whsec_...), shown only in this reply")]


class WebhookList(Body):
    items: list[WebhookView]
    next: Annotated[str | None, Meta(description="the cursor of the next page; null: this is the last")]


class WebhookDelivery(Body):
    id: int
    message_id: Annotated[str, Meta(description="the webhook-id header sent: the same for every attempt at one event")]
    event_type: str
    attempt: Annotated[int, Meta(ge=1, description="1 for the first attempt at this event, then 2, 3, ...")]
    attempted_at: datetime
    status: Annotated[int | None, Meta(description="the receiver's HTTP status; null: no answer (see error)")]
    latency_ms: float
    error: str | None


class WebhookDeliveryList(Body):
    items: list[WebhookDelivery]
    next: Annotated[str | None, Meta(description="the cursor of the next page; null: this is the last")]
