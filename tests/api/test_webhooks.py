"""Webhooks as a receiver sees them: every delivery verified with the Standard Webhooks library,
retried after a 500 and across a server restart with the same webhook-id; and every refusal."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from service.following.addresses import MAX_URL_LENGTH
from tests.support import assert_problem

from .conftest import Player, play, running_server, server_settings

WAIT = 20.0  # the longest a delivery may take to arrive (a loaded machine)


class Receiver:
    """A webhook receiver on loopback: answers each delivery with the next of ``statuses`` (the
    last one from then on) and keeps what it was sent."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.received: list[tuple[dict[str, str], bytes, int]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    status = receiver.statuses[min(len(receiver.received), len(receiver.statuses) - 1)]
                    receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body, status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/canfield?x=1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def wait_for(self, count: int) -> list[tuple[dict[str, str], bytes, int]]:
        deadline = time.monotonic() + WAIT
        while len(self.received) < count:
            assert time.monotonic() < deadline, f"{len(self.received)} deliveries, not {count}"
            time.sleep(0.02)
        return list(self.received)


@contextmanager
def receiver(statuses: list[int]) -> Iterator[Receiver]:
    found = Receiver(statuses)
    found.thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()


def hook_settings(database_url: str, **changes: Any) -> Any:
    # the receiver answers at once: a generous timeout, so a loaded machine never turns an answer into a retry
    shortened = {"webhooks_allow_private": True, "webhook_poll_seconds": 0.05, "webhook_retry_first_seconds": 0.1,
                 "webhook_retry_max_seconds": 0.4, "webhook_timeout_seconds": 10.0, "webhooks_per_player": 3}
    return server_settings(database_url, **{**shortened, **changes})


def _served(settings: Any) -> Iterator[str]:
    with running_server(settings) as url:
        yield url


