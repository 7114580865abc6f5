"""What each feature's builders make is what its wire Structs say it is.

The features build their replies as msgspec Structs in code (races, tournaments, challenges,
ratings, stats, deals, players, following, analysis, a player's games), and msgspec checks a
Struct's fields only when one is decoded: a builder could hold a status its ``Literal`` does not
list (they ``cast`` the stored string), a negative figure a ``Meta(ge=...)`` refuses or a string
where a UUID belongs, and encode JSON the OpenAPI document does not allow. Each reply here is made
by its real builder from representative rows, every status its rows may hold, and converted again
as its own type (every constraint checked); ``test_a_status_out_of_its_literal_is_refused`` shows
that the check fails on a status the Struct does not list."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import msgspec
import pytest

from domain import get_ruleset
from service.analysis.analyses import job_view
from service.analysis.queue import JobRow
from service.challenges.challenge_store import ChallengeRow
from service.challenges.challenges import challenge_view
from service.deals.choice import pool_summary
from service.deals.deal_pools import load_deal_pool
from service.deals.lessons import lesson_list
from service.following.views import created_view, delivery_list, hook_list
from service.following.webhooks import Delivery, Hook, Page
from service.games.views import game_list
from service.players.accounts import Accounts
from service.players.tokens import TokenCache
from service.races.races import LobbyPage, LobbyRace, RaceTally
from service.races.rows import EntrantRow as RaceEntrantRow
from service.races.rows import RaceRow
from service.races.views import lobby_view, race_view, record_view
from service.ratings.model import Skill
from service.ratings.rating_store import HistoryRow, ListRow
from service.ratings.ratings import history_point, list_entry, rating_view
from service.stats.queries import BoardEntry, RulesetFigures, RulesetTotal, SourceTotal, Totals
from service.stats.views import board_entry, global_stats, ruleset_stats
from service.store.game_records import GameSummaryRow
from service.store.players import PlayerRow, PlayerStore
from service.tournaments.rows import EntrantRow as TournamentEntrantRow
from service.tournaments.rows import GameFigures, TournamentRow
from service.tournaments.tournaments import Board, TournamentPage
from service.tournaments.views import list_view, tournament_view

NOW = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)
ANN, BOB = uuid.UUID(int=1), uuid.UUID(int=2)


def _valid(built: msgspec.Struct) -> None:
    """``built`` passes its own Struct's validation and comes back the same."""
    assert msgspec.convert(msgspec.to_builtins(built), type(built)) == built


# ---------------------------------------------------------------- races


def _race_entrant(player: uuid.UUID, seat: int, standing: dict[str, Any] | None, place: int | None) -> RaceEntrantRow:
    return RaceEntrantRow(
        player_id=player, name=f"player {seat}", seat=seat, joined_at=NOW, game_id=uuid.UUID(int=100 + seat),
        standing=standing, place=place, game_version=None, game_snapshot=None, game_finished_at=NOW,
        game_tail=[], rating_before=1500.4, rating_after=1512.6,
    )


def _race(status: str, deal: dict[str, Any], cancelled: str | None = None) -> RaceRow:
    won = {"status": "won", "cardsOnFoundations": 52, "moveCount": 140, "finishedAt": NOW.isoformat(),
           "assisted": False, "verified": True}
    resigned = {**won, "status": "resigned", "cardsOnFoundations": 12, "verified": False}
    entrants = (_race_entrant(ANN, 0, won, 1), _race_entrant(BOB, 1, resigned, None))
    return RaceRow(
        id=uuid.UUID(int=9), creator_id=ANN, ruleset=("classic", 1), deal=deal, deck=[], max_entrants=4,
        time_limit_seconds=600, status=status, version=5, created_at=NOW, started_at=NOW,
        ends_at=NOW + timedelta(minutes=10), finished_at=NOW if status == "finished" else None,
        entrants=entrants if status != "open" else entrants[:1], cancelled_reason=cancelled, rated=True,
        creator_name="player 0",
    )


@pytest.mark.parametrize("deal", [{"source": "seed", "seed": 7}, {"source": "pool", "pool": 3},
                                  {"source": "deck"}, {"source": "secret"}])
@pytest.mark.parametrize("status", ["open", "finished"])
def test_a_race_view_is_what_its_schema_says(status: str, deal: dict[str, Any]) -> None:
    _valid(race_view(_race(status, deal)))


