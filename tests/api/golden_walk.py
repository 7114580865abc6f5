"""A walk through every endpoint, as a client would take it, whose replies are the golden replies.

``walk`` makes the same requests in the same order on every run, against a server whose clock
moves one second a request (``tests/api/conftest.Clock``), and returns each exchange in a stable form
(``Exchange``): the status, the headers a client reads, and the body with what differs from run
to run replaced by names:

* the ids the walk made (players, games, races, tokens) by the name the walk gave them
  (``<game:seed-100>``), any other UUID by ``<uuid>``;
* secrets (``token``) by ``<secret>``, request ids (``instance``, ``requestId``) by
  ``<request-id>``, an opaque page cursor (a string ``nextBefore``, ``nextAfter`` or ``next``, and
  a ``cursor=`` in a ``Link`` header; the event log's, a version, stays) by
  ``<cursor>``, a problem's ``detail`` (words for people, which may be improved) by
  ``<words>``, and a daily deal's ``verifiedAt`` (when this process happened to prove it) by
  ``<time>``;
* an ``ETag`` that is not a game's version (a digest of a reply that holds ids) by ``<etag>``.

Some replies depend on more than the request (the solver's time, the process's counters, the
schema's revision): an exchange marked ``shape`` keeps only the JSON types of its body's members.

tests/api/test_golden_replies.py compares a walk with the recorded one, and records it with
``GOLDEN_RECORD=1`` (docs/testing.md says when that is right).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from .conftest import Clock, Player

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
GAME_ETAG = re.compile(r'^(W/)?"\d+"$')
HEADERS = ("content-type", "etag", "location", "idempotent-replayed", "link", "cache-control", "retry-after")
"""The response headers a golden reply keeps (those a client reads; the others carry ids, times
and rate-limit counts)."""
NOW = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
CLOCK_YEAR = str(Clock.START.year)
"""Times the service takes from its clock (``Clock``: 2030) are kept; times the database stamps
(a player's ``createdAt``, a token's) are masked as ``<now>``."""
MASKED_MEMBERS = {
    "token": "<secret>", "nextBefore": "<cursor>", "nextAfter": "<cursor>",
    "instance": "<request-id>", "requestId": "<request-id>", "detail": "<words>", "verifiedAt": "<time>",
}
OPAQUE_CURSOR = re.compile(r"cursor=(?![0-9]+(?:&|>|$))[A-Za-z0-9_-]+")
"""An opaque cursor in a Link header (the event log's, a version, stays)."""


@dataclass
class Exchange:
    name: str
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: Any
    shape: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "request": f"{self.method} {self.path}", "status": self.status,
                "headers": self.headers, "body": self.body, **({"shape": True} if self.shape else {})}


