"""The services the handlers take, by Litestar's dependency injection.

The composition root (service.bootstrap) builds every service once at startup and the app keeps
them as ``app.state.services``; each name here is a handler parameter that Litestar fills with
the service of that name (``races: Races``, ``accounts: Accounts``...), so a controller names
what it uses and reaches nothing else. The move route, an ASGI route that Litestar's injection
does not serve, reads its use case from ``app.state.services.moves`` (service.http.move_route).
"""

from __future__ import annotations

from typing import Any

from litestar.datastructures import State
from litestar.di import Provide

from ..bootstrap import Services

NAMES = (
    "settings", "store", "players", "accounts", "games", "hints", "daily", "races", "challenges", "tournaments",
    "ratings", "stats", "analyses", "following", "streams",
)
"""The services a handler may take, by the name of its ``Services`` attribute."""


def services_of(state: State) -> Services:
    services: Services = state.services
    return services


def _provider(name: str) -> Provide:
    def provide(state: State) -> Any:
        return getattr(state.services, name)

    provide.__name__ = f"provide_{name}"
    return Provide(provide, sync_to_thread=False)


def dependencies() -> dict[str, Provide]:
    """The app's dependencies: one provider a service."""
    return {name: _provider(name) for name in NAMES}
