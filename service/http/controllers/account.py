"""``/players/me``: who a bearer token is, and the player's tokens (list, create, revoke)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Request, delete, get, patch, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Body, PathParameter, SkipValidation
from litestar.response import Response, Stream

from ...bootstrap import Players
from ...challenges.challenges import Challenges
from ...players.accounts import Accounts
from ...store.players import TokenRow
from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..openapi.patterns import NDJSON
from ..problems import documented, with_codes
from ..schemas import AccountSettingsRequest, Me, NewTokenRequest, TokenCreated, TokenList, TokenView
from .common import bearer_token, parse_body

_ME: list[dict[str, list[str]]] = [{"bearer": []}]


def token_view(row: TokenRow) -> TokenView:
    scopes: list[Any] = list(row.scopes)
    return TokenView(id=row.id, name=row.name, scopes=scopes, created_at=row.created_at, expires_at=row.expires_at)


async def _encoded(lines: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for line in lines:
        yield msgspec.json.encode(line) + b"\n"


async def _me(request: Request[Any, Any, Any], accounts: Accounts) -> Me:
    found = await accounts.me(bearer_token(request))
    player = found.player
    policy: Any = player.accept_challenges
    return Me(id=player.id, name=player.name, created_at=player.created_at, token=token_view(found.token),
              bot=player.bot, accept_challenges_from=policy)


class AccountController(Controller):
    path = "/players/me"
    tags = ("players",)

    @get("/", operation_id="getMe", summary="The player behind the bearer token, and that token",
         responses=documented(400, 401, 429, 503), security=_ME)
    async def me(self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts]) -> Me:
        return await _me(request, accounts)

    @patch("/", operation_id="updateMe",
           summary="Change the account's settings: acceptChallengesFrom (everyone, humans: no bots, or nobody); "
           "answers as GET /players/me",
           responses=documented(400, 401, 403, 413, 415, 429, 503), security=_ME)
    async def update(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        challenges: NamedDependency[Challenges],
        data: Annotated[SkipValidation[AccountSettingsRequest], Body()],
    ) -> Me:
        asked = parse_body(data, AccountSettingsRequest)
        await challenges.set_policy(bearer_token(request), asked.accept_challenges_from)
        return await _me(request, accounts)

    @delete("/", operation_id="deleteMe",
             summary="Erase the player: name, every token and the replies kept for their Idempotency-Keys (the "
             "registration's too); their games stay as anonymous history. First they leave every open race (one "
             "they created passes to the next entrant, or is cancelled with nobody left) and their games in running "
             "races end as resigned",
             responses=documented(400, 401, 403, 429, 503), security=_ME)
    async def delete_me(self, request: Request[Any, Any, Any], players: NamedDependency[Players]) -> None:
        await players.closing.close(bearer_token(request))  # leaves their races, then erases

    @get("/export", operation_id="exportMe",
         summary="Everything stored about the player as application/x-ndjson, one object per line with its "
         "'type': player, token (never its secret or hash), game (its view and whole event log; a daily deck "
         "withheld until its date is over, a race deck until the race has finished), stats, race-entry, daily-entry, "
         "rating, rating-change, webhook (never its secret)",
         responses=documented(400, 401, 403, 429, 503), media_type=NDJSON, security=_ME)
    async def export(self, request: Request[Any, Any, Any], players: NamedDependency[Players]) -> Stream:
        lines = await players.export.export(bearer_token(request))
        accept = request.headers.get("accept", "")
        as_text = "text/plain" in accept and NDJSON not in accept
        return Stream(_encoded(lines), media_type="text/plain; charset=utf-8" if as_text else NDJSON)

    @get("/tokens", operation_id="listTokens", summary="The player's live tokens (never their secrets)",
         responses=documented(400, 401, 403, 429, 503), security=_ME)
    async def tokens(self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts]) -> TokenList:
        rows = await accounts.list_tokens(bearer_token(request))
        return TokenList(tokens=[token_view(row) for row in rows])

    @post(
        "/tokens",
        operation_id="createToken",
        summary="Make a named token with scopes (only scopes the calling token holds) and an optional expiry; "
        "its secret is shown only here. A player holds at most TOKENS_PER_PLAYER (50) live tokens: one more is "
        "409 too_many_tokens (revoke one)",
        status_code=201,
        responses=with_codes(keyed_responses(400, 401, 403, 413, 415, 429, 503, conflicts="too_many_tokens",
                                             forbidden="scope_not_held"), 400, "name_invisible_characters"),
        response_headers=response_headers("Location", "Idempotent-Replayed"),
        security=_ME,
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, accounts: NamedDependency[Accounts],
        data: Annotated[SkipValidation[NewTokenRequest], Body()], idempotency: IdempotencyKeyHeader = None,
    ) -> Response[TokenCreated]:
        asked = parse_body(data, NewTokenRequest)

        async def create() -> Response[TokenCreated]:
            made = await accounts.create_token(
                bearer_token(request), asked.name, asked.scopes, asked.expires_in_days
            )
            view = token_view(made.row)
            created = TokenCreated(id=view.id, name=view.name, scopes=view.scopes, created_at=view.created_at,
                                   expires_at=view.expires_at, token=made.secret)
            return Response(created, status_code=201, headers={"Location": "/players/me/tokens"})

        return await replayable(request, state, idempotency, create)

    @delete("/tokens/{token_id:uuid}", operation_id="revokeToken", summary="Revoke one token, at once everywhere",
            responses=documented(400, 401, 403, 404, 429, 503), security=_ME)
    async def revoke(
        self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts],
        token_id: Annotated[UUID, PathParameter(description="the token's id (GET /players/me/tokens)")],
    ) -> None:
        await accounts.revoke(bearer_token(request), token_id)

    @delete("/tokens", operation_id="revokeAllTokens",
            summary="Revoke every token of the player, this one included (sign out everywhere)",
            responses=documented(400, 401, 403, 429, 503), security=_ME)
    async def revoke_all(self, request: Request[Any, Any, Any], accounts: NamedDependency[Accounts]) -> None:
        await accounts.revoke(bearer_token(request), None)