def _client_of(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def hook_server(database_url: str) -> Iterator[str]:
    yield from _served(hook_settings(database_url))


@pytest.fixture
def http(hook_server: str, clean_database: str) -> Iterator[httpx.Client]:
    yield from _client_of(hook_server)


@pytest.fixture(scope="module")
def strict_server(database_url: str) -> Iterator[str]:
    """A server with the default: webhooks to public addresses only."""
    yield from _served(server_settings(database_url))


@pytest.fixture
def strict(strict_server: str, clean_database: str) -> Iterator[httpx.Client]:
    yield from _client_of(strict_server)


def make_hook(player: Player, url: str, events: list[str] | None = None) -> dict[str, Any]:
    response = player.client.post("/players/me/webhooks", headers=player.auth,
                                  json={"url": url, "events": events or ["gameEnded"]})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/players/me/webhooks/{body['id']}"
    return body


def end_a_game(player: Player, seed: int) -> str:
    game_id: str = player.new_game(ruleset="classic", deal={"seed": seed})["id"]
    play(player, game_id, [{"type": "resign"}])
    return game_id


def logged(player: Player, hook: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The hook's delivery log once it holds ``count`` attempts (each is logged after its answer)."""
    deadline = time.monotonic() + WAIT
    while True:
        items: list[dict[str, Any]] = player.client.get(f"/players/me/webhooks/{hook['id']}/deliveries",
                                                        headers=player.auth).json()["items"]
        if len(items) >= count:
            return items
        assert time.monotonic() < deadline, f"{len(items)} attempts logged, not {count}"
        time.sleep(0.05)


def verified(hook: dict[str, Any], delivery: tuple[dict[str, str], bytes, int]) -> dict[str, Any]:
    headers, body, _ = delivery
    payload: dict[str, Any] = Webhook(hook["secret"]).verify(body, headers)  # raises if the signature is wrong
    assert headers["webhook-signature"].startswith("v1,")
    return payload


def test_a_delivery_answered_500_is_retried_with_the_same_id_and_both_are_logged(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    with receiver([500, 204]) as site:
        hook = make_hook(bot, site.url)
        assert hook["secret"].startswith("whsec_")
        assert hook["status"] == "active"
        assert hook["apiVersion"] == http.get("/versions").json()["default"]
        game_id = end_a_game(bot, 1)
        first, second = site.wait_for(2)
        for delivery in (first, second):
            payload = verified(hook, delivery)
            assert payload["type"] == "gameEnded"
            assert payload["data"]["data"]["game"] == game_id
        assert first[0]["webhook-id"] == second[0]["webhook-id"]  # the receiver drops the duplicate by it
        assert first[0]["host"] == site.url.split("/")[2]
        end_a_game(bot, 2)
        third = site.wait_for(3)[2]
        assert third[0]["webhook-id"] != first[0]["webhook-id"]
        assert verified(hook, third)["data"]["id"] == 2
    log = logged(bot, hook, 3)
    assert [(d["status"], d["attempt"]) for d in log] == [(204, 1), (204, 2), (500, 1)]
    assert all(d["latencyMs"] >= 0 and d["eventType"] == "gameEnded" for d in log)
    paged = http.get(f"/players/me/webhooks/{hook['id']}/deliveries", headers=bot.auth, params={"limit": 2})
    assert len(paged.json()["items"]) == 2
    assert 'rel="next"' in paged.headers["link"]
    rest = http.get(f"/players/me/webhooks/{hook['id']}/deliveries", headers=bot.auth,
                    params={"limit": 2, "cursor": paged.json()["next"]}).json()
    assert [d["status"] for d in rest["items"]] == [500]
    assert rest["next"] is None


def test_a_delivery_failing_when_the_server_stops_is_made_by_the_next_one(
    database_url: str, clean_database: str
) -> None:
    with receiver([503]) as site:
        with running_server(hook_settings(database_url, webhook_retry_first_seconds=3.0,
                                                         webhook_retry_max_seconds=3.0)) as url, \
                httpx.Client(base_url=url, timeout=30) as client:
            bot = Player(client, "Robo")
            hook = make_hook(bot, site.url)
            end_a_game(bot, 1)
            site.wait_for(1)
        failed = len(site.received)  # the server stopped mid-retry (after one failed attempt, or more)
        site.statuses = [503] * failed + [200]  # the next server's attempt succeeds
        with running_server(hook_settings(database_url)) as url, httpx.Client(base_url=url, timeout=30) as client:
            deliveries = site.wait_for(failed + 1)
            bot.client = client
            assert logged(bot, hook, failed + 1)[0]["status"] == 200
        assert [status for _, _, status in deliveries] == [503] * failed + [200]
        assert len({headers["webhook-id"] for headers, _, _ in deliveries}) == 1  # one event, however many attempts
        assert all(verified(hook, delivery) == verified(hook, deliveries[0]) for delivery in deliveries)


def test_a_hook_failing_past_the_retry_window_is_disabled_and_the_stream_says_so(
    database_url: str, clean_database: str
) -> None:
    from .test_account_stream import event_of, sse

    with receiver([500]) as site, running_server(hook_settings(database_url, webhook_retry_seconds=0.5)) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        bot = Player(client, "Robo")
        hook = make_hook(bot, site.url)
        with sse(client, bot) as stream:
            end_a_game(bot, 1)
            assert event_of(stream)["type"] == "gameEnded"
            disabled = event_of(stream)
            assert disabled["type"] == "webhookDisabled"
            assert disabled["data"]["webhook"] == hook["id"]
        listed = client.get("/players/me/webhooks", headers=bot.auth).json()["items"]
        assert listed[0]["status"] == "disabled"
        assert "500" in listed[0]["disabledReason"]
        assert len(site.received) >= 2  # retried at least once before giving up (how often: the load decides)
        delays = len(site.received)
        time.sleep(0.5)
        assert len(site.received) == delays  # nothing more once disabled


def test_only_the_events_named_are_delivered(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    with receiver([200]) as site:
        make_hook(bot, site.url, events=["raceFinished"])
        hook = make_hook(bot, site.url, events=["gameEnded", "raceStarted"])
        end_a_game(bot, 1)
        (delivery,) = site.wait_for(1)
        assert verified(hook, delivery)["type"] == "gameEnded"
        time.sleep(0.3)
        assert len(site.received) == 1


def test_hooks_are_listed_without_secrets_and_deleted(http: httpx.Client) -> None:
    bot, other = Player(http, "Robo"), Player(http, "Ann")
    made = [make_hook(bot, f"http://127.0.0.1:9/{n}") for n in range(3)]
    listed = http.get("/players/me/webhooks", headers=bot.auth, params={"limit": 2})
    assert listed.status_code == 200
    page = listed.json()
    assert [h["id"] for h in page["items"]] == [made[2]["id"], made[1]["id"]]
    assert all("secret" not in h for h in page["items"])
    rest = http.get("/players/me/webhooks", headers=bot.auth, params={"cursor": page["next"]}).json()
    assert [h["id"] for h in rest["items"]] == [made[0]["id"]]
    assert rest["next"] is None
    assert_problem(http.delete(f"/players/me/webhooks/{made[0]['id']}", headers=other.auth), 404, "not_found")
    assert http.delete(f"/players/me/webhooks/{made[0]['id']}", headers=bot.auth).status_code == 204
    assert len(http.get("/players/me/webhooks", headers=bot.auth).json()["items"]) == 2
    assert_problem(http.get(f"/players/me/webhooks/{made[0]['id']}/deliveries", headers=bot.auth), 404, "not_found")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"url": "ftp://example.com/x", "events": ["gameEnded"]}, "webhook_url_invalid"),
        ({"url": "example.com/x", "events": ["gameEnded"]}, "webhook_url_invalid"),
        ({"url": "http://user:pw@example.com/x", "events": ["gameEnded"]}, "webhook_url_invalid"),
        ({"url": "https://example.com/" + "a" * MAX_URL_LENGTH, "events": ["gameEnded"]}, "webhook_url_too_long"),
        ({"url": "http://127.0.0.1:9/x", "events": ["moveMade"]}, "unknown_event_type"),
        ({"url": "http://127.0.0.1:9/x", "events": []}, "invalid_request"),
    ],
)
def test_bad_webhooks_are_refused_each_with_its_code(http: httpx.Client, body: dict[str, Any], code: str) -> None:
    bot = Player(http, "Robo")
    assert_problem(http.post("/players/me/webhooks", headers=bot.auth, json=body), 400, code)
    assert http.get("/players/me/webhooks", headers=bot.auth).json()["items"] == []


