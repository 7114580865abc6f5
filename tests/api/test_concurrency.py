"""Many clients at once, over real HTTP: racing conditional moves, racing idempotent retries, and many
games played by many clients (in-thread server and two uvicorn worker processes), then an audit of
the stored log (tests/live.py): nothing acknowledged is missing, nothing unacknowledged is there,
versions are contiguous and every snapshot equals the replay of its events."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.live import Ledger, ServerProcess, audit
from tests.support import assert_problem

from .conftest import Player

T = TypeVar("T")
RACERS = 8
ROUNDS = 12


def race(clients: list[httpx.Client], request: Callable[[httpx.Client], T]) -> list[T]:
    """``request`` on every client at the same moment (a barrier releases them together)."""
    barrier = threading.Barrier(len(clients))

    def run(client: httpx.Client) -> T:
        barrier.wait(timeout=30)
        return request(client)

    with ThreadPoolExecutor(max_workers=len(clients)) as pool:
        return list(pool.map(run, clients))


def post_move(game_id: str, move: dict[str, str], headers: dict[str, str]) -> Callable[[httpx.Client], httpx.Response]:
    """A move request any client can send, its values bound now (not when the race runs it)."""
    return lambda client: client.post(f"/games/{game_id}/moves", json=move, headers=headers)


def warm_clients(base_url: str, token: str, count: int) -> list[httpx.Client]:
    clients = [
        httpx.Client(base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}) for _ in range(count)
    ]
    for client in clients:
        assert client.get("/health").status_code == 200  # the connection is open before the race
    return clients


@pytest.fixture
def setup(server_url: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server_url, timeout=30) as http:
        yield http


def test_racing_conditional_moves_let_exactly_one_win_each_round(
    setup: httpx.Client, server_url: str, clean_database: str
) -> None:
    ann = Player(setup, "Ann")
    game = ann.new_game(ruleset="classic", deal={"seed": 7})
    game_id, version, stock = game["id"], 1, game["table"]["stock"]["count"]
    clients = warm_clients(server_url, ann.token, RACERS)
    ledger = Ledger()
    try:
        for round_number in range(ROUNDS):
            move = {"type": "draw"} if stock else {"type": "recycle"}
            responses = race(clients, post_move(game_id, move, {"If-Match": f'"{version}"'}))
            statuses = sorted(r.status_code for r in responses)
            assert statuses == [200] + [412] * (RACERS - 1), (round_number, [r.text for r in responses])
            for loser in (r for r in responses if r.status_code == 412):
                assert_problem(loser, 412, "version_conflict")
            winner = next(r for r in responses if r.status_code == 200)
            body = winner.json()
            assert body["game"]["version"] == version + 1
            assert winner.headers["etag"] == f'"{version + 1}"'
            assert [e["version"] for e in body["events"]] == [version + 1]
            ledger.record(f"round-{round_number}", game_id, body)
            version, stock = version + 1, body["game"]["table"]["stock"]["count"]
    finally:
        for client in clients:
            client.close()
    events = setup.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    assert [e["version"] for e in events] == list(range(1, ROUNDS + 2))
    result = audit(clean_database, ledger, [game_id])
    assert result["problems"] == []
    assert result["acknowledged_events"] == ROUNDS


def test_concurrent_retries_with_one_idempotency_key_apply_once(
    setup: httpx.Client, server_url: str, clean_database: str
) -> None:
    ann = Player(setup, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 8})["id"]
    clients = warm_clients(server_url, ann.token, RACERS)
    ledger = Ledger()
    rounds = 5
    try:
        for round_number in range(rounds):
            key = f"retry-{round_number}"
            responses = race(clients, post_move(game_id, {"type": "draw"}, {"Idempotency-Key": key}))
            assert [r.status_code for r in responses] == [200] * RACERS, [r.text for r in responses]
            assert len({r.content for r in responses}) == 1, "every retry gets the first reply, byte for byte"
            fresh = [r for r in responses if r.headers.get("idempotent-replayed") != "true"]
            assert len(fresh) == 1, "exactly one of the racing retries was applied"
            body = fresh[0].json()
            assert body["game"]["version"] == round_number + 2
            ledger.record(key, game_id, body)
    finally:
        for client in clients:
            client.close()
    result = audit(clean_database, ledger, [game_id])
    assert result["problems"] == []
    assert result["stored_events_after_deal"] == rounds


# ---------------------------------------------------------------- many games, many clients

GAMES = 6
CLIENTS_PER_GAME = 4
MOVES_PER_CLIENT = 25
RULESETS = ("classic", "open-runs", "draw-one")
EXPECTED_REFUSALS = {412, 422}  # a stale If-Match; a move chosen from a list another client made stale


def random_player(
    base_url: str, token: str, game_id: str, name: str, seed: int, ledger: Ledger, unexpected: list[str]
) -> dict[str, int]:
    """Random legal moves (an undo now and then) on one shared game: plain, with If-Match, or with an
    Idempotency-Key that is sometimes sent twice (the second reply must be the first one again)."""
    rng = random.Random(seed)
    counts = {"ok": 0, "refused": 0, "replayed": 0}
    with httpx.Client(base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as http:
        for number in range(MOVES_PER_CLIENT):
            legal = http.get(f"/games/{game_id}/legal-moves")
            if legal.status_code != 200:
                unexpected.append(f"{name}: legal-moves {legal.status_code} {legal.text[:200]}")
                return counts
            options = [m for m in legal.json()["moves"] if m["type"] != "resign"]
            move: dict[str, Any] = {"type": "undo"} if rng.random() < 0.1 or not options else rng.choice(options)
            headers: dict[str, str] = {}
            mode = rng.random()
            if mode < 0.3:
                headers["If-Match"] = f'"{legal.json()["version"]}"'
            elif mode < 0.6:
                headers["Idempotency-Key"] = f"{name}-{number}"
            response = http.post(f"/games/{game_id}/moves", json=move, headers=headers)
            if response.status_code == 200:
                ledger.record(name, game_id, response.json())
                counts["ok"] += 1
                if "Idempotency-Key" in headers and rng.random() < 0.3:
                    again = http.post(f"/games/{game_id}/moves", json=move, headers=headers)
                    if again.content != response.content or again.headers.get("idempotent-replayed") != "true":
                        unexpected.append(
                            f"{name}: a retry with the same key got {again.status_code} {again.text[:200]}"
                        )
                    counts["replayed"] += 1
            elif response.status_code == 409:
                return counts  # the game ended (won or stalled)
            elif response.status_code in EXPECTED_REFUSALS:
                if response.status_code == 412 and "If-Match" not in headers:
                    unexpected.append(f"{name}: 412 without If-Match")
                counts["refused"] += 1
            else:
                unexpected.append(f"{name}: {response.status_code} {response.text[:200]}")
    return counts


def play_many_games(base_url: str, database_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as setup:
        players = [Player(setup, f"P{i}") for i in range(GAMES)]
        games = [
            player.new_game(ruleset=RULESETS[i % len(RULESETS)], deal={"seed": 100 + i})["id"]
            for i, player in enumerate(players)
        ]
    ledger = Ledger()
    unexpected: list[str] = []
    jobs = [
        (players[g].token, games[g], f"g{g}c{c}", 1000 * g + c)
        for g in range(GAMES)
        for c in range(CLIENTS_PER_GAME)
    ]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        counts = list(pool.map(lambda job: random_player(base_url, *job, ledger, unexpected), jobs))
    assert unexpected == []
    result = audit(database_url, ledger, games, exact=True)
    assert result["problems"] == []
    assert result["lost"] == 0
    assert result["acknowledged_events"] == result["stored_events_after_deal"]
    acknowledged = sum(c["ok"] for c in counts)
    assert acknowledged == ledger.moves()
    assert acknowledged >= len(jobs) * MOVES_PER_CLIENT // 4, counts  # the load really happened


def test_many_games_by_many_clients_lose_nothing(setup: httpx.Client, server_url: str, clean_database: str) -> None:
    play_many_games(server_url, clean_database)


@pytest.fixture(scope="module")
def two_workers(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`uvicorn --workers 2`: two processes, each with its own cache of games and tokens."""
    server = ServerProcess(database_url, Path(tmp_path_factory.mktemp("two-workers")) / "server.log", workers=2)
    try:
        server.wait_until_up()
        yield server.url
    finally:
        server.stop()


def test_many_games_by_many_clients_across_two_processes_lose_nothing(two_workers: str, clean_database: str) -> None:
    play_many_games(two_workers, clean_database)
