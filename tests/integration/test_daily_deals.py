"""Daily deals against real PostgreSQL: prepared once and stored, the same for every server process
(and after a restart), proven before they are stored, waited for (or 503) while being prepared,
one entry per player and date."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta

import psycopg
import pytest

from domain import Ruleset, Status, deal, get_ruleset, initial_state, replay_commands, shuffled_deck
from service.deals.daily import Proof, candidate_seed, prove
from service.deals.deal_pools import decode_line
from service.deals.wire import DailySource
from service.errors import DailyAlreadyPlayed, Unavailable
from service.games.wire import GameView

from .conftest import register, server_process

NOW = datetime(2030, 6, 15, 9, 0, tzinfo=UTC)
DAY = NOW.date()


def clock() -> datetime:
    return NOW


def stored_rows(url: str) -> list[tuple[date, int, int, list[str]]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT day, candidate, seed, deck FROM daily_deals ORDER BY day").fetchall()


async def test_two_server_processes_asked_at_once_agree_and_a_restart_reads_the_same(clean_database: str) -> None:
    async with (
        server_process(clean_database, 4, clock=clock) as one,
        server_process(clean_database, 4, clock=clock) as two,
    ):
        first, second = await asyncio.gather(one.daily.deal(DAY), two.daily.deal(DAY))
    assert (first.candidate, first.seed, first.deck, first.line) == (
        second.candidate,
        second.seed,
        second.deck,
        second.line,
    )
    assert len(stored_rows(clean_database)) == 1
    async with server_process(clean_database, 2, clock=clock) as restarted:
        again = await restarted.daily.deal(DAY)
    assert (again.seed, again.deck, again.verified_at) == (first.seed, first.deck, first.verified_at)
    # what was stored is proven: the line wins from the deck through the rules
    report = replay_commands(initial_state(deal(first.ruleset, first.deck, {})), decode_line(first.line))
    assert report.ok
    assert report.state.status is Status.WON
    assert first.line_length == len(decode_line(first.line))
    assert first.seed == candidate_seed(stored_secret(clean_database), "open-runs", DAY, first.candidate)


def stored_secret(url: str) -> str:
    """The deal secret the server made and stored (no DAILY_SECRET is set in these tests)."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT value FROM service_secrets WHERE name = 'deal-secret'").fetchone()
    assert row is not None
    return str(row[0])


async def test_processes_with_different_secrets_still_serve_the_one_stored_deal(clean_database: str) -> None:
    async with server_process(clean_database, 4, clock=clock) as one,\
            server_process(clean_database, 4, clock=clock, daily_secret="another secret") as two:
        first, second = await asyncio.gather(one.daily.deal(DAY), two.daily.deal(DAY))
    assert first.deck == second.deck
    assert len(stored_rows(clean_database)) == 1


async def test_a_request_while_the_deal_is_prepared_gets_503_with_retry_after(clean_database: str) -> None:
    released = asyncio.Event()
    solved: list[int] = []

    async def slow_prover(ruleset: Ruleset, seed: int) -> Proof:
        await released.wait()
        solved.append(seed)
        return prove(ruleset.id, ruleset.version, seed, 200_000, 60.0)

    async with server_process(clean_database, 4, clock=clock, daily_wait_seconds=0) as services:
        services.daily.prover = slow_prover
        player = await register(services, "Ann")
        for ask in (
            lambda: services.daily.deal(DAY),
            lambda: services.games.create_game(player["token"], None, {"daily": "today"}),
        ):
            with pytest.raises(Unavailable) as refused:
                await ask()
            assert refused.value.status == 503
            assert refused.value.headers == {"Retry-After": "2"}
            assert "being prepared" in refused.value.detail
        assert stored_rows(clean_database) == []
        assert solved == []
        with psycopg.connect(clean_database) as conn:
            assert conn.execute("SELECT count(*) FROM games").fetchone() == (0,)  # the refused game was not made
        released.set()
        prepared = await services.daily.preparation(DAY)  # the one preparation both requests joined
        assert await services.daily.deal(DAY) == prepared
        assert len(solved) == prepared.candidate + 1  # each candidate once, though asked twice


