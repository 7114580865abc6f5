from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import PathParameter
from litestar.response import Response

from domain import ALL_RULESETS, Ruleset, UnknownRuleset, get_ruleset
from domain.rulesets import LATEST

from ...errors import NotFound
from ..caching import IMMUTABLE
from ..problems import documented
from ..schemas import RulesetId, RulesetList, RulesetView


def ruleset_view(ruleset: Ruleset) -> RulesetView:
    return RulesetView(
        id=RulesetId(ruleset.id),
        version=ruleset.version,
        key=ruleset.key,
        draw_count=ruleset.draw_count,
        recycle=ruleset.recycle.value,
        tableau_moves=ruleset.tableau_moves.value,
        foundation_returns=ruleset.foundation_returns,
        default_deal=ruleset.default_deal,
        description=ruleset.description,
    )


class RulesetController(Controller):
    path = "/rulesets"
    tags = ("rulesets",)

    @get("/", operation_id="listRulesets", summary="Every hosted ruleset with its parameters",
         responses=documented(429))
    async def list_rulesets(self) -> RulesetList:
        return RulesetList(rulesets=[ruleset_view(r) for r in ALL_RULESETS])

    @get(
        "/{ruleset_id:str}",
        operation_id="getRuleset",
        summary="One ruleset (its newest version)",
        responses=documented(400, 404, 429),
    )
    async def read(
        self, ruleset_id: Annotated[str, PathParameter(description="classic, draw-one or open-runs")]
    ) -> RulesetView:
        found = LATEST.get(ruleset_id)
        if found is None:
            raise NotFound(f"no ruleset {ruleset_id[:40]!r}: the hosted rulesets are {', '.join(sorted(LATEST))}")
        return ruleset_view(found)

    @get(
        "/{ruleset_id:str}/versions/{version:int}",
        operation_id="getRulesetVersion",
        summary="One hosted version of a ruleset (the rules an older game was dealt and replays under)",
        responses=documented(400, 404, 429),
    )
    async def read_version(
        self,
        ruleset_id: Annotated[str, PathParameter(description="classic, draw-one or open-runs")],
        version: Annotated[int, PathParameter(ge=1, le=2**31 - 1, description="a version of that ruleset, from 1")],
    ) -> Response[RulesetView]:
        try:
            found = get_ruleset(ruleset_id, version)
        except UnknownRuleset:
            latest = LATEST.get(ruleset_id)
            if latest is None:
                ids = ", ".join(sorted(LATEST))
                raise NotFound(f"no ruleset {ruleset_id[:40]!r}: the hosted rulesets are {ids}") from None
            hosted = sorted(r.version for r in ALL_RULESETS if r.id == ruleset_id)
            raise NotFound(
                f"{ruleset_id} has no version {version}: the hosted versions are {', '.join(map(str, hosted))}"
            ) from None
        # a published ruleset version names the same rules forever
        return Response(ruleset_view(found), headers={"Cache-Control": IMMUTABLE})
