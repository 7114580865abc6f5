"""The stats projections against real PostgreSQL: kept in the events' transaction while games are
played through ``Moves.play``, and equal to a rebuild from the event log alone."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import msgspec
import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from domain import (
    Command,
    Draw,
    GameState,
    Recycle,
    Resign,
    Status,
    Undo,
    UseSolverHint,
    apply,
    get_ruleset,
    legal_moves,
    replay_commands,
)
from domain.codec import restore
from domain.verify import Unverified
from service.bootstrap import Services, build_services
from service.deals.daily import DailyDeal, daily_source
from service.deals.deal_pools import decode_line, load_deal_pool, start_state
from service.errors import DailyAlreadyPlayed
from service.games.wire import GameView
from service.http.schemas import DealRequest
from service.settings import Settings
from service.stats import projections
from service.stats.projections import PROJECTION_TABLES
from service.stats.rebuild import rebuild_projections
from service.store.event_store import EventStore
from tests.integration.conftest import register

POOL = load_deal_pool("open-runs")
assert POOL is not None, "the repository ships an open-runs pool"
START = datetime(2030, 6, 15, 9, 0, tzinfo=UTC)

# Winning lines found once with `canfield solve` (and checked below through the rules engine).
WINS: dict[str, tuple[int, str]] = {
    "classic": (
        2,
        (
            "TS2 JD3 7Cf D D D D D D D 7Sf D D D D 8Hf D R D D D D 9Hf D D D D D D D 9D3 R D D D D D D D D D 8Cf 9Cf D "
            "R D D D D D D D D TCf 5H4 D D R D D D D D 5S1 D D D D R D 4H1 3S1 THf KD2 2H1 7Df 8Sf AS1 4S2 QS1 D D D D "
            "D 2D3 D D D R D D D 3D2 8Df 9Df D D D TDf 9Sf TSf JDf QDf D D R D D D JCf D D QCf 4C4 D 3H4 D 2S2 R D 2C4 "
            "D D AC3 D D KH3 QS3 KDf KCf R D D D ADf JSf QSf KH1 ACf 2Cf 2Df 3Cf 2S4 3Df D KSf KH3 ASf 2Sf 3H2 4Cf R D "
            "4Df 5Cf JHf D 6Cf QHf KHf AHf 2Hf 3Sf 3Hf 4Hf 4Sf 5Sf 5Df 6Df 5Hf 6Sf D 6Hf"
        ),
    ),
    "draw-one": (
        1,
        (
            "3S4 D 2Sf 3Sf D D D D D D D D D D D D D D D D D D D D D D D 3Hf D D D 4Sf D 2Df D D D 3Df 4Df 5Df D 2Cf D "
            "D R D D D D D D D D D D D D D D D 5Sf D D D 6Df D D D D D 3Cf D D D D D R D D D D D D D D D D D 4Cf D 6Sf "
            "D 7Sf D D D D D D D D D 8Sf D TS1 D 9D1 D R D D 6C3 5H3 D D D TD2 9C2 D D D D 8C1 7D1 D QS4 JH4 5Cf 8H2 D "
            "D D D D D D D D 7C2 6H2 4Hf 5Hf 6Cf 7Df 6Hf 7Cf 8Df 7Hf 8Cf 9Df 8Hf 9Cf 9Sf TDf TSf JSf JDf JH1 QSf R D D "
            "KSf D D TCf D JCf D D D D D QCf KCf D QDf D D 9Hf D ASf R D D KDf D THf JHf D ACf D ADf D QHf KHf AHf"
        ),
    ),
}


class TickingClock:
    """The service's clock: a millisecond later at each reading, from 2030-06-15 09:00 UTC (so no
    run crosses a date by accident)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
async def services(clean_database: str) -> AsyncIterator[Services]:
    # What is written is the point here, not its durability: commits need not wait for the disk.
    pool = AsyncConnectionPool(
        clean_database, min_size=1, max_size=4, open=False,
        kwargs={"autocommit": True, "options": "-c statement_timeout=5000 -c synchronous_commit=off"},
    )
    await pool.open()
    # a fixed deal secret: the daily deck decides how many legal moves the random games choose
    # from, so with a random one the whole run (and whether a daily win is ranked) would vary
    settings = Settings(database_url=clean_database, daily_secret="projections")
    services = build_services(EventStore(pool), settings, TickingClock())
    try:
        yield services
    finally:
        await services.daily.close()
        await pool.close()