def test_a_cancelled_race_and_the_lobby_and_a_record_are_what_their_schemas_say() -> None:
    _valid(race_view(_race("finished", {"source": "seed", "seed": 7}, cancelled="its creator left")))
    lobby = LobbyPage([LobbyRace(uuid.UUID(int=9), ANN, "Ann", ("draw-one", 1), source, 4, 2, None, NOW, True)
                       for source in ("seed", "pool", "deck", "secret")], "cursor")
    _valid(lobby_view(lobby))
    _valid(record_view(RaceTally(played=3, won=1)))


# ---------------------------------------------------------------- tournaments


def _tournament(now_offset: timedelta, prepared: bool, finished: bool) -> TournamentRow:
    starts = NOW + now_offset
    return TournamentRow(
        id=uuid.UUID(int=20), creator_id=ANN, creator_name="Ann", creator_bot=False, ruleset=("open-runs", 1),
        deal_count=3, starts_at=starts, minutes=30, ends_at=starts + timedelta(minutes=30), rated=True, version=4,
        created_at=NOW - timedelta(days=1), prepared_at=NOW if prepared else None,
        finished_at=NOW if finished else None,
    )


@pytest.mark.parametrize(("offset", "prepared", "finished"), [
    (timedelta(hours=1), False, False),  # preparing
    (timedelta(hours=1), True, False),  # upcoming
    (timedelta(minutes=-5), True, False),  # running
    (timedelta(minutes=-5), True, True),  # finished
])
def test_a_tournament_and_the_list_are_what_their_schemas_say(
    offset: timedelta, prepared: bool, finished: bool
) -> None:
    tournament = _tournament(offset, prepared, finished)
    standing = {"dealsPlayed": 2, "dealsWon": 1, "wonSeconds": 95.5, "moveCount": 210, "playing": False,
                "verified": True}
    entrants = [TournamentEntrantRow(ANN, "Ann", False, NOW, standing if finished else None, 1 if finished else None),
                TournamentEntrantRow(BOB, "Bob", True, NOW, None, None)]
    games = [GameFigures(ANN, 1, uuid.UUID(int=31), "won", 90, NOW - timedelta(minutes=4), NOW),
             GameFigures(ANN, 2, uuid.UUID(int=32), "playing", 12, NOW, None),
             GameFigures(BOB, 1, uuid.UUID(int=33), "stalled", 40, NOW - timedelta(minutes=4), NOW)]
    _valid(tournament_view(Board(tournament, entrants, games), NOW))
    _valid(list_view(TournamentPage([(tournament, 2)], NOW, None)))


# ---------------------------------------------------------------- challenges, ratings, stats


@pytest.mark.parametrize("status", ["pending", "accepted", "declined", "cancelled", "expired"])
def test_a_challenge_is_what_its_schema_says(status: str) -> None:
    row = ChallengeRow(
        id=uuid.UUID(int=40), from_id=ANN, from_name="Ann", from_bot=False, to_id=BOB, to_name="Bob", to_bot=True,
        ruleset_id="draw-one", rated=True, time_limit_seconds=300, status=status, created_at=NOW,
        expires_at=NOW + timedelta(hours=1), ended_at=None if status == "pending" else NOW,
        race_id=uuid.UUID(int=9) if status == "accepted" else None,
    )
    _valid(challenge_view(row, NOW))


def test_ratings_are_what_their_schemas_say() -> None:
    _valid(rating_view("classic", Skill(), 0))
    _valid(rating_view("open-runs", Skill(31.2, 2.1), 40))
    _valid(history_point(HistoryRow(1, uuid.UUID(int=9), NOW, 2, 4, Skill(), Skill(24.0, 7.5), tournament=True)))
    _valid(list_entry(ListRow(ANN, "Ann", False, 1620, 80, 12)))


def test_stats_and_a_leaderboard_entry_are_what_their_schemas_say() -> None:
    _valid(ruleset_stats(RulesetFigures(10, 4, 0.4, 98, 131.5, 7, "classic", 1, 3)))
    _valid(ruleset_stats(RulesetFigures(0, 0, None, None, None, 0, "draw-one", 0, 0)))
    totals = Totals([RulesetTotal(20, 9, 0.45, 90, 120.0, 11, "open-runs", 3, 2, 5)],
                    [SourceTotal(5, 2, 0.4, 100, 150.0, 1, source) for source in ("seed", "deck", "pool", "daily",
                                                                                  "race")])
    _valid(global_stats(totals))
    for status, unranked in [("won", None), ("stalled", "not-won"), ("won", "assisted"), ("won", "practiced"),
                             ("resigned", "unverified"), ("won", "late")]:
        rank = 1 if unranked is None else None
        entry = BoardEntry(rank, ANN, "Ann", uuid.UUID(int=50), status, unranked == "assisted", unranked, 120, 210.25,
                           NOW, bot=True)
        _valid(board_entry(entry))


