"""Following an account: its stream's event types and a webhook's request (the replies about
webhooks are the following feature's Structs, service.following.wire)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from .common import RequestBody

AccountEventType = Literal[
    "raceStarted", "raceFinished", "gameEnded", "analysisDone", "webhookDisabled",
    "challenge", "tournamentStarted", "tournamentFinished",
]


class NewWebhookRequest(RequestBody):
    """``POST /players/me/webhooks``."""

    url: Annotated[str, Meta(min_length=1, max_length=8000, description="an http(s) URL of a public address, "
                                                                          "at most 2000 characters")]
    events: Annotated[list[AccountEventType], Meta(min_length=1, max_length=16,
                                                   description="the event types to deliver")]
