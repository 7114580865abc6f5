"""What a client sees of tournaments, as the tournament feature's wire Structs
(service.tournaments.wire): a tournament's view (its standings: figures per entrant, never a card;
their games' ids once it has finished) and a page of the list. The one place a tournament's rows
are turned into what the API shows of them; the controllers and the tournament stream encode what
is built here as it is."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal, cast

import msgspec

from ..wire import PlayerRef, ruleset_ref
from .rows import GameFigures, TournamentRow
from .standings import Tally, live_result, places
from .tournaments import Board, TournamentPage, status_of
from .wire import TournamentList, TournamentStanding, TournamentSummary, TournamentView

Status = Literal["preparing", "upcoming", "running", "finished"]


def summary_of(tournament: TournamentRow, entrants: int, now: datetime) -> TournamentSummary:
    """The tournament without its standings (``GET /tournaments`` lists these)."""
    return TournamentSummary(
        id=tournament.id,
        creator=PlayerRef(tournament.creator_id, tournament.creator_name, tournament.creator_bot),
        status=cast(Status, status_of(tournament, now)),
        ruleset=ruleset_ref(*tournament.ruleset),
        deals=tournament.deal_count,
        starts_at=tournament.starts_at,
        minutes=tournament.minutes,
        ends_at=tournament.ends_at,
        rated=tournament.rated,
        created_at=tournament.created_at,
        prepared_at=tournament.prepared_at,
        finished_at=tournament.finished_at,
        entrants=entrants,
    )


def list_view(page: TournamentPage) -> TournamentList:
    """A page of ``GET /tournaments``: each tournament without its standings."""
    return TournamentList([summary_of(row, entrants, page.now) for row, entrants in page.rows], page.next)


def tournament_view(board: Board, now: datetime) -> TournamentView:
    """The tournament as anyone may see it at ``now``: figures per entrant, never a card; their
    games' ids only once it has finished."""
    tournament, entrants = board.tournament, board.entrants
    done = tournament.finished_at is not None
    by_player: dict[uuid.UUID, list[GameFigures]] = {}
    for game in board.games:
        by_player.setdefault(game.player_id, []).append(game)
    tallies = [
        Tally.from_json(e.standing) if done and e.standing is not None else Tally.of(
            [live_result(g.number, g.status, g.move_count, g.started_at, g.finished_at)
             for g in by_player.get(e.player_id, [])])
        for e in entrants
    ]
    shown = [e.place for e in entrants] if done else places(tallies)
    rows = [
        TournamentStanding(
            player=PlayerRef(e.player_id, e.name, e.bot), place=place, deals_played=tally.deals_played,
            deals_won=tally.deals_won, won_seconds=float(tally.won_seconds), move_count=tally.move_count,
            playing=tally.playing, verified=tally.verified,
            games=[g.game_id for g in by_player.get(e.player_id, [])] if done else None,
        )
        for e, tally, place in zip(entrants, tallies, shown, strict=True)
    ]
    order = sorted(range(len(rows)), key=lambda i: (shown[i] is None, shown[i] or 0, i))
    summary = msgspec.structs.asdict(summary_of(tournament, len(entrants), now))
    return TournamentView(**summary, standings=[rows[i] for i in order])