# ---------------------------------------------------------------- deals, players, following, analysis, games


def test_the_lessons_and_the_pool_summaries_are_what_their_schemas_say() -> None:
    _valid(lesson_list())
    for ruleset_id in ("classic", "draw-one", "open-runs"):
        pool = load_deal_pool(get_ruleset(ruleset_id).id)
        assert pool is not None
        _valid(pool_summary(pool))


class _Players:
    """The one read ``Accounts.profile`` makes of the player store."""

    async def get_player(self, player_id: uuid.UUID) -> PlayerRow | None:
        return PlayerRow(player_id, "Ann", NOW, bot=True)


def test_a_profile_is_what_its_schema_says() -> None:
    accounts = Accounts(cast(PlayerStore, _Players()), TokenCache(8, lambda: NOW), lambda: NOW)
    _valid(asyncio.run(accounts.profile(ANN)))


@pytest.mark.parametrize("disabled", [False, True])
def test_webhooks_and_their_deliveries_are_what_their_schemas_say(disabled: bool) -> None:
    hook = Hook(uuid.UUID(int=60), "https://example.com/hook", ["raceStarted", "gameEnded"], "2026-12-05", NOW,
                "disabled" if disabled else "active", NOW if disabled else None, NOW if disabled else None,
                "410 Gone" if disabled else None)
    _valid(created_view(hook, "whsec_c2VjcmV0"))
    _valid(hook_list(Page([hook], "next")))
    deliveries = [Delivery(1, "msg_1", "gameEnded", 1, NOW, 200, 35.5, None),
                  Delivery(2, "msg_1", "gameEnded", 2, NOW, None, 5000.0, "timed out")]
    _valid(delivery_list(Page(deliveries, None)))


TURNING_POINT: dict[str, Any] = {"before": 0, "after": 1, "move": {"type": "move", "card": "TD", "to": "tableau-2"},
                                 "winningLineBefore": [{"type": "draw"},
                                                       {"type": "move", "card": "AS", "to": "foundation"},
                                                       {"type": "recycle"}]}
DONE_REPORT: dict[str, Any] = {
    "positions": [{"version": 0, "verdict": "won", "movesToWin": 80}, {"version": 1, "verdict": "lost",
                                                                         "movesToWin": None},
                  {"version": 2, "verdict": "unknown", "movesToWin": None}],
    "turningPoint": TURNING_POINT,
    "solved": 3, "cached": 0, "budgetSpent": True,
}


@pytest.mark.parametrize("status", ["queued", "running", "done", "failed"])
def test_an_analysis_is_what_its_schema_says(status: str) -> None:
    _valid(job_view(JobRow(uuid.UUID(int=70), status, 3, 3 if status == "done" else 1, 3,
                           DONE_REPORT if status == "done" else None)))
    abandoned = {**DONE_REPORT, "turningPoint": {**TURNING_POINT, "move": {"type": "abandon"}}}
    _valid(job_view(JobRow(uuid.UUID(int=70), "done", 3, 3, 3, abandoned)))


def test_a_players_games_are_what_their_schema_says() -> None:
    sources: list[dict[str, Any]] = [
        {"source": "seed", "seed": 7}, {"source": "deck"}, {"source": "pool", "pool": 12},
        {"source": "daily", "daily": "2026-11-30"}, {"source": "lesson", "lesson": "wrapping"},
        {"source": "race", "race": str(uuid.UUID(int=9))},
        {"source": "tournament", "tournament": str(uuid.UUID(int=20)), "deal": 2},
    ]
    rows = [GameSummaryRow(uuid.UUID(int=80 + i), "classic", 1, source, status, 30, 29, 2, False,
                           NOW - timedelta(minutes=i), None if status == "playing" else NOW)
            for i, source in enumerate(sources) for status in ("playing", "won", "stalled", "resigned")]
    page = game_list(rows, len(rows) - 1)
    assert page.next is not None
    _valid(page)


# ---------------------------------------------------------------- the check itself


def test_a_status_out_of_its_literal_is_refused() -> None:
    """A builder casts a stored status to its Literal: one the Struct does not list fails the check."""
    with pytest.raises(msgspec.ValidationError):
        _valid(race_view(replace(_race("open", {"source": "seed", "seed": 7}), status="paused")))
    with pytest.raises(msgspec.ValidationError):
        _valid(job_view(JobRow(uuid.UUID(int=70), "waiting", 3, 0, 3, None)))
    with pytest.raises(msgspec.ValidationError):
        _valid(delivery_list(Page([Delivery(1, "msg_1", "gameEnded", 0, NOW, 200, 1.0, None)], None)))  # attempt >= 1
