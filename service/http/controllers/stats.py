"""Stats: per player and ruleset, and over all players (per ruleset and per deal source).

Read from the projections kept in the events' transaction (service/stats/projections.py), through
the Games facade's ``Stats`` (service/stats/queries.py).
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from domain import ALL_RULESETS

from ...errors import NotFound
from ...players.accounts import Accounts
from ...races.races import Races
from ...races.views import record_view
from ...stats.queries import Stats
from ...stats.views import global_stats, ruleset_stats
from ..problems import documented
from ..schemas import GlobalStats, PlayerRef, PlayerStats


def _ruleset_ids() -> list[str]:
    return list(dict.fromkeys(ruleset.id for ruleset in ALL_RULESETS))


@get(
    "/players/{player_id:uuid}/stats",
    operation_id="getPlayerStats",
    summary="A player's stats per ruleset (played, won, win rate, streaks, fewest moves, fastest win, undos) and races",
    tags=["players", "stats"],
    responses=documented(400, 404, 429, 503),
)
async def player_stats(
    stats: NamedDependency[Stats], races: NamedDependency[Races], accounts: NamedDependency[Accounts],
    player_id: Annotated[UUID, PathParameter(description="the player's id")],
) -> PlayerStats:
    rulesets = await stats.player_stats(player_id, _ruleset_ids())
    if rulesets is None:
        raise NotFound(f"no player {player_id}")
    record = await races.record(player_id)  # races played and won
    found = await accounts.store.get_player(player_id)
    if found is None:
        raise NotFound(f"no player {player_id}")
    return PlayerStats(
        player=PlayerRef(found.id, found.name, found.bot),
        rulesets=[ruleset_stats(figures) for figures in rulesets], races=record_view(record),
    )


@get(
    "/stats",
    operation_id="getStats",
    summary="Stats over all players: per ruleset and per deal source (seed, deck, pool, daily, race)",
    tags=["stats"],
    responses=documented(429, 503),
)
async def stats(stats: NamedDependency[Stats]) -> GlobalStats:
    return global_stats(await stats.overall_stats(_ruleset_ids()))
