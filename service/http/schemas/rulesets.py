"""The hosted rulesets and their parameters."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from .common import Body, RulesetId


class RulesetView(Body):
    id: RulesetId
    version: int
    key: Annotated[str, Meta(description="id@version, e.g. 'classic@1'")]
    draw_count: int
    recycle: str
    tableau_moves: str
    foundation_returns: bool
    default_deal: str
    description: str


class RulesetList(Body):
    rulesets: list[RulesetView]
