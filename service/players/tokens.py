"""Personal access tokens: what a token may do (its scopes), and this process's cache of them.

A player holds several named tokens (a phone, a bot, the web table), each with scopes and an
optional expiry. ``play`` makes games, moves, races and solver hints; ``read-private`` reads what
answers only to its player (a daily game during its date, a race game while the race runs, the
player's own data); ``account`` manages tokens, exports and deletes the account. The token
``POST /players`` returns has all three.

``TokenCache`` keeps the tokens this process has seen, by hash, so a move needs no lookup. An
expired token is refused at its expiry without asking the database; a revoked one as soon as the
revocation's notification reaches this process (``forget``), or at once everywhere when the
notifications could have been missed (``clear``, when the listener reconnects).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from ..store.players import TokenRow, token_hash


class Scope(StrEnum):
    PLAY = "play"
    READ_PRIVATE = "read-private"
    ACCOUNT = "account"


ALL_SCOPES: tuple[str, ...] = tuple(scope.value for scope in Scope)


class Credentials(NamedTuple):
    """Who a token speaks for, with what scopes and until when; ``token_id`` names the token."""

    player_id: uuid.UUID
    token_id: uuid.UUID
    scopes: frozenset[str]
    expires_at: datetime | None

    @classmethod
    def of(cls, row: TokenRow) -> Credentials:
        return cls(row.player_id, row.id, frozenset(row.scopes), row.expires_at)

    def live(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now


class TokenCache:
    """Token hash -> credentials, for the tokens this process has seen; at most ``size``."""

    def __init__(self, size: int, clock: Callable[[], datetime]) -> None:
        self.size = size
        self.clock = clock
        self.tokens: dict[bytes, Credentials] = {}

    def get(self, token: str) -> Credentials | None:
        """The cached credentials of a live token (an expired one is dropped)."""
        key = token_hash(token)
        found = self.tokens.get(key)
        if found is not None and found.expires_at is not None and not found.live(self.clock()):
            del self.tokens[key]
            return None
        return found

    def remember(self, token: str, credentials: Credentials) -> None:
        self.tokens[token_hash(token)] = credentials
        if len(self.tokens) > self.size:
            del self.tokens[next(iter(self.tokens))]

    def drop(self, token: str) -> None:
        """Forget one token (the database refused it, or may have)."""
        self.tokens.pop(token_hash(token), None)

    def forget(self, player_id: uuid.UUID) -> None:
        """Drop every cached token of ``player_id`` (one of them was revoked)."""
        for key in [key for key, found in self.tokens.items() if found.player_id == player_id]:
            del self.tokens[key]

    def clear(self) -> None:
        self.tokens.clear()