def test_one_hook_too_many_is_409_too_many_webhooks(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    for n in range(3):
        make_hook(bot, f"http://127.0.0.1:9/{n}")
    response = http.post("/players/me/webhooks", headers=bot.auth, json={"url": "http://127.0.0.1:9/4",
                                                                         "events": ["gameEnded"]})
    assert_problem(response, 409, "too_many_webhooks")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/x", "http://localhost/x", "http://10.1.2.3/x",
                                 "http://169.254.169.254/latest", "http://[::1]/x", "http://[::ffff:127.0.0.1]/x",
                                 "http://0.0.0.0/x"])
def test_private_addresses_are_refused_unless_allowed(strict: httpx.Client, url: str) -> None:
    bot = Player(strict, "Robo")
    response = strict.post("/players/me/webhooks", headers=bot.auth, json={"url": url, "events": ["gameEnded"]})
    assert_problem(response, 400, "webhook_url_private")



def test_webhooks_need_a_token_with_the_account_scope(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    made = http.post("/players/me/tokens", headers=bot.auth, json={"name": "play only", "scopes": ["play"]})
    assert made.status_code == 201, made.text
    playing = {"Authorization": f"Bearer {made.json()['token']}"}
    body = {"url": "http://127.0.0.1:9/x", "events": ["gameEnded"]}
    assert_problem(http.post("/players/me/webhooks", headers=playing, json=body), 403, "forbidden")
    assert_problem(http.post("/players/me/webhooks", json=body), 401, "unauthorized")


def test_the_account_export_has_the_hooks_without_their_secrets(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    hook = make_hook(bot, "http://127.0.0.1:9/x")
    end_a_game(bot, 1)
    lines = [json.loads(line) for line in http.get("/players/me/export", headers=bot.auth).text.splitlines()]
    (exported,) = [line for line in lines if line["type"] == "webhook"]
    assert exported["id"] == hook["id"]
    assert exported["url"] == "http://127.0.0.1:9/x"
    assert "secret" not in exported
    assert hook["secret"] not in json.dumps(lines)


def test_a_redirect_is_not_followed_and_a_host_name_is_sent_as_host(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    with receiver([302, 200]) as site:
        named = site.url.replace("127.0.0.1", "localhost")
        hook = make_hook(bot, named)
        end_a_game(bot, 1)
        redirected, delivered = site.wait_for(2)
        assert redirected[0]["host"] == delivered[0]["host"] == named.split("/")[2]  # the name, not the address
        assert verified(hook, redirected) == verified(hook, delivered)
    log = logged(bot, hook, 2)
    while not any(d["status"] == 200 for d in log):  # the 200 is logged just after it is answered
        time.sleep(0.05)
        log = logged(bot, hook, len(log) + 1)
    # an attempt that never reached the receiver (a loaded machine's resolver or connect) is logged
    # with its error; the two that reached it are the 302, a failed attempt, and then the 200
    answered = [(d["status"], d["attempt"]) for d in log if d["status"] is not None]
    assert [status for status, _ in answered] == [200, 302], log
    assert answered[0][1] > answered[1][1], log
    assert all(d["error"] for d in log if d["status"] is None), log