async def test_today_and_tomorrow_are_prepared_ahead_and_few_dates_at_once(clean_database: str) -> None:
    async with server_process(clean_database, 4, clock=clock) as services:
        assert await services.daily.prepare_ahead() == [DAY, DAY + timedelta(days=1)]
        assert [row[0] for row in stored_rows(clean_database)] == [DAY, DAY + timedelta(days=1)]
        assert await services.daily.prepare_ahead() == [DAY, DAY + timedelta(days=1)]  # stored: nothing to do

        released = asyncio.Event()

        async def stuck(ruleset: Ruleset, seed: int) -> Proof:
            await released.wait()
            return Proof("lost", None, 1)

        services.daily.prover = stuck
        past = [DAY - timedelta(days=n) for n in range(1, 6)]
        for day in past[:4]:
            services.daily.preparation(day)
        with pytest.raises(Unavailable) as refused:
            services.daily.preparation(past[4])
        assert refused.value.status == 503
        assert "being prepared" in refused.value.detail
        await services.daily.close()  # cancels what is in flight
        assert [row[0] for row in stored_rows(clean_database)] == [DAY, DAY + timedelta(days=1)]


async def test_a_candidate_is_stored_only_with_a_line_that_wins_through_the_rules(clean_database: str) -> None:
    tried: list[int] = []

    async def prover(ruleset: Ruleset, seed: int) -> Proof:
        tried.append(seed)
        if len(tried) == 1:
            return Proof("unknown", None, 200_000)  # out of budget: next candidate
        if len(tried) == 2:
            return Proof("won", "D D D", 3)  # a claimed win whose line does not win: never stored
        return prove(ruleset.id, ruleset.version, seed, 200_000, 60.0)

    async with server_process(clean_database, 4, clock=clock) as services:
        services.daily.prover = prover
        found = await services.daily.deal(DAY)
    assert tried[:3] == [candidate_seed(stored_secret(clean_database), "open-runs", DAY, k) for k in range(3)]
    assert found.candidate == len(tried) - 1 >= 2
    assert found.seed == tried[-1]
    assert found.deck == shuffled_deck(found.seed)


async def test_one_game_per_player_and_date_even_when_two_processes_deal_at_once(clean_database: str) -> None:
    async with (
        server_process(clean_database, 4, clock=clock) as one,
        server_process(clean_database, 4, clock=clock) as two,
    ):
        player = await register(one, "Ann")
        await one.daily.deal(DAY)
        answers = await asyncio.gather(
            *(process.games.create_game(player["token"], None, {"daily": "today"}) for process in (one, two, one, two)),
            return_exceptions=True,
        )
    views = [answer for answer in answers if isinstance(answer, GameView)]
    assert [view.deal.practice for view in views if isinstance(view.deal, DailySource)] == [False]
    refusals = [answer for answer in answers if not isinstance(answer, GameView)]
    assert all(isinstance(refusal, DailyAlreadyPlayed) for refusal in refusals), refusals
    assert {refusal.game for refusal in refusals if isinstance(refusal, DailyAlreadyPlayed)} == {str(views[0].id)}
    with psycopg.connect(clean_database) as conn:
        rows = conn.execute("SELECT id, deal FROM games WHERE player_id = %s", (player["id"],)).fetchall()
    assert [(str(row[0]), row[1]["practice"]) for row in rows] == [(str(views[0].id), False)]


async def test_a_game_of_a_past_date_is_practice_and_tomorrow_is_not_dealt(clean_database: str) -> None:
    async with server_process(clean_database, 4, clock=clock) as process:
        player = await register(process, "Ann")
        yesterday = DAY - timedelta(days=1)
        view = await process.games.create_game(player["token"], None, {"daily": yesterday.isoformat()})
        assert view.deal == DailySource(yesterday, practice=True)
        with pytest.raises(Exception, match="not out yet"):
            await process.games.create_game(
                player["token"], None, {"daily": (DAY + timedelta(days=1)).isoformat()}
            )


def test_a_proof_is_a_line_that_wins_or_no_line() -> None:
    """The first candidates of a secret and a date: each verdict either comes with a line that
    wins through the rules or has no line; an easy first candidate is won."""
    ruleset = get_ruleset("open-runs")
    seeds = [candidate_seed("a secret", ruleset.id, DAY, k) for k in range(3)]
    proofs = [prove(ruleset.id, ruleset.version, seed, 200_000, 60.0) for seed in seeds]
    assert proofs[0].result == "won"
    for seed, proof in zip(seeds, proofs, strict=True):
        if proof.result != "won":
            assert proof.line is None
            continue
        assert proof.line is not None
        report = replay_commands(initial_state(deal(ruleset, shuffled_deck(seed), {})), decode_line(proof.line))
        assert report.ok
        assert report.state.status is Status.WON
