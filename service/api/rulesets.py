from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import PathParameter

from domain import ALL_RULESETS, Ruleset
from domain.rulesets import LATEST

from ..errors import NotFound
from ..problems import documented
from ..schemas import RulesetList, RulesetView


def ruleset_view(ruleset: Ruleset) -> RulesetView:
    return RulesetView(
        id=ruleset.id,
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
    tags = ["rulesets"]

    @get("/", operation_id="listRulesets", summary="Every hosted ruleset with its parameters", responses=documented(429))
    async def list_rulesets(self) -> RulesetList:
        return RulesetList(rulesets=[ruleset_view(r) for r in ALL_RULESETS])

    @get(
        "/{ruleset_id:str}",
        operation_id="getRuleset",
        summary="One ruleset (its newest version)",
        responses=documented(400, 404, 429),
    )
    async def read(self, ruleset_id: Annotated[str, PathParameter(description="classic, draw-one or open-runs")]) -> RulesetView:
        found = LATEST.get(ruleset_id)
        if found is None:
            raise NotFound(f"no ruleset {ruleset_id[:40]!r}: the hosted rulesets are {', '.join(sorted(LATEST))}")
        return ruleset_view(found)