@dataclass
class Walk:
    """The walk's client, the names of the ids it made, and what it saw."""

    client: httpx.Client
    clock: Clock
    version: str | None = None  # the Api-Version every request names (none: the default, the oldest)
    names: dict[str, str] = field(default_factory=dict)
    seen: list[Exchange] = field(default_factory=list)

    def name(self, value: str, as_: str) -> str:
        self.names[value] = f"<{as_}>"
        return value

    def mask(self, text: str) -> str:
        text = OPAQUE_CURSOR.sub("cursor=<cursor>", text)  # in a Link header
        return UUID.sub(lambda m: self.names.get(m.group(0), "<uuid>"), text)

    def masked(self, value: Any) -> Any:
        """``value`` with ids, secrets, request ids, words and the database's times replaced."""
        if isinstance(value, dict):
            return {k: MASKED_MEMBERS[k] if k in MASKED_MEMBERS and isinstance(v, str)
                    else "<cursor>" if k == "next" and isinstance(v, str) and not v.isdigit()  # an event log's stays
                    else self.masked(v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self.masked(v) for v in value]
        if isinstance(value, str):
            return "<now>" if NOW.match(value) and not value.startswith(CLOCK_YEAR) else self.mask(value)
        return value

    def exchanges(self) -> list[Exchange]:
        """What the walk saw, masked (once every id it made has its name)."""
        return [Exchange(e.name, e.method, self.mask(e.path), e.status,
                         {h: self.mask(v) for h, v in e.headers.items()},
                         shape_of(e.body) if e.shape else self.masked(e.body), e.shape) for e in self.seen]

    def send(self, name: str, method: str, path: str, *, shape: bool = False, stream_lines: int = 0,
             **kwargs: Any) -> httpx.Response:
        """Send a request a second after the one before (so lists ordered by time have one order),
        record its exchange under ``name``, and return the response."""
        self.clock.advance(seconds=1)
        if self.version is not None:
            kwargs["headers"] = {"Api-Version": self.version, **kwargs.get("headers", {})}
        if stream_lines:
            with self.client.stream(method, path, **kwargs) as response:
                lines: list[str] = []
                for line in response.iter_lines():
                    lines.append(line)
                    if sum(1 for x in lines if x == "") >= stream_lines:
                        break
                body: Any = [{"data": json.loads(x[6:])} if x.startswith("data: ") else x for x in lines]
                self._record(name, method, path, response, body, shape)
                return response
        response = self.client.request(method, path, **kwargs)
        content_type = response.headers.get("content-type", "")
        if "json" in content_type and "ndjson" not in content_type and response.content:
            body = response.json()
        elif "ndjson" in content_type:
            body = [json.loads(line) for line in response.text.splitlines() if line]
        elif response.status_code == 204 or not response.content:
            body = None
        else:
            body = "<text>"
        self._record(name, method, path, response, body, shape)
        return response

    def _record(self, name: str, method: str, path: str, response: httpx.Response, body: Any, shape: bool) -> None:
        headers = {}
        for header in HEADERS:
            value = response.headers.get(header)
            if value is None:
                continue
            if header == "etag" and not GAME_ETAG.match(value):
                value = "<etag>"
            headers[header] = value
        self.seen.append(Exchange(name, method, path, response.status_code, headers, body, shape))


def shape_of(value: Any) -> Any:
    """``value`` with every scalar replaced by its JSON type's name."""
    if isinstance(value, dict):
        return {k: shape_of(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape_of(v) for v in value[:1]]
    return {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}[type(value)]


def _register(walk: Walk, name: str) -> Player:
    player = Player(walk.client, name)
    walk.name(player.id, f"player:{name}")
    return player


def walk(client: httpx.Client, clock: Clock, version: str | None = None) -> list[Exchange]:
    """Every endpoint, in one fixed order (see the module's docstring), each request written in
    ``version``'s shapes (none: the oldest's, without an ``Api-Version``)."""
    w = Walk(client, clock, version)
    auth = lambda p: {"Authorization": f"Bearer {p.token}"}  # noqa: E731
    tagged = version is not None and version > "2026-12-04"  # deal requests tagged, one list style

    def deal(source: str, value: Any) -> dict[str, Any]:
        if not tagged:
            return {source: value}
        return {"source": source, ("date" if source == "daily" else source): value}

    def page(after: int, limit: int) -> dict[str, Any]:
        if not tagged:
            return {"after": after, "limit": limit}
        return {"limit": limit, **({"cursor": str(after)} if after else {})}

    def player_id(entrant: dict[str, Any]) -> Any:
        player = entrant.get("player")
        return player.get("id") if isinstance(player, dict) else player

    # the service
    for path in ("/livez", "/readyz", "/health"):
        w.send(f"probe {path}", "GET", path, shape=True)
    w.send("metrics", "GET", "/metrics", shape=True)
    w.send("rulesets", "GET", "/rulesets")
    w.send("ruleset", "GET", "/rulesets/classic")
    w.send("ruleset version", "GET", "/rulesets/classic/versions/1")
    w.send("unknown ruleset", "GET", "/rulesets/no-such-rules")

    # players and tokens
    key = "golden-walk-registration-0123456789abcdef"
    reply = w.send("register", "POST", "/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    ann = Player.__new__(Player)  # registered by the walk's own request, to record it
    ann.id, ann.token, ann.client = w.name(reply.json()["id"], "player:Ann"), reply.json()["token"], client
    w.send("register again with the key", "POST", "/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    w.send("register without a name", "POST", "/players", json={})
    bob = _register(w, "Bob")
    cy = _register(w, "Cy")
    w.send("me", "GET", "/players/me", headers=auth(ann))
    w.send("me without a token", "GET", "/players/me")
    minted = w.send("mint a token", "POST", "/players/me/tokens", headers=auth(ann),
                    json={"name": "bot", "scopes": ["play"], "expiresInDays": 30})
    w.name(minted.json()["id"], "token:bot")
    tokens = w.send("tokens", "GET", "/players/me/tokens", headers=auth(ann))
    for token in tokens.json().get("tokens", []):
        if token["id"] not in w.names:
            w.name(token["id"], "token:Ann's first")
    w.send("revoke a token", "DELETE", f"/players/me/tokens/{minted.json()['id']}", headers=auth(ann))
    w.send("the profile", "GET", f"/players/{ann.id}")
    w.send("an unknown player", "GET", "/players/00000000-0000-4000-8000-000000000000")

    # a game: deal, look, ask, move
    dealt = w.send("deal by seed", "POST", "/games", headers=auth(ann),
                   json={"ruleset": "classic", "deal": deal("seed", 100)})
    game = w.name(dealt.json()["id"], "game:seed-100")
    w.send("deal an unknown ruleset", "POST", "/games", headers=auth(ann),
           json={"ruleset": "nope", "deal": deal("seed", 1)})
    w.send("deal without a token", "POST", "/games", json={"deal": deal("seed", 1)})
    w.send("the game", "GET", f"/games/{game}")
    w.send("the game, not modified", "GET", f"/games/{game}", headers={"If-None-Match": dealt.headers["etag"]})
    w.send("legal moves", "GET", f"/games/{game}/legal-moves")
    w.send("hints", "GET", f"/games/{game}/hints")
    w.send("draw", "POST", f"/games/{game}/moves", headers=auth(ann), json={"type": "draw"})
    moves = [m for m in w.send("legal moves after a draw", "GET", f"/games/{game}/legal-moves").json()["moves"]
             if m["type"] == "move"]
    if moves:
        w.send("move a card", "POST", f"/games/{game}/moves", headers=auth(ann), json=moves[0])
    w.send("undo", "POST", f"/games/{game}/moves", headers=auth(ann), json={"type": "undo"})
    w.send("an illegal move", "POST", f"/games/{game}/moves", headers=auth(ann),
           json={"type": "move", "card": "AS", "to": "tableau-1"})
    w.send("a move on a stale version", "POST", f"/games/{game}/moves", headers={**auth(ann), "If-Match": '"1"'},
           json={"type": "draw"})
    w.send("a keyed draw", "POST", f"/games/{game}/moves", headers={**auth(ann), "Idempotency-Key": "draw-1"},
           json={"type": "draw"})
    w.send("the keyed draw again", "POST", f"/games/{game}/moves", headers={**auth(ann), "Idempotency-Key": "draw-1"},
           json={"type": "draw"})
    w.send("a move by another player", "POST", f"/games/{game}/moves", headers=auth(bob), json={"type": "draw"})
    w.send("a move of no type", "POST", f"/games/{game}/moves", headers=auth(ann), json={"card": "AS"})
    w.send("the events", "GET", f"/games/{game}/events", params=page(0, 3))
    w.send("the events, next page", "GET", f"/games/{game}/events", params=page(3, 100))
    w.send("the events as NDJSON", "GET", f"/games/{game}/events.ndjson")
    w.send("the events as NDJSON by Accept", "GET", f"/games/{game}/events",
           headers={"Accept": "application/x-ndjson"}, params={"limit": 2})
    w.send("a past state", "GET", f"/games/{game}/states/1")
    w.send("a state not reached", "GET", f"/games/{game}/states/999")
    w.send("the stream", "GET", f"/games/{game}/stream", stream_lines=1)
    w.send("an unknown game", "GET", "/games/00000000-0000-4000-8000-000000000000")
    w.send("solver hints", "GET", f"/games/{game}/hints", params={"solver": "true"}, headers=auth(ann), shape=True)
    w.send("resign", "POST", f"/games/{game}/moves", headers=auth(ann), json={"type": "resign"})
    w.send("a move after the end", "POST", f"/games/{game}/moves", headers=auth(ann), json={"type": "draw"})
    w.send("the ended game's events", "GET", f"/games/{game}/events", params=page(0, 1))

    # analysis of the ended game
    w.send("ask for an analysis", "POST", f"/games/{game}/analysis", headers=auth(ann), shape=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if client.get(f"/games/{game}/analysis").json().get("status") in ("done", "failed"):
            break
        time.sleep(0.2)
    w.send("the analysis", "GET", f"/games/{game}/analysis", shape=True)
    w.send("the analysis of a game in play", "GET", "/games/00000000-0000-4000-8000-000000000000/analysis")

    # deals: other sources
    for source, value in (("deck", ordered_deck()), ("pool", 1), ("lesson", "wrapping")):
        ruleset = "open-runs" if source == "pool" else "classic"
        reply = w.send(f"deal by {source}", "POST", "/games", headers=auth(bob),
                       json={"ruleset": ruleset, "deal": deal(source, value)})
        if reply.status_code == 201:
            w.name(reply.json()["id"], f"game:{source}")
    w.send("pools", "GET", "/deals/pool")
    w.send("a pool deal", "GET", "/deals/pool/1", params={"ruleset": "open-runs"})
    w.send("lessons", "GET", "/lessons")
    w.send("a lesson", "GET", "/lessons/wrapping")
    day = clock.now.date().isoformat()
    w.send("the daily", "GET", "/deals/daily")
    w.send("the daily by date", "GET", f"/deals/daily/{day}")
    daily = w.send("deal the daily", "POST", "/games", headers=auth(cy), json={"deal": deal("daily", "today")})
    if daily.status_code == 201:
        daily_game = w.name(daily.json()["id"], "game:daily")
        w.send("the daily game, to someone else", "GET", f"/games/{daily_game}")
        w.send("the daily game, to its player", "GET", f"/games/{daily_game}", headers=auth(cy))
        w.send("resign the daily", "POST", f"/games/{daily_game}/moves", headers=auth(cy), json={"type": "resign"})
    w.send("the daily leaderboard", "GET", f"/deals/daily/{day}/leaderboard")
    w.send("a daily in the future", "GET", "/deals/daily/2099-01-01")

    # races
    created = w.send("create a race", "POST", "/races", headers=auth(ann),
                     json={"ruleset": "classic", "deal": deal("seed", 90210), "maxEntrants": 3,
                           "timeLimitSeconds": 600})
    race = w.name(created.json()["id"], "race")
    w.send("the lobby", "GET", "/races/open")
    w.send("join", "POST", f"/races/{race}/entries", headers=auth(bob))
    w.send("join twice", "POST", f"/races/{race}/entries", headers=auth(bob))
    w.send("start by another", "POST", f"/races/{race}/start", headers=auth(bob))
    started = w.send("start", "POST", f"/races/{race}/start", headers=auth(ann))
    for entrant in started.json().get("entrants", []):
        player = "Ann" if player_id(entrant) == ann.id else "Bob"
        if entrant.get("game"):
            w.name(entrant["game"], f"game:race-{player}")
    w.send("the race", "GET", f"/races/{race}")
    w.send("the race stream", "GET", f"/races/{race}/stream", stream_lines=1)
    for entrant in started.json().get("entrants", []):
        owner = ann if player_id(entrant) == ann.id else bob
        if entrant.get("game"):
            w.send("a race game, to another", "GET", f"/games/{entrant['game']}", headers=auth(cy))
            w.send("resign a race game", "POST", f"/games/{entrant['game']}/moves", headers=auth(owner),
                   json={"type": "resign"})
    w.send("the finished race", "GET", f"/races/{race}")

    # stats and a player's games
    w.send("a player's games", "GET", f"/players/{ann.id}/games")
    w.send("a player's games, a page", "GET", f"/players/{ann.id}/games", params={"limit": 1})
    w.send("a player's games, exported", "GET", f"/players/{ann.id}/games/export")
    w.send("a player's stats", "GET", f"/players/{ann.id}/stats")
    w.send("all stats", "GET", "/stats")
    w.send("export my account", "GET", "/players/me/export", headers=auth(bob))

    # leaving
    w.send("revoke every token", "DELETE", "/players/me/tokens", headers=auth(cy))
    w.send("a revoked token", "GET", "/players/me", headers=auth(cy))
    w.send("delete my account", "DELETE", "/players/me", headers=auth(bob))
    w.send("a deleted player", "GET", f"/players/{bob.id}")
    return w.exchanges()


def ordered_deck() -> list[str]:
    """A deck in order (an explicit deal)."""
    return [rank + suit for suit in "CDHS" for rank in "A23456789TJQK"]
