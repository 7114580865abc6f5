"""Challenges (service/challenges): make one, accept it (a race of two, started at once), decline or
cancel it, and the caller's pending ones (the newest list style: ``limit``, ``cursor``;
``items``, ``next`` and ``Link``)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Body, PathParameter, SkipValidation
from litestar.response import Response

from ...challenges.challenges import Challenges, NewChallenge
from ...races.views import race_view
from ..idempotency import IdempotencyKeyHeader, keyed_responses, replayable
from ..openapi.document import response_headers
from ..problems import documented, with_codes
from ..schemas import ChallengeList, ChallengeView, NewChallengeRequest, RaceView
from .common import bearer_token, parse_body
from .races import no_body
from .ratings import LIMIT_DEFAULT, Cursor, Limit, paged

_CHALLENGE = PathParameter(description="the challenge's id")
_TOKEN: list[dict[str, list[str]]] = [{"bearer": []}]


class ChallengeController(Controller):
    path = "/challenges"
    tags = ("challenges",)

    @post(
        "/", operation_id="createChallenge", status_code=201,
        summary="Challenge a player to a race of two (pending until they accept or decline it, you cancel it, or "
        "it expires); 403 challenge_refused when they accept no challenges (or none from bots), 400 "
        "challenge_to_self for yourself, 409 too_many_challenges past CHALLENGES_PER_PLAYER pending ones",
        responses=with_codes(keyed_responses(400, 401, 404, 409, 413, 415, 429, 503, forbidden="challenge_refused",
                                             conflicts="too_many_challenges"), 400, "challenge_to_self"),
        response_headers=response_headers("Location", "Idempotent-Replayed"), security=_TOKEN,
    )
    async def create(
        self, request: Request[Any, Any, Any], state: State, challenges: NamedDependency[Challenges],
        data: Annotated[SkipValidation[NewChallengeRequest], Body()], idempotency: IdempotencyKeyHeader = None,
    ) -> Response[ChallengeView]:
        asked = parse_body(data, NewChallengeRequest)
        wanted = NewChallenge(asked.to, None if asked.ruleset is None else str(asked.ruleset), asked.rated,
                              asked.time_limit_seconds)

        async def create() -> Response[ChallengeView]:
            made = await challenges.create(bearer_token(request), wanted)
            return Response(made, status_code=201, headers={"Location": f"/challenges/{made.id}"})

        return await replayable(request, state, idempotency, create)

    @get("/", operation_id="listChallenges",
         summary="Your pending challenges, made and received, newest first, a page at a time",
         responses=documented(400, 401, 403, 429, 503), response_headers=response_headers("Link"), security=_TOKEN)
    async def pending(
        self, request: Request[Any, Any, Any], challenges: NamedDependency[Challenges], limit: Limit = LIMIT_DEFAULT,
        cursor: Cursor = None,
    ) -> Response[ChallengeList]:
        page = await challenges.pending(bearer_token(request), cursor, limit)
        return paged(request, page, limit)

    @post(
        "/{challenge_id:uuid}/accept", operation_id="acceptChallenge", status_code=201,
        summary="Accept a challenge made to you: the race of the two is made and started at once, and answered "
        "(201; 200 with the same race when it was accepted already)",
        responses=with_codes(documented(400, 401, 403, 404, 409, 429, 503), 409, "challenge_not_pending",
                             "challenge_expired"),
        response_headers=response_headers("Location"), security=_TOKEN,
    )
    async def accept(
        self, request: Request[Any, Any, Any], challenges: NamedDependency[Challenges],
        challenge_id: Annotated[UUID, _CHALLENGE]
    ) -> Response[RaceView]:
        await no_body(request)
        accepted = await challenges.accept(bearer_token(request), challenge_id)
        return Response(race_view(accepted.race), status_code=201 if accepted.started else 200,
                        headers={"Location": f"/races/{accepted.race.id}"})

    @post(
        "/{challenge_id:uuid}/decline", operation_id="declineChallenge", status_code=200,
        summary="Decline a challenge made to you",
        responses=with_codes(documented(400, 401, 403, 404, 409, 429, 503), 409, "challenge_not_pending",
                             "challenge_expired"),
        security=_TOKEN,
    )
    async def decline(
        self, request: Request[Any, Any, Any], challenges: NamedDependency[Challenges],
        challenge_id: Annotated[UUID, _CHALLENGE]
    ) -> ChallengeView:
        await no_body(request)
        return await challenges.decline(bearer_token(request), challenge_id)

    @post(
        "/{challenge_id:uuid}/cancel", operation_id="cancelChallenge", status_code=200,
        summary="Cancel a challenge you made",
        responses=with_codes(documented(400, 401, 403, 404, 409, 429, 503), 409, "challenge_not_pending",
                             "challenge_expired"),
        security=_TOKEN,
    )
    async def cancel(
        self, request: Request[Any, Any, Any], challenges: NamedDependency[Challenges],
        challenge_id: Annotated[UUID, _CHALLENGE]
    ) -> ChallengeView:
        await no_body(request)
        return await challenges.cancel(bearer_token(request), challenge_id)
