"""What a client sees of the stats, as the stats feature's wire Structs (service.stats.wire): a
player's figures per ruleset, the totals over every player, a leaderboard's entry. The one place
what ``Stats`` reads (service.stats.queries) is turned into what the API shows of it."""

from __future__ import annotations

from typing import Literal, cast

from ..wire import PlayerRef, RulesetId
from .queries import BoardEntry, RulesetFigures, Totals
from .wire import GlobalStats, LeaderboardEntry, RulesetStats, RulesetTotals, SourceTotals


def ruleset_stats(figures: RulesetFigures) -> RulesetStats:
    """A player's figures under one ruleset."""
    return RulesetStats(
        ruleset=RulesetId(figures.ruleset), played=figures.played, won=figures.won, win_rate=figures.win_rate,
        current_streak=figures.current_streak, best_streak=figures.best_streak, fewest_moves=figures.fewest_moves,
        fastest_seconds=figures.fastest_seconds, undos=figures.undos,
    )


def global_stats(totals: Totals) -> GlobalStats:
    """Every player's figures: per ruleset, and per deal source."""
    rulesets = [
        RulesetTotals(
            ruleset=RulesetId(total.ruleset), players=total.players, played=total.played, won=total.won,
            win_rate=total.win_rate, fewest_moves=total.fewest_moves, fastest_seconds=total.fastest_seconds,
            undos=total.undos, current_streak=total.current_streak, best_streak=total.best_streak,
        )
        for total in totals.rulesets
    ]
    sources = [
        SourceTotals(
            source=cast(Literal["seed", "deck", "pool", "daily", "race"], total.source), played=total.played,
            won=total.won, win_rate=total.win_rate, fewest_moves=total.fewest_moves,
            fastest_seconds=total.fastest_seconds, undos=total.undos,
        )
        for total in totals.sources
    ]
    return GlobalStats(rulesets, sources)


def board_entry(entry: BoardEntry) -> LeaderboardEntry:
    """A player's entry of a daily leaderboard."""
    return LeaderboardEntry(
        rank=entry.rank, player=PlayerRef(entry.player, entry.name, entry.bot), game=entry.game,
        status=cast(Literal["won", "stalled", "resigned"], entry.status), assisted=entry.assisted,
        unranked=cast(Literal["not-won", "assisted", "practiced", "unverified", "late"] | None, entry.unranked),
        move_count=entry.moves, seconds=entry.seconds, finished_at=entry.finished_at,
    )
