"""Rate limits (service.http.limits): token buckets per player (all their tokens together) and per
address, 429 problems with Retry-After; and the page size limit on lists.

The API tests run on a server with limits nobody reaches; these start their own with small ones.
Each test talks from its own loopback address (127.0.0.N), so address budgets do not leak
between tests.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.http.app import create_app
from service.http.controllers.web import WEB_DIR
from service.http.limits import RateLimiter, TokenBuckets, buckets, retry_after_header
from service.settings import Settings
from tests.support import assert_problem

from .conftest import Player, free_port, running_server, server_settings

WRITE_RATE, WRITE_BURST = 1.0, 4  # slow refills: a few requests in a row see no new token
READ_RATE, READ_BURST = 1.0, 6


@pytest.fixture(scope="module")
def limited_server(database_url: str) -> Iterator[str]:
    settings = Settings(
        database_url=database_url,
        port=free_port(),
        rate_limit_writes_per_second=WRITE_RATE,
        rate_limit_write_burst=WRITE_BURST,
        rate_limit_reads_per_second=READ_RATE,
        rate_limit_read_burst=READ_BURST,
    )
    with running_server(settings) as url:
        yield url


_addresses = iter(range(20, 250))


@pytest.fixture
def connect(limited_server: str, clean_database: str) -> Iterator[Any]:
    """connect() -> an httpx client talking from a loopback address no other test uses."""
    clients: list[httpx.Client] = []

    def make() -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=f"127.0.0.{next(_addresses)}")
        http = httpx.Client(base_url=limited_server, transport=transport, timeout=10)
        clients.append(http)
        return http

    yield make
    for http in clients:
        http.close()


DRAW = {"type": "draw"}


def new_game(player: Player) -> str:
    game_id: str = player.new_game(deal={"seed": 7})["id"]
    return game_id


def assert_rate_limited(response: httpx.Response) -> int:
    assert_problem(response, 429, "rate_limited")
    retry_after = int(response.headers["retry-after"])
    assert retry_after >= 1
    return retry_after


# --- over HTTP -----------------------------------------------------------------------


def test_a_burst_of_moves_beyond_the_budget_is_refused_and_changes_nothing(connect: Any) -> None:
    http = connect()
    ann = Player(http, "Ann")  # the address's budget, not the token's
    game = new_game(ann)  # 1 of the token's 4
    for _ in range(WRITE_BURST - 1):
        assert ann.move(game, DRAW).status_code == 200
    version = http.get(f"/games/{game}").json()["version"]

    for _ in range(3):
        assert_rate_limited(ann.move(game, DRAW, **{"Idempotency-Key": "k1"}))
    after = http.get(f"/games/{game}").json()
    assert after["version"] == version  # a 429 appends nothing
    assert len(http.get(f"/games/{game}/events").json()["events"]) == version


def test_another_player_on_the_same_address_keeps_their_own_budget(connect: Any) -> None:
    http = connect()
    ann, bob = Player(http, "Ann"), Player(http, "Bob")
    ann_game, bob_game = new_game(ann), new_game(bob)
    while ann.move(ann_game, DRAW).status_code == 200:
        pass
    assert_rate_limited(ann.move(ann_game, DRAW))
    assert bob.move(bob_game, DRAW).status_code == 200
    assert http.get(f"/games/{ann_game}").status_code == 200  # reads are a separate budget


TOKENS = 5
PLAYER_BURST = 12  # minting 4 tokens and dealing a game leave 7 writes
PLAYER_RATE = 0.01  # one write back every 100 s: none comes back while the test runs


def test_every_token_of_a_player_spends_one_budget_and_another_player_keeps_theirs(database_url: str,
                                                                                    clean_database: str) -> None:
    """One player with five tokens gets one budget, not five (the attack: 250 tokens, about 200
    moves/s against 20/s); refused moves record nothing; another player plays on."""
    settings = server_settings(database_url, rate_limit_writes_per_second=PLAYER_RATE,
                               rate_limit_write_burst=PLAYER_BURST)
    with running_server(settings) as url:
        clients = [httpx.Client(base_url=url, timeout=10,
                                transport=httpx.HTTPTransport(local_address=f"127.0.0.{next(_addresses)}"))
                   for _ in range(3)]
        try:
            http, elsewhere, bobs = clients
            ann = Player(http, "Ann")  # the address's budget
            tokens = [ann.token]
            for i in range(TOKENS - 1):  # four writes of Ann's
                minted = http.post("/players/me/tokens", json={"name": f"bot {i}", "scopes": ["play"]},
                                   headers=ann.auth)
                assert minted.status_code == 201, minted.text
                tokens.append(minted.json()["token"])
            game = new_game(ann)  # the fifth
            left = PLAYER_BURST - TOKENS
            answers = [http.post(f"/games/{game}/moves", json=DRAW, headers={"Authorization": f"Bearer {token}"})
                       for _ in range(3) for token in tokens]  # the tokens in turn, three rounds
            assert [answer.status_code for answer in answers] == [200] * left + [429] * (3 * TOKENS - left)
            policy = f'"writes";q={PLAYER_BURST};w={int(PLAYER_BURST / PLAYER_RATE)}'
            for refused in answers[left:]:
                assert_rate_limited(refused)
                assert refused.headers["ratelimit-policy"] == policy
                assert refused.headers["ratelimit"].startswith('"writes";r=0;'), "the player's budget, spent"
            version = http.get(f"/games/{game}").json()["version"]
            assert version == 1 + left  # dealt, then the moves that were let through; no refused one
            assert len(http.get(f"/games/{game}/events").json()["events"]) == version

            # from another address, with yet another of Ann's tokens: still Ann's budget
            assert_rate_limited(elsewhere.post(f"/games/{game}/moves", json=DRAW,
                                               headers={"Authorization": f"Bearer {tokens[-1]}"}))
            assert http.get(f"/games/{game}").json()["version"] == version, "nothing was recorded"

            bob = Player(bobs, "Bob")
            bob_game = new_game(bob)
            bob_moves = [bob.move(bob_game, DRAW) for _ in range(3)]
            assert [move.status_code for move in bob_moves] == [200, 200, 200], "another player is not affected"
            assert _remaining(bob_moves[-1]) == PLAYER_BURST - 4
        finally:
            for client in clients:
                client.close()


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["ratelimit"].split(";")[1].removeprefix("r="))


def test_after_retry_after_seconds_requests_pass_again(connect: Any) -> None:
    http = connect()
    ann = Player(http, "Ann")
    game = new_game(ann)
    while (response := ann.move(game, DRAW)).status_code == 200:
        pass
    retry_after = assert_rate_limited(response)
    time.sleep(retry_after)
    assert ann.move(game, DRAW).status_code == 200


def test_reads_are_limited_per_address_for_every_path_but_health_and_schema(connect: Any) -> None:
    http, other = connect(), connect()
    refused = [http.get("/rulesets").status_code for _ in range(READ_BURST + 2)]
    assert refused.count(200) <= READ_BURST + 1
    assert refused[-1] == 429
    assert_rate_limited(http.get("/rulesets"))
    assert_rate_limited(http.get("/nowhere"))  # unknown paths are counted before routing
    assert_rate_limited(http.get("/rulesets", headers={"Authorization": "Bearer made-up"}))  # a token buys no reads
    assert http.get("/health").status_code == 200
    assert http.get("/schema/openapi.json").status_code == 200
    assert other.get("/rulesets").status_code == 200  # another address is not affected


def test_the_web_pages_own_files_are_not_counted_as_reads(connect: Any) -> None:
    """Loading the page takes a score of requests at once; a 429 on one of its scripts would break it."""
    http = connect()
    files = [
        "/",
        *sorted(f"/web/{path.relative_to(WEB_DIR).as_posix()}" for path in WEB_DIR.rglob("*") if path.is_file()),
    ]
    assert len(files) > READ_BURST
    for _ in range(3):  # three page loads, far beyond the read burst
        assert [http.get(path).status_code for path in files] == [200] * len(files)
    assert [http.get("/rulesets").status_code for _ in range(READ_BURST)] == [200] * READ_BURST, (
        "the budget is untouched"
    )
    assert_rate_limited(http.get("/rulesets"))
    assert [http.get(path).status_code for path in files] == [200] * len(files), "the page still loads"
    assert_rate_limited(http.get("/webpage"))  # only / and what is under /web/ are the page's
    assert_rate_limited(http.get("/web"))
    assert_rate_limited(http.get("/lessons"))


def test_a_refused_write_is_answered_before_its_body_is_read(connect: Any) -> None:
    http = connect()
    ann = Player(http, "Ann")
    game = new_game(ann)
    while ann.move(game, DRAW).status_code == 200:
        pass
    not_json = http.post(f"/games/{game}/moves", content=b"draw", headers={**ann.auth, "Content-Type": "text/plain"})
    assert_rate_limited(not_json)  # not 415: nothing past the limiter ran
    too_big = http.post(
        f"/games/{game}/moves", content=b"x" * 100_000, headers={**ann.auth, "Content-Type": "application/json"}
    )
    assert_rate_limited(too_big)  # not 413
    assert_rate_limited(http.post("/nowhere", json={}, headers=ann.auth))  # not 404


def test_writes_without_a_token_are_limited_per_address(connect: Any) -> None:
    http, other = connect(), connect()
    statuses = [http.post("/players", json={"name": f"p{i}"}).status_code for i in range(WRITE_BURST + 1)]
    assert statuses[:WRITE_BURST] == [201] * WRITE_BURST
    assert_rate_limited(http.post("/players", json={"name": "one more"}))
    assert other.post("/players", json={"name": "elsewhere"}).status_code == 201


def test_made_up_tokens_cannot_buy_fresh_budgets(connect: Any) -> None:
    http = connect()
    game = "00000000-0000-4000-8000-000000000000"
    statuses = [
        http.post("/games", json={"deal": {"seed": 1}}, headers={"Authorization": f"Bearer made-up-{i}"}).status_code
        for i in range(WRITE_BURST + 2)
    ]
    assert statuses[:WRITE_BURST] == [401] * WRITE_BURST
    assert statuses[-1] == 429
    assert_rate_limited(http.post(f"/games/{game}/moves", json=DRAW, headers={"Authorization": "Bearer yet-another"}))


def test_a_429_carries_cors_headers_so_browsers_can_read_retry_after(connect: Any) -> None:
    http = connect()
    for _ in range(READ_BURST + 1):
        http.get("/rulesets")
    response = http.get("/rulesets", headers={"Origin": "https://cards.example"})
    assert_rate_limited(response)
    assert response.headers["access-control-allow-origin"] in {"*", "https://cards.example"}
    assert "retry-after" in response.headers["access-control-expose-headers"].lower()
    preflight = http.options(
        "/rulesets", headers={"Origin": "https://cards.example", "Access-Control-Request-Method": "GET"}
    )
    assert preflight.status_code in {200, 204}  # preflights are not counted


def test_lists_take_limit_up_to_1000(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 1})
    assert ann.client.get(f"/games/{game['id']}/events?limit=1000").status_code == 200
    assert_problem(ann.client.get(f"/games/{game['id']}/events?limit=1001"), 400, "invalid_request")


# --- the bucket maths ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_gives_its_burst_then_one_token_per_period() -> None:
    clock = Clock()
    bucket = TokenBuckets(rate=4, burst=3, clock=clock)
    assert [bucket.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("k") == pytest.approx(0.25)
    assert bucket.take("k") == pytest.approx(0.25)  # a refused take spends nothing
    clock.now += 0.1
    assert bucket.take("k") == pytest.approx(0.15)
    clock.now += 0.15
    assert bucket.take("k") == 0.0
    assert bucket.take("k") == pytest.approx(0.25)
    clock.now += 60
    assert [bucket.take("k") for _ in range(4)][:3] == [0.0, 0.0, 0.0]  # refilled up to the burst only
    assert bucket.take("other") == 0.0  # keys are independent


def test_wait_spends_nothing_and_charge_never_goes_below_zero() -> None:
    clock = Clock()
    bucket = TokenBuckets(rate=1, burst=2, clock=clock)
    assert bucket.wait("k") == 0.0
    assert len(bucket) == 0
    bucket.charge("k", 5)
    assert bucket.wait("k") == pytest.approx(1.0)
    clock.now += 0.5
    assert bucket.wait("k") == pytest.approx(0.5)
    assert bucket.take("k") == pytest.approx(0.5)


def test_idle_buckets_are_forgotten_and_memory_is_bounded() -> None:
    clock = Clock()
    bucket = TokenBuckets(rate=10, burst=5, max_buckets=100, clock=clock)
    for key in range(50):
        bucket.take(key)
    clock.now += 0.5  # refill_seconds: every one of them is full again
    bucket.take("new")
    assert len(bucket) == 1
    for key in range(1000):
        bucket.take(key)
    assert len(bucket) <= 100
    bucket.take(999)
    assert bucket.take(999) == 0.0  # the most recent survive


def test_retry_after_is_whole_seconds_at_least_one() -> None:
    assert [retry_after_header(s) for s in (0.0, 0.01, 1.0, 1.01, 2.5)] == ["1", "1", "1", "2", "3"]


def test_a_zero_turns_a_budget_off_and_two_zeros_the_limiter() -> None:
    assert buckets(0, 10) is None
    assert buckets(5, 0) is None
    assert buckets(5, 10) is not None
    off = create_app(
        Settings(
            database_url="postgresql://unused/none",
            rate_limit_writes_per_second=0,
            rate_limit_reads_per_second=0,
        )
    )
    assert not [layer for layer in _layers(off.asgi_handler) if isinstance(layer, RateLimiter)]
    on = create_app(Settings(database_url="postgresql://unused/none", rate_limit_reads_per_second=0))
    [limiter] = [layer for layer in _layers(on.asgi_handler) if isinstance(layer, RateLimiter)]
    assert limiter.reads is None
    assert limiter.writes is not None


def _layers(handler: Any) -> list[Any]:
    """The ASGI wrappers around the app, outermost first (each holds the next as ``app``)."""
    found = []
    while handler is not None and len(found) < 50:
        found.append(handler)
        handler = getattr(handler, "app", None)
    return found


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    names = (
        "RATE_LIMIT_WRITES_PER_SECOND",
        "RATE_LIMIT_WRITE_BURST",
        "RATE_LIMIT_READS_PER_SECOND",
        "RATE_LIMIT_READ_BURST",
    )
    for name in names:
        monkeypatch.delenv(name, raising=False)
    defaults = Settings.from_env()
    assert (defaults.rate_limit_writes_per_second, defaults.rate_limit_write_burst) == (20.0, 40)
    assert (defaults.rate_limit_reads_per_second, defaults.rate_limit_read_burst) == (50.0, 100)
    monkeypatch.setenv("RATE_LIMIT_WRITES_PER_SECOND", "0.5")
    monkeypatch.setenv("RATE_LIMIT_WRITE_BURST", "3")
    monkeypatch.setenv("RATE_LIMIT_READS_PER_SECOND", "0")
    monkeypatch.setenv("RATE_LIMIT_READ_BURST", "7")
    settings = Settings.from_env()
    assert settings.rate_limit_writes_per_second == 0.5
    assert settings.rate_limit_write_burst == 3
    assert settings.rate_limit_reads_per_second == 0
    assert settings.rate_limit_read_burst == 7


def _limit(response: httpx.Response, name: str) -> tuple[int, int]:
    """The (remaining, seconds to full) a response's RateLimit header gives for budget ``name``,
    after checking its RateLimit-Policy."""
    quota, window = (WRITE_BURST, WRITE_RATE) if name == "writes" else (READ_BURST, READ_RATE)
    assert response.headers["ratelimit-policy"] == f'"{name}";q={quota};w={int(quota / window)}'
    label, remaining, reset = response.headers["ratelimit"].split(";")
    assert label == f'"{name}"'
    assert remaining.startswith("r=")
    assert reset.startswith("t=")
    return int(remaining[2:]), int(reset[2:])


def test_every_limited_response_says_what_is_left_of_its_budget(connect: Any) -> None:
    http = connect()
    left = [_limit(http.get("/rulesets"), "reads")[0] for _ in range(READ_BURST)]
    assert left == list(range(READ_BURST - 1, -1, -1)), "one request fewer each time"
    refused = http.get("/rulesets")
    assert_rate_limited(refused)
    remaining, reset = _limit(refused, "reads")
    assert remaining == 0
    assert reset >= 1
    assert "ratelimit" not in http.get("/health").headers, "an exempt path counts against no budget"

    writer = connect()
    created = writer.post("/players", json={"name": "Pacer"})
    assert created.status_code == 201
    assert _limit(created, "writes")[0] == WRITE_BURST - 1, "a new player's POST counts against its address"
    token = created.json()["token"]
    game = writer.post("/games", json={"deal": {"seed": 7}}, headers={"Authorization": f"Bearer {token}"})
    assert _limit(game, "writes")[0] == WRITE_BURST - 1, "a player has a budget of their own"


def test_a_304_does_not_spend_the_read_budget(connect: Any) -> None:
    http = connect()
    first = http.get("/rulesets")
    left = _limit(first, "reads")[0]
    for _ in range(READ_BURST + 2):  # more than the whole budget: 304s cost nothing
        not_modified = http.get("/rulesets", headers={"If-None-Match": first.headers["etag"]})
        assert not_modified.status_code == 304
    assert _limit(not_modified, "reads")[0] == left
