"""``POST`` and ``GET /games/{id}/analysis``: a game's analysis, run as a job (service/analysis)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import PathParameter
from litestar.response import Response

from ...analysis.analyses import Analyses
from ..openapi.document import response_headers
from ..problems import documented, problem_response
from ..schemas import AnalysisView
from .common import bearer_token, optional_bearer

_GAME_ID = PathParameter(description="the game's id (a UUID)")
_CONFLICT = {
    409: problem_response(
        "Conflict (problem+json, code game_in_progress: the game has not ended; cards_hidden: its "
        "face-down cards may not be shown yet, a daily game until its date is over, a race game until its race has; "
        "shared_deal: its deck is a copy of a deal in play, a daily deal whose date is not over or a race not "
        "finished, however it was dealt, and the solver refuses it until that is over)"
    )
}
_QUEUE_FULL = {
    429: problem_response(
        "Too many requests (problem+json, with Retry-After; code analysis_queue_full: the player already has "
        "ANALYSIS_JOBS_PER_PLAYER analyses queued or running, or their network address ANALYSIS_JOBS_PER_ADDRESS, "
        "and nothing was queued; rate_limited: the write budget)"
    )
}


class AnalysisController(Controller):
    path = "/games"
    tags = ("analysis",)

    @post(
        "/{game_id:uuid}/analysis",
        operation_id="requestAnalysis",
        summary="Analyse an ended game: a job, queued (asked again: the same job); 202 with its Location",
        description=(
            "Any player may ask once the game is public (its player alone while a daily game's date or its race is "
            "on). The solver then judges every position in worker processes: follow it with GET "
            "/games/{id}/analysis or the game's stream (`analysis` messages). A player may have "
            "ANALYSIS_JOBS_PER_PLAYER (default 3) analyses queued or running at once, an address "
            "ANALYSIS_JOBS_PER_ADDRESS (default 10): one more is `429 analysis_queue_full` with `Retry-After`."
        ),
        status_code=202,
        responses={**documented(400, 401, 403, 404, 503), **_CONFLICT, **_QUEUE_FULL},
        response_headers=response_headers("Location"),
        security=[{"bearer": []}],
    )
    async def request_analysis(
        self, request: Request[Any, Any, Any], analyses: NamedDependency[Analyses], game_id: Annotated[UUID, _GAME_ID]
    ) -> Response[AnalysisView]:
        address = request.client.host if request.client else None
        body = await analyses.request(game_id, bearer_token(request), address)
        return Response(body, status_code=202, headers={"Location": f"/games/{game_id}/analysis"})

    @get(
        "/{game_id:uuid}/analysis",
        operation_id="getAnalysis",
        summary="A game's analysis: its status and progress, then a verdict per position and the turning point",
        responses=documented(400, 401, 403, 404, 429, 503),
        security=[{}, {"bearer": []}],
    )
    async def analysis(
        self, request: Request[Any, Any, Any], analyses: NamedDependency[Analyses], game_id: Annotated[UUID, _GAME_ID]
    ) -> AnalysisView:
        return await analyses.read(game_id, optional_bearer(request))
