"""Accounts: registering a player, the tokens that act for them, and who a token is.

``authenticate`` is the one check of a bearer token: it must be live (neither revoked nor
expired) and carry the scope the request needs. A token mints only scopes it holds itself, and a
player holds at most ``most_tokens`` live tokens (TOKENS_PER_PLAYER). Tokens this process has
seen are cached (``TokenCache``); a revocation reaches every process's cache through
``canfield_tokens``.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import NamedTuple

from ..context import PLAYER
from ..errors import BadRequest, Conflict, Forbidden, NotFound, ScopeNotHeld, Unauthorized
from ..store.players import PlayerRow, PlayerStore, TokenRow
from .names import check_not_reserved, check_visible
from .tokens import ALL_SCOPES, Credentials, Scope, TokenCache
from .wire import Player

FIRST_TOKEN = "first token"
TOKEN_NAME_MAX = 100
EXPIRY_DAYS_MAX = 3650
TOKENS_PER_PLAYER = 50
"""Live tokens a player may hold at once by default (the TOKENS_PER_PLAYER setting)."""


class NewToken(NamedTuple):
    """A token just made: as stored, and its secret (shown once)."""

    row: TokenRow
    secret: str


class Me(NamedTuple):
    """The player behind a token, and that token."""

    player: PlayerRow
    token: TokenRow


def clean_name(name: str, what: str, longest: int) -> str:
    """``name`` with its whitespace runs made single spaces; refused when nothing visible is left
    or it holds a control character."""
    clean = " ".join(name.split())
    check_visible(clean, what)
    if not clean or not clean.isprintable():
        raise BadRequest(f"{what} needs at least one visible character and no control characters")
    if len(clean) > longest:
        raise BadRequest(f"{what} is {len(clean)} characters long; at most {longest}")
    return clean


def quoted(scopes: Iterable[str]) -> str:
    """``'play'``, ``'play' and 'account'``: scopes named in a sentence."""
    names = [f"'{scope}'" for scope in scopes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def parse_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The scopes asked for, each known and named once, in the order of ``ALL_SCOPES``."""
    asked = list(scopes)
    unknown = [scope for scope in asked if scope not in ALL_SCOPES]
    if unknown:
        raise BadRequest(f"unknown scope {unknown[0]!r}: the scopes are {', '.join(ALL_SCOPES)}")
    if len(set(asked)) != len(asked):
        raise BadRequest("a scope is named twice; name each once")
    if not asked:
        raise BadRequest(f"a token needs at least one scope: {', '.join(ALL_SCOPES)}")
    return tuple(scope for scope in ALL_SCOPES if scope in asked)