def projection_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every projection table, sorted; the leaderboard without its verified_at stamp."""
    with psycopg.connect(url) as conn:
        found = {}
        for table in PROJECTION_TABLES:
            columns = (
                "game_id, day, player_id, moves, seconds, finished_at, status, assisted, unranked"
                if table == "daily_leaderboard"
                else "*"
            )
            found[table] = sorted(conn.execute(f"SELECT {columns} FROM {table}").fetchall(), key=repr)
    return found


async def start(services: Services, token: str, ruleset: str, deal: DealRequest) -> tuple[uuid.UUID, GameState]:
    given = {name: value for name, value in msgspec.structs.asdict(deal).items() if value is not None}
    view = await services.games.create_game(token, ruleset, given)
    return await _started(services, view)


async def start_someone(
    services: Services, token: str, ruleset: str, deal: DealRequest
) -> tuple[str, uuid.UUID, GameState]:
    """``start`` by the token's player, or by a newcomer where they have played today's daily deal
    already (one game per player while its date is on): the token that plays the game, and the game."""
    try:
        return token, *await start(services, token, ruleset, deal)
    except DailyAlreadyPlayed:
        newcomer = (await register(services, f"newcomer {uuid.uuid4().hex[:8]}"))["token"]
        return newcomer, *await start(services, newcomer, ruleset, deal)


async def _started(services: Services, view: GameView) -> tuple[uuid.UUID, GameState]:
    game_id = view.id
    row = await services.store.load_game(game_id)
    assert row is not None
    return game_id, restore(row.snapshot, row.tail, row.version)


async def play(services: Services, token: str, game_id: uuid.UUID, state: GameState, command: Command) -> GameState:
    state, _ = apply(state, command)  # the same rules, locally, to know what is legal next
    played = await services.moves.play(game_id, token, command)
    assert played.version == state.version
    assert played.reply.game.status == state.status.value
    return state


async def winning_deal(services: Services, rng: random.Random) -> tuple[str, DealRequest, list[Command]]:
    """A deal with a known winning line, from the pool, a daily deal (today's: each player's one
    game of it; earlier: practice) or the solver-found lines."""
    kind = rng.choice(["classic", "draw-one", "pool", "pool", "daily", "daily", "daily"])
    if kind in WINS:
        seed, line = WINS[kind]
        return kind, DealRequest(seed=seed), decode_line(line)
    if kind == "pool":
        number = rng.randint(1, POOL.size)
        return "open-runs", DealRequest(pool=number), decode_line(POOL.deal(number).line)
    day = (START - timedelta(days=rng.choice([0, 0, 1]))).date()
    return "open-runs", DealRequest(daily=day.isoformat()), decode_line((await services.daily.deal(day)).line)


def random_deal(rng: random.Random) -> tuple[str, DealRequest]:
    ruleset = rng.choice(["classic", "draw-one", "open-runs"])
    source = rng.choice(["seed", "seed", "deck"] + (["pool", "daily"] if ruleset == "open-runs" else []))
    if source == "pool":
        return ruleset, DealRequest(pool=rng.randint(1, POOL.size))
    if source == "daily":
        return ruleset, DealRequest(daily=(START - timedelta(days=rng.randint(0, 2))).date().isoformat())
    if source == "deck":
        from domain import CODES, shuffled_deck

        return ruleset, DealRequest(deck=[CODES[c] for c in shuffled_deck(rng.randint(0, 10**9))])
    return ruleset, DealRequest(seed=rng.randint(0, 10**6))


def test_the_winning_lines_win() -> None:
    for ruleset, (seed, line) in WINS.items():
        report = replay_commands(start_state(get_ruleset(ruleset), seed), decode_line(line))
        assert report.failed_at is None, ruleset
        assert report.state.status is Status.WON, ruleset


async def test_incremental_projections_equal_a_rebuild_from_the_event_log(
    services: Services, clean_database: str
) -> None:
    rng = random.Random(2026)
    tokens = [(await register(services, f"player {i}"))["token"] for i in range(7)]
    outcomes: dict[str, int] = {"won": 0, "stalled": 0, "resigned": 0, "playing": 0, "assisted": 0}
    for number in range(320):
        token = rng.choice(tokens)
        if number % 22 == 0:  # a win (a known line), sometimes with a detour, sometimes assisted
            ruleset, deal, line = await winning_deal(services, rng)
            if deal.daily is not None and rng.random() < 0.5:  # a newcomer: today's deal is their entry
                token = (await register(services, f"newcomer {number}"))["token"]
            token, game_id, state = await start_someone(services, token, ruleset, deal)
            if rng.random() < 0.4:
                line = [Draw(), Undo(), *line] if state.stock else line
            if rng.random() < 0.2:
                line = [UseSolverHint(), *line]
                outcomes["assisted"] += 1
            for command in line:
                state = await play(services, token, game_id, state, command)
        elif number % 22 == 11:  # draw-one: a pass through the stock without a real move stalls
            game_id, state = await start(services, token, "draw-one", DealRequest(seed=rng.randint(0, 10**6)))
            while state.playing:
                state = await play(services, token, game_id, state, Draw() if state.stock else Recycle())
        else:  # random legal moves (undo and recycle included), then often a resignation
            ruleset, deal = random_deal(rng)
            token, game_id, state = await start_someone(services, token, ruleset, deal)
            for _ in range(rng.randint(0, 14)):
                moves = [m for m in legal_moves(state) if not isinstance(m, Resign)]
                if not state.playing or not moves:
                    break
                state = await play(services, token, game_id, state, rng.choice(moves))
            if state.playing and rng.random() < 0.75:
                state = await play(services, token, game_id, state, Resign())
        outcomes[state.status.value] += 1
    assert outcomes["won"] >= 12
    assert outcomes["stalled"] >= 10
    assert outcomes["resigned"] >= 100
    assert outcomes["playing"] >= 10

    incremental = projection_rows(clean_database)
    counts = rebuild_projections(clean_database)
    rebuilt = projection_rows(clean_database)

    assert rebuilt == incremental
    finished = sum(v for k, v in outcomes.items() if k in ("won", "stalled", "resigned"))
    assert counts["games"] == 320
    assert counts["finished"] == finished
    assert counts["unreadable"] == 0
    assert sum(row[2] for row in rebuilt["player_stats"]) == finished
    assert sum(row[3] for row in rebuilt["player_stats"]) == outcomes["won"]
    assert {row[1] for row in rebuilt["player_stats"]} == {"classic", "draw-one", "open-runs"}
    players = Counter(row[1] for row in rebuilt["player_stats"])  # each player's first finish under a ruleset
    assert dict(rebuilt["ruleset_stats"]) == players
    assert counts["ruleset_stats"] == 3
    assert max(row[5] for row in rebuilt["player_stats"]) >= 1  # some streak
    board = rebuilt["daily_leaderboard"]
    assert counts["refused"] == 0
    assert counts["ranked"] >= 1, f"why each entry is unranked: {Counter(row[8] for row in board)}"
    assert counts["leaderboard"] == len(board)
    assert {row[8] for row in board} >= {None, "not-won"}  # ranked wins and other entries
    assert len({(row[1], row[2]) for row in board}) == len(board)  # one entry per player and date


async def test_an_assisted_daily_win_counts_as_a_win_but_is_not_ranked(services: Services, clean_database: str) -> None:
    token = (await register(services, "Ann"))["token"]
    day = START.date()
    line = decode_line((await services.daily.deal(day)).line)
    game_id, state = await start(services, token, "open-runs", DealRequest(daily="today"))
    for command in [UseSolverHint(), *line]:
        state = await play(services, token, game_id, state, command)
    rows = projection_rows(clean_database)
    assert [(row[0], row[6], row[7], row[8]) for row in rows["daily_leaderboard"]] == [
        (game_id, "won", True, "assisted")
    ]
    assert [(r[2], r[3], r[6], r[7]) for r in rows["player_stats"]] == [(1, 1, None, None)]  # no record either
    assert rows["daily_stats"] == [(day, 1, 1)]
    assert rows["deal_stats"] == []  # a daily deal is no pool deal


async def test_a_hand_edited_log_is_refused_by_the_rebuild(services: Services, clean_database: str) -> None:
    ann = (await register(services, "Ann"))["token"]
    bob = (await register(services, "Bob"))["token"]
    line = decode_line((await services.daily.deal(START.date())).line)
    honest, state = await start(services, ann, "open-runs", DealRequest(daily="today"))
    for command in line:
        state = await play(services, ann, honest, state, command)
    resigned, state = await start(services, bob, "open-runs", DealRequest(daily="today"))
    for command in line[:20]:
        state = await play(services, bob, resigned, state, command)
    state = await play(services, bob, resigned, state, Resign())
    entries = {row[0]: row[8] for row in projection_rows(clean_database)["daily_leaderboard"]}
    assert entries == {honest: None, resigned: "not-won"}

    assert rebuild_projections(clean_database)["ranked"] == 1

    with psycopg.connect(clean_database, autocommit=True) as conn:
        # Bob's resignation becomes a win, and his games row agrees.
        conn.execute("UPDATE events SET type = 'GameWon' WHERE game_id = %s AND type = 'GameResigned'", (resigned,))
        conn.execute("UPDATE games SET status = 'won' WHERE id = %s", (resigned,))
        # Ann's first draw turns up other cards (a different deal, as far as that event says).
        conn.execute(
            'UPDATE events SET data = jsonb_set(data, \'{cards}\', \'["AS", "2S", "3S"]\') '
            "WHERE game_id = %s "
            "AND version = (SELECT min(version) FROM events WHERE game_id = %s AND type = 'StockDrawn')",
            (honest, honest),
        )
    counts = rebuild_projections(clean_database)
    assert (counts["refused"], counts["ranked"], counts["leaderboard"]) == (2, 0, 2)
    entries = {row[0]: row[8] for row in projection_rows(clean_database)["daily_leaderboard"]}
    assert entries == {honest: "unverified", resigned: "unverified"}
    # Plain replay still folds Bob's forged GameWon into a win: only the leaderboard is verified.
    stats = {row[0]: row for row in projection_rows(clean_database)["player_stats"]}
    assert len(stats) == 2


def stored_daily(day: date, number: int) -> DailyDeal:
    """A daily deal as ``daily_deals`` would hold it; its deck (and line) borrowed from a pool deal."""
    item = POOL.deal(number)
    deck = start_state(get_ruleset("open-runs"), item.seed).deck
    return DailyDeal(day, get_ruleset("open-runs"), 0, item.seed, deck, item.line, item.length, 0, START)


def test_verification_refuses_each_kind_of_forgery() -> None:
    day = START.date()
    number = 7
    stored = stored_daily(day, number)
    ruleset = get_ruleset("open-runs")
    state = start_state(ruleset, POOL.deal(number).seed, daily_source(day, practice=False))
    from domain import event_data, event_type
    from domain.events import GameDealt
    from domain.rules import deal as deal_event

    first = deal_event(ruleset, state.deck, daily_source(day, practice=False))
    assert isinstance(first, GameDealt)
    log: list[tuple[str, dict[str, Any]]] = [(event_type(first), event_data(first))]
    for command in decode_line(POOL.deal(number).line):
        state, events = apply(state, command)
        log += [(event_type(e), event_data(e)) for e in events]
    moment = datetime(2026, 1, 1, tzinfo=UTC)

    def rows(entries: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, str, dict[str, Any], datetime]]:
        return [(i + 1, kind, data, moment + timedelta(seconds=i)) for i, (kind, data) in enumerate(entries)]

    moved = next(i for i, (kind, _) in enumerate(log) if kind == "CardsMoved")
    drawn = next(i for i, (kind, data) in enumerate(log) if kind == "StockDrawn" and len(set(data["cards"])) > 1)
    win = projections.verify_daily_win(rows(log), stored)
    assert win.moves == len(decode_line(POOL.deal(number).line))
    assert win.day == day

    def changed(at: int, data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The log with ``data`` written over the data of its event ``at``."""
        return [*log[:at], (log[at][0], {**log[at][1], **data}), *log[at + 1 :]]

    forgeries: dict[str, list[tuple[str, dict[str, Any]]] | None] = {
        "a win without the last move": [*log[:-2], ("GameWon", {})],
        "an extra GameWon early": [*log[:5], ("GameWon", {})],
        "another day's deal": None,
        "no deal stored for the date": None,
        "a practice game": changed(0, {"deal": daily_source(day, practice=True)}),
        "another date": changed(0, {"deal": daily_source(day - timedelta(days=1), practice=False)}),
        "a solver hint": [*log[:1], ("SolverHintUsed", {}), *log[1:]],
        "a different deck": changed(0, {"deck": list(reversed(log[0][1]["deck"]))}),
        "a card moved from elsewhere": changed(
            moved, {"from": "reserve" if log[moved][1]["from"] != "reserve" else "waste"}
        ),
        "a draw that turned up other cards": changed(drawn, {"cards": list(reversed(log[drawn][1]["cards"]))}),
    }
    for name, forged in forgeries.items():
        if name == "another day's deal":
            forged_rows, daily = rows(log), stored_daily(day, number + 1)
        elif forged is None:
            forged_rows, daily = rows(log), None
        else:
            forged_rows, daily = rows(forged), stored
        try:
            projections.verify_daily_win(forged_rows, daily)
        except Unverified:
            continue
        pytest.fail(f"accepted {name}")


async def test_a_failing_projection_undoes_the_move_that_ended_the_game(
    services: Services, clean_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = (await register(services, "Ann"))["token"]
    game_id, state = await start(services, token, "classic", DealRequest(seed=3))
    state = await play(services, token, game_id, state, Draw())
    monkeypatch.setattr(projections, "_FINISHED", "SELECT 1 / 0")
    with pytest.raises(psycopg.errors.DivisionByZero):
        await services.moves.play(game_id, token, Resign())
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT status, version FROM games WHERE id = %s", (game_id,)).fetchone() == ("playing", 2)
        assert conn.execute("SELECT count(*) FROM events WHERE game_id = %s", (game_id,)).fetchone() == (2,)
