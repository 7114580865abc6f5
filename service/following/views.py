"""What a client sees of its webhooks, as the following feature's wire Structs
(service.following.wire): a webhook as made and as listed, a page of either, and a delivery
attempt. The controllers encode what is built here as it is."""

from __future__ import annotations

from typing import Literal, cast

import msgspec

from .webhooks import Delivery, Hook, Page
from .wire import WebhookCreated, WebhookDelivery, WebhookDeliveryList, WebhookList, WebhookView

HookStatus = Literal["active", "disabled"]


def hook_view(hook: Hook) -> WebhookView:
    """A webhook as the API lists it (never its secret)."""
    return WebhookView(
        id=hook.id, url=hook.url, events=hook.events, api_version=hook.api_version, created_at=hook.created_at,
        status=cast(HookStatus, hook.status), failing_since=hook.failing_since, disabled_at=hook.disabled_at,
        disabled_reason=hook.disabled_reason,
    )


def created_view(hook: Hook, secret: str) -> WebhookCreated:
    """A webhook as its creation answers: as listed, and the signing secret shown this once."""
    return WebhookCreated(**msgspec.structs.asdict(hook_view(hook)), secret=secret)


def hook_list(page: Page) -> WebhookList:
    """A page of the account's webhooks."""
    return WebhookList([hook_view(hook) for hook in page.items], page.next)


def delivery_view(delivery: Delivery) -> WebhookDelivery:
    """One delivery attempt as the API lists it."""
    return WebhookDelivery(
        id=delivery.id, message_id=delivery.message_id, event_type=delivery.event_type, attempt=delivery.attempt,
        attempted_at=delivery.attempted_at, status=delivery.status, latency_ms=delivery.latency_ms,
        error=delivery.error,
    )


def delivery_list(page: Page) -> WebhookDeliveryList:
    """A page of a webhook's delivery attempts, newest first."""
    return WebhookDeliveryList([delivery_view(d) for d in page.items if isinstance(d, Delivery)], page.next)