class Accounts:
    def __init__(
        self, store: PlayerStore, tokens: TokenCache, clock: Callable[[], datetime],
        most_tokens: int = TOKENS_PER_PLAYER,
    ) -> None:
        self.store = store
        self.tokens = tokens
        self.clock = clock
        self.most_tokens = most_tokens

    async def create_player(
        self, name: str, token_name: str | None = None, bot: bool = False
    ) -> tuple[PlayerRow, NewToken]:
        """A new player (``bot``: a bot account) and their first token, with every scope."""
        clean = clean_name(name, "a player name", 100)
        check_not_reserved(clean)
        label = FIRST_TOKEN if token_name is None else clean_name(token_name, "a token name", TOKEN_NAME_MAX)
        player_id = uuid.uuid4()
        secret = secrets.token_urlsafe(32)
        row = TokenRow(uuid.uuid4(), player_id, label, ALL_SCOPES, self.clock(), None)
        created_at = await self.store.create_player(player_id, clean, row, secret, bot)
        return PlayerRow(player_id, clean, created_at, bot), NewToken(replace(row, created_at=created_at), secret)

    async def authenticate(self, token: str | None, scope: Scope | None = None) -> Credentials:
        """The credentials of a live token; ``scope``: the one the request needs. Asked of the
        database every time, so a revoked token is refused at once (a move, the hot path, checks
        its token in the statement that writes it instead: ``GameRepository``)."""
        if token is None:
            raise Unauthorized("this request needs 'Authorization: Bearer <token>' (POST /players gives a token)")
        row = await self.store.token(token, self.clock())
        if row is None:
            self.tokens.drop(token)
            raise Unauthorized("the bearer token is not valid (unknown, revoked or expired)")
        credentials = Credentials.of(row)
        self.tokens.remember(token, credentials)
        PLAYER.set(credentials.player_id)
        if scope is not None and scope not in credentials.scopes:
            raise Forbidden(f"this token may not do that: it lacks the '{scope}' scope")
        return credentials

    async def player_id(self, token: str | None, scope: Scope | None = None) -> uuid.UUID:
        """The player of a live token that has ``scope`` (``authenticate``)."""
        return (await self.authenticate(token, scope)).player_id

    async def me(self, token: str | None) -> Me:
        credentials = await self.authenticate(token)
        player = await self.store.get_player(credentials.player_id)
        live = await self.store.tokens(credentials.player_id, self.clock())
        found = next((row for row in live if row.id == credentials.token_id), None)
        if player is None or found is None:  # revoked or deleted a moment ago
            raise Unauthorized("the bearer token is not valid (unknown, revoked or expired)")
        return Me(player, found)

    async def create_token(
        self, token: str | None, name: str, scopes: Iterable[str], expires_in_days: int | None
    ) -> NewToken:
        credentials = await self.authenticate(token, Scope.ACCOUNT)
        label = clean_name(name, "a token name", TOKEN_NAME_MAX)
        granted = parse_scopes(scopes)
        lacking = [scope for scope in granted if scope not in credentials.scopes]
        if lacking:
            them = "it" if len(lacking) == 1 else "them"
            raise ScopeNotHeld(
                f"a token passes on only scopes it holds itself: this one lacks {quoted(lacking)}, so it may not "
                f"make a token with {them}; ask with a token that holds {them}"
            )
        if expires_in_days is not None and not 1 <= expires_in_days <= EXPIRY_DAYS_MAX:
            raise BadRequest(f"expiresInDays must be 1 to {EXPIRY_DAYS_MAX}, or null for a token that never expires")
        now = self.clock()
        expires_at = None if expires_in_days is None else now + timedelta(days=expires_in_days)
        secret = secrets.token_urlsafe(32)
        row = TokenRow(uuid.uuid4(), credentials.player_id, label, granted, now, expires_at)
        created_at = await self.store.add_token(row, secret, now, self.most_tokens)
        if created_at is None:
            raise Conflict(
                f"the player already holds {self.most_tokens} live tokens, the most allowed: revoke one they no "
                "longer use (DELETE /players/me/tokens/{id}; GET /players/me/tokens lists them) and ask again",
                "too_many_tokens",
            )
        return NewToken(replace(row, created_at=created_at), secret)

    async def list_tokens(self, token: str | None) -> list[TokenRow]:
        credentials = await self.authenticate(token, Scope.ACCOUNT)
        return await self.store.tokens(credentials.player_id, self.clock())

    async def revoke(self, token: str | None, token_id: uuid.UUID | None) -> int:
        """Revoke one of the player's tokens (``token_id``), or all of them (None)."""
        credentials = await self.authenticate(token, Scope.ACCOUNT)
        revoked = await self.store.revoke(credentials.player_id, token_id, self.clock())
        self.tokens.forget(credentials.player_id)
        if token_id is not None and not revoked:
            raise NotFound(f"the player has no live token {token_id}")
        return revoked

    async def profile(self, player_id: uuid.UUID) -> Player:
        """A player's public profile; a deleted account has none (404), though its games remain."""
        found = await self.store.get_player(player_id)
        if found is None or found.deleted:
            raise NotFound(f"no player {player_id}")
        return Player(found.id, found.name, found.created_at, found.bot)

    async def delete(self, token: str | None) -> None:
        """Erase the player behind the token (``PlayerStore.erase``): every token refused at once."""
        credentials = await self.authenticate(token, Scope.ACCOUNT)
        await self.store.erase(credentials.player_id, self.clock())
        self.tokens.forget(credentials.player_id)
