"""A race without a named deal gets a secret deal: derived from the server's deal secret, proven
winnable before the race is created, in no pool file, and never named by the race."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg
import pytest

from domain import (
    ALL_RULESETS,
    CODES,
    Ruleset,
    Status,
    deal,
    get_ruleset,
    initial_state,
    parse_deck,
    replay_commands,
    shuffled_deck,
)
from service.deals.daily import PROOF_MAX_SECONDS, PROOF_MAX_STATES, Proof, prove
from service.deals.deal_pools import decode_line, load_deal_pool
from service.races import race_deals
from service.races.race_deals import race_candidate_seed, secret_deal
from tests.support import assert_problem

from .conftest import TEST_DAILY_SECRET, Player, play, running_server, server_settings
from .race_support import create_race, started_race


def stored_race(url: str, race_id: str) -> tuple[list[str], dict[str, Any] | None, dict[str, Any]]:
    """The race's deck, its deal proof and its stored deal source."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT deck, deal_proof, deal FROM races WHERE id = %s", (race_id,)).fetchone()
    assert row is not None
    return row[0], row[1], row[2]


def published_decks() -> set[tuple[str, ...]]:
    """The deck of every seed a pool file lists (deals, won outside the pool, lost, undecided)."""
    seeds: set[int] = set()
    for ruleset_id in {ruleset.id for ruleset in ALL_RULESETS}:
        pool = load_deal_pool(ruleset_id)
        assert pool is not None
        seeds.update(range(1, pool.seeds_tried + 1))
        seeds.update(item.seed for item in pool.deals)
    return {tuple(CODES[card] for card in shuffled_deck(seed)) for seed in seeds}


def test_a_race_without_a_deal_gets_a_proven_deck_in_no_pool(client: httpx.Client, clean_database: str,
                                                             ann: Player) -> None:
    races = [create_race(ann), create_race(ann), create_race(ann, ruleset="classic")]
    stored = [stored_race(clean_database, view["id"]) for view in races]
    decks = [tuple(deck) for deck, _, _ in stored]
    assert len(set(decks)) == 3  # every race its own deal
    # a 53-bit seed all but never falls among the pools' few thousand: this holds whether or not a
    # published seed is skipped (test_a_candidate_whose_seed_a_pool_names_is_skipped checks that)
    assert not set(decks) & published_decks()
    for view, (deck, proof, source) in zip(races, stored, strict=True):
        assert view["deal"] == {"source": "secret"}
        assert source == {"source": "secret"}  # nothing that names the deck is kept with the race's source
        assert proof is not None
        ruleset = get_ruleset(view["ruleset"]["id"])
        # derived from the configured DAILY_SECRET, with a message of its own
        seed = race_candidate_seed(TEST_DAILY_SECRET, ruleset.id, uuid.UUID(view["id"]), proof["candidate"])
        assert deck == [CODES[card] for card in shuffled_deck(seed)]
        # a verdict is a proof: the stored line wins from the deck through the rules
        report = replay_commands(initial_state(deal(ruleset, parse_deck(deck), {})), decode_line(proof["line"]))
        assert report.ok
        assert report.state.status is Status.WON
        assert proof["lineLength"] == len(decode_line(proof["line"]))
        assert proof["line"] not in client.get(f"/races/{view['id']}").text


def test_the_race_never_names_its_secret_deal(client: httpx.Client, clean_database: str, ann: Player,
                                             bob: Player) -> None:
    view = started_race(ann, [bob])
    deck, proof, _ = stored_race(clean_database, view["id"])
    assert proof is not None
    seed = race_candidate_seed(TEST_DAILY_SECRET, "open-runs", uuid.UUID(view["id"]), proof["candidate"])
    running = client.get(f"/races/{view['id']}")
    assert running.json()["deal"] == {"source": "secret"}
    assert str(seed) not in running.text
    games = [entrant["game"] for entrant in view["entrants"]]
    for player, game in zip((ann, bob), games, strict=True):
        assert play(player, game, [{"type": "resign"}])
    finished = client.get(f"/races/{view['id']}").json()
    assert finished["status"] == "finished"
    assert finished["deal"] == {"source": "secret"}  # no seed to name, ever
    # after the race the games are public and their first event lists the deck, as for any ended game
    assert client.get(f"/games/{games[0]}/events").json()["events"][0]["data"]["deck"] == deck


def test_a_deal_not_proven_in_time_is_a_503_and_no_race(database_url: str, clean_database: str) -> None:
    with running_server(server_settings(database_url, race_deal_wait_seconds=0.001)) as url, \
            httpx.Client(base_url=url, timeout=10) as http:
        ann = Player(http, "Ann")
        response = http.post("/races", json={"maxEntrants": 2}, headers=ann.auth)
        assert_problem(response, 503, "unavailable")
        assert int(response.headers["retry-after"]) >= 1
        with psycopg.connect(clean_database) as conn:
            assert conn.execute("SELECT count(*) FROM races").fetchone() == (0,)


async def test_a_candidate_whose_seed_a_pool_names_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidate 0 is made a published pool deal that the prover would prove won: it is never asked
    about nor dealt, and the race gets a later candidate."""
    pool = load_deal_pool("open-runs")
    assert pool is not None
    published = pool.deal(1)
    derived = race_deals.race_candidate_seed
    monkeypatch.setattr(race_deals, "race_candidate_seed", lambda secret, ruleset_id, race_id, candidate: (
        published.seed if candidate == 0 else derived(secret, ruleset_id, race_id, candidate)))
    asked: list[int] = []

    async def prover(ruleset: Ruleset, seed: int) -> Proof:
        asked.append(seed)
        if seed == published.seed:  # won, with a line that replays: dealt unless skipped
            return Proof("won", published.line, 1)
        return prove(ruleset.id, ruleset.version, seed, PROOF_MAX_STATES, PROOF_MAX_SECONDS)

    found = await secret_deal(TEST_DAILY_SECRET, get_ruleset("open-runs"), uuid.uuid4(), prover)
    assert published.seed not in asked
    assert found.deck != shuffled_deck(published.seed)
    assert found.candidate >= 1
