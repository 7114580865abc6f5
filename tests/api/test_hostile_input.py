"""Hostile input: random and malicious payloads, headers, paths and queries thrown at every endpoint.

Hypothesis builds request bodies as raw JSON text (so they can hold what no JSON library writes:
duplicate names, ``NaN``, ``Infinity``, 400-digit integers, lone surrogates, 5,000-deep nesting)
around near-valid moves, games and players, and pairs them with odd headers (``If-Match``,
``Idempotency-Key`` with obs-text bytes, junk ``Authorization``, ``Content-Type`` variants). A small
reference oracle here, written from API.md and independent of the service code, says whether each
request is valid. Every answer must be:

* never a 5xx;
* a 4xx: ``application/problem+json`` with ``code`` and ``status``, and no game changed (the event
  logs of every game in play are compared before and after);
* a 2xx only for a request the oracle calls valid; an accepted move appends exactly the events
  its reply lists (or, replayed by its Idempotency-Key, nothing);
* and a valid request from the game's player is never refused as malformed (400, 401, 403, 415).

Reads get hostile path segments and query values (other spellings of a UUID or an integer,
percent-encoded NUL, invalid UTF-8, ``..``, repeated parameters): again never a 5xx, 4xx as
problem+json, 2xx only for values the document allows, and nothing changes.

Bytes that are not HTTP at all (a NUL or a newline in a header) never reach the application: the
HTTP server (uvicorn with httptools, service.http.server) answers ``400`` itself, as plain text; a
test checks it does, that nothing changes and that the server goes on serving.

Runtime: about half a minute (``MAX_EXAMPLES`` per test; ``CANFIELD_HOSTILE_EXAMPLES=2000`` digs deeper).
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.http.versions import NEWEST, OLDEST
from service.players.names import INVISIBLE_LETTERS, skeleton
from service.store.players import DELETED_NAME
from tests.support import assert_problem

from .conftest import Player

MAX_EXAMPLES = int(os.environ.get("CANFIELD_HOSTILE_EXAMPLES", "250"))  # more digs deeper
BODY_LIMIT = 16 * 1024  # the test server's MAX_BODY_BYTES (tests/api/conftest.py)
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- the reference oracle (from API.md, not from the service code) -----------------------------

RANKS, SUITS = "A23456789TJQK", "SHDC"
CODES = [rank + suit for suit in SUITS for rank in RANKS]
TARGETS = ["foundation", "tableau-1", "tableau-2", "tableau-3", "tableau-4"]
SIMPLE = ["draw", "recycle", "undo", "resign"]
RULESETS = ["classic", "draw-one", "open-runs"]
LESSONS = ["base-rank", "wrapping", "reserve-refill", "draw-three-stock"]  # API.md, Lessons
MAX_SEED = 2**53 - 1
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
INTEGER = re.compile(r"-?[0-9]+")
DAY = re.compile(r"today|[0-9]{4}-[0-9]{2}-[0-9]{2}")
IF_MATCH = re.compile(r'[ \t]*(?:\*|(?:W/)?"([0-9]{1,12})"|([0-9]{1,12}))[ \t]*')
KEY = re.compile(r"[!-~]{1,255}")
VALID, MAYBE, INVALID = "valid", "maybe", "invalid"  # MAYBE: valid as written, may still be refused (pool size, dates)


class _Invalid(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Invalid("duplicate name")
        found[key] = value
    return found


def _reject_constant(name: str) -> None:
    raise _Invalid(name)


def strict_json(raw: bytes) -> Any:
    """The body as a strict JSON reader sees it (I-JSON: unique names, no NaN, valid Unicode)."""
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            raise _Invalid("byte order mark")
        value = json.loads(text, object_pairs_hook=_unique, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise _Invalid(str(error)) from None
    _check_unicode(value)
    return value


def _check_unicode(value: Any) -> None:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            raise _Invalid("lone surrogate")
        if isinstance(item, float) and item in (float("inf"), float("-inf")):
            raise _Invalid("number out of range")
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def _integer(value: Any) -> int | None:
    """JSON does not tell 5 from 5.0: a whole number is an integer, a boolean is not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _fields(value: Any, allowed: set[str]) -> dict[str, Any]:
    """The object's non-null members; unknown names make it invalid (null ones too)."""
    if not isinstance(value, dict) or set(value) - allowed:
        raise _Invalid("not an object of those fields")
    return {name: item for name, item in value.items() if item is not None}


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid("not an object")
    return value


def judge_move(raw: bytes) -> tuple[str, str | None]:
    """(VALID or INVALID, the move's canonical form). A move has exactly the fields of its type:
    ``type`` alone, or ``type``, ``card`` and ``to`` for a card move (null is no card)."""
    try:
        move = _object(strict_json(raw))
        kind = move.get("type")
        if kind in SIMPLE and set(move) == {"type"}:
            return VALID, kind
        if kind == "move" and set(move) == {"type", "card", "to"} and move["card"] in CODES and move["to"] in TARGETS:
            return VALID, f"move {move['card']} {move['to']}"
    except _Invalid:
        pass
    return INVALID, None


def judge_game(raw: bytes) -> str:
    try:
        body = _fields(strict_json(raw), {"ruleset", "deal"})
        ruleset = body.get("ruleset", "open-runs")
        if ruleset not in RULESETS:
            return INVALID
        if "deal" not in body:
            return VALID  # the ruleset's default deal
        deal = _object(body["deal"])  # exactly one source, never null
        if len(deal) != 1 or not set(deal) <= {"seed", "deck", "pool", "daily", "lesson"}:
            return INVALID
        if "lesson" in deal:  # a prepared lesson, under classic only (its default)
            return VALID if deal["lesson"] in LESSONS and body.get("ruleset", "classic") == "classic" else INVALID
        if "seed" in deal:
            seed = _integer(deal["seed"])
            return VALID if seed is not None and 0 <= seed <= MAX_SEED else INVALID
        if "deck" in deal:
            deck = deal["deck"]
            return VALID if isinstance(deck, list) and sorted(map(str, deck)) == sorted(CODES) and all(
                isinstance(c, str) for c in deck
            ) else INVALID
        if "pool" in deal:
            number = _integer(deal["pool"])
            return MAYBE if number is not None and number >= 1 else INVALID  # up to the pool's size
        if "daily" in deal:
            return MAYBE if isinstance(deal["daily"], str) and DAY.fullmatch(deal["daily"]) else INVALID  # the window
        return INVALID
    except _Invalid:
        return INVALID


def judge_player(raw: bytes) -> str:
    try:
        body = _fields(strict_json(raw), {"name"})
        name = body.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 40:
            return INVALID
        folded = " ".join(name.split())
        if not (folded and folded.isprintable()) or INVISIBLE_LETTERS.intersection(folded):
            return INVALID
        return INVALID if skeleton(folded) == skeleton(DELETED_NAME) else VALID  # a look-alike of a reserved name
    except _Invalid:
        return INVALID


def json_media_type(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


# --- raw JSON text ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as is (NaN, 400-digit numbers, 01, ...)."""

    text: str


@dataclass(frozen=True)
class Obj:
    """An object as a list of members, so that a name may repeat."""

    pairs: tuple[tuple[str, Any], ...]


def render(node: Any) -> str:
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, Obj):
        return "{" + ",".join(json.dumps(key) + ":" + render(value) for key, value in node.pairs) + "}"
    if isinstance(node, list):
        return "[" + ",".join(render(item) for item in node) + "]"
    return json.dumps(node)  # None, bool, int, float, str (lone surrogates as \ud800 escapes)


def encode(node: Any) -> bytes:
    return render(node).encode("utf-8", "surrogatepass")


NUMBERS = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            Raw("1" + "0" * 400), Raw(str(-(2**63))), Raw(str(2**63)), Raw(str(2**64)), Raw(str(2**53)),
            Raw(str(MAX_SEED)), Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e400"), Raw("-1e400"),
            Raw("-0"), Raw("0.0"), Raw("5.0"), Raw("5.5"), Raw("1E2"), Raw("01"), Raw("0x10"), Raw("+1"),
            Raw(".5"), Raw("1_000"), Raw("-"), Raw("1e"), 0, -1, 1, True, False,
        ]
    ),
)
ODD_TEXT = [
    "", " ", "\u0000", "a\u0000b", "\u202e", "\u202eRLO", "\u200f", "\u200b", "\ufeff", "\ud800", "\udfff",
    "\ud83c", "\U0001f0a1", "é", "e\u0301", "\t", "\n", "\r\n", "\\", '"', "null", "true", "0", "-1", "[]", "{}",
    "7H", "7h", "10H", "TD ", " TD", "\uff34\uff24", "AS\u0000", "XX", "1S", "tableau-0", "tableau-5",
    "tableau-01", "TABLEAU-1", "tableau_1", "Foundation", "foundation ", "stock", "waste", "reserve",
    "draw", "DRAW", "move", "undo", "resign", "recycle", "solver-hint", "today", "tomorrow", "2026-W01-1",
    "20260101", "2026-02-30", "1999-01-01", "9999-12-31", "classic", "Classic", "classic@1", "klondike",
]


def strings(units: list[str], repeats: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    """Short text, control and odd characters, ODD_TEXT, and one of ``units`` repeated ``repeats`` times."""
    return st.one_of(
        st.text(max_size=30),
        st.text(st.characters(categories=["Cc", "Cf", "Cs", "Co", "Zl", "Zp", "Zs", "Mn"]), max_size=10),
        st.sampled_from(ODD_TEXT),
        st.builds(lambda unit, count: unit * count, st.sampled_from(units), repeats),
    )


STRINGS = strings(["a", "é", "\u202e", "\U0001f0a1", "\\u0000"], st.integers(100, 9000))
CARDS = st.one_of(st.sampled_from(CODES), st.from_regex(r"[A-Z0-9a-z]{1,3}", fullmatch=True), STRINGS)
PILES = st.one_of(st.sampled_from(TARGETS), STRINGS)
KEYS = st.one_of(
    st.sampled_from(
        [
            "type", "card", "to", "name", "ruleset", "deal", "seed", "deck", "pool", "daily", "", "Type", "type ",
            "__proto__",
        ]
    ),
    st.text(max_size=8),
)
LEAVES = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)
TREES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(st.tuples(KEYS, children), max_size=4).map(lambda pairs: Obj(tuple(pairs))),
    ),
    max_leaves=12,
)


def deep(depth: int, opener: str) -> bytes:
    if opener == "[":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def _with_member(draw: st.DrawFn, members: list[tuple[str, Any]], candidates: dict[str, st.SearchStrategy[Any]]) -> Obj:
    """An object of some of these members, maybe an extra field, maybe a name given twice."""
    chosen = [(name, value) for name, value in members if draw(st.integers(0, 9)) > 0]  # mostly all of them
    if draw(st.integers(0, 5)) == 0:
        chosen.append((draw(KEYS), draw(LEAVES)))  # an extra field
    if chosen and draw(st.integers(0, 6)) == 0:
        name = draw(st.sampled_from([name for name, _ in chosen]))
        chosen.append((name, draw(candidates.get(name, LEAVES))))  # the same name again
    if draw(st.integers(0, 4)) == 0:
        chosen = draw(st.permutations(chosen))
    return Obj(tuple(chosen))


@st.composite
def move_bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind <= 5:  # near-valid moves
        kinds = st.one_of(st.sampled_from([*SIMPLE, "move", "move", "move"]), STRINGS, NUMBERS, st.none())
        card, to = st.one_of(CARDS, NUMBERS, st.none()), st.one_of(PILES, NUMBERS, st.none())
        choice = draw(st.sampled_from([*SIMPLE, "move"]))
        members: list[tuple[str, Any]] = [("type", choice if draw(st.integers(0, 3)) else draw(kinds))]
        if choice == "move" or draw(st.integers(0, 5)) == 0:
            members += [("card", draw(card)), ("to", draw(to))]
        return encode(_with_member(draw, members, {"type": kinds, "card": card, "to": to}))
    return draw(any_bodies())


@st.composite
def game_bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        seeds = st.one_of(st.integers(0, MAX_SEED), NUMBERS, STRINGS)
        decks = st.one_of(decks_strategy(), st.lists(CARDS, max_size=60), TREES)
        pools = st.one_of(st.integers(-2, 3000), NUMBERS, STRINGS)
        dailies = st.one_of(st.sampled_from(["today", "2026-11-30", "2000-01-01"]), STRINGS, NUMBERS)
        lessons = st.one_of(st.sampled_from([*LESSONS, "Wrapping", "lesson"]), STRINGS, NUMBERS)
        sources = {"seed": seeds, "deck": decks, "pool": pools, "daily": dailies, "lesson": lessons}
        picked = draw(st.lists(st.sampled_from(list(sources)), max_size=2, unique=True))
        deal = _with_member(draw, [(name, draw(sources[name])) for name in picked], dict(sources))
        rulesets = st.one_of(st.sampled_from(RULESETS), STRINGS, NUMBERS, st.none())
        members: list[tuple[str, Any]] = [
            ("ruleset", draw(rulesets)),
            ("deal", deal if draw(st.integers(0, 5)) else draw(TREES)),
        ]
        return encode(_with_member(draw, members, {"ruleset": rulesets}))
    return draw(any_bodies())


@st.composite
def decks_strategy(draw: st.DrawFn) -> list[Any]:
    deck: list[Any] = list(draw(st.permutations(CODES)))
    change = draw(st.integers(0, 6))
    if change == 1:
        deck.pop(draw(st.integers(0, 51)))
    elif change == 2:
        deck[draw(st.integers(0, 51))] = deck[draw(st.integers(0, 51))]  # a card twice (or unchanged)
    elif change == 3:
        deck.append(draw(CARDS))
    elif change == 4:
        deck[draw(st.integers(0, 51))] = draw(st.one_of(CARDS, NUMBERS, st.none()))
    elif change == 5:
        index = draw(st.integers(0, 51))
        deck[index] = deck[index].lower()
    return deck


@st.composite
def player_bodies(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 9)) <= 5:
        names = st.one_of(STRINGS, st.text(min_size=1, max_size=45), NUMBERS, st.none(), TREES)
        return encode(_with_member(draw, [("name", draw(names))], {"name": names}))
    return draw(any_bodies())


def any_bodies() -> st.SearchStrategy[bytes]:
    valid = Obj((("type", "draw"),))
    return st.one_of(
        TREES.map(encode),
        st.builds(deep, st.sampled_from([40, 500, 990, 1000, 1100, 3000, 5000]), st.sampled_from("[{")),
        st.binary(max_size=64),
        st.sampled_from(
            [
                b"", b"{", b"}", b"[]", b"null", b"0", b'""', b"{}", b'{"type": "draw"} x', b'{"type": "draw"',
                b"\xef\xbb\xbf" + encode(valid), encode(valid).decode().encode("utf-16"), b"\xff\xfe\x00",
                b'{"type": "dr\\u0061w"}', b'{"type" : "draw" }', b"\x00" + encode(valid),
                b'{"type": "draw"}' + b" " * 20_000,  # over the body limit
            ]
        ),
    )


# --- headers ------------------------------------------------------------------------------------

# What HTTP allows in a header value: visible ASCII, obs-text (0x80-0xff), and spaces or tabs inside.
HEADER_BYTES = st.lists(
    st.sampled_from([*range(0x21, 0x7F), *range(0x80, 0x100), 0x20, 0x09]), min_size=1, max_size=300
).map(bytes).map(lambda value: value.strip(b" \t") or b"x")
CONTENT_TYPES = st.sampled_from(
    [
        "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json;charset=latin-1",
        "application/problem+json", "application/vnd.canfield+json", "text/plain", "text/json",
        "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "json", "",
        "application/json, text/plain", "*/*", None,
    ]
)


@dataclass
class Headers:
    content_type: str | None
    auth: str  # owner, other, none, junk
    junk_auth: bytes
    if_match: bytes | None
    key: bytes | None

    def build(self, owner: Player, other: Player) -> list[tuple[bytes, bytes]]:
        headers: list[tuple[bytes, bytes]] = []
        if self.content_type is not None:
            headers.append((b"Content-Type", self.content_type.encode()))
        token = {"owner": owner.token, "other": other.token}.get(self.auth)
        if token is not None:
            headers.append((b"Authorization", f"Bearer {token}".encode()))
        elif self.auth == "junk":
            headers.append((b"Authorization", self.junk_auth))
        if self.if_match is not None:
            headers.append((b"If-Match", self.if_match))
        if self.key is not None:
            headers.append((b"Idempotency-Key", self.key))
        return headers


@st.composite
def headers_strategy(draw: st.DrawFn, moves: bool) -> Headers:
    content_type = draw(st.one_of(st.just("application/json"), st.just("application/json"), CONTENT_TYPES))
    auth = draw(st.sampled_from(["owner"] * 5 + ["other", "none", "junk"]))
    junk = draw(
        st.one_of(
            HEADER_BYTES.map(lambda v: b"Bearer " + v),
            HEADER_BYTES,
            st.sampled_from([b"Bearer", b"Basic YTpi", b"bearer  x y"]),
        )
    )
    if_match = key = None
    if moves:
        if_match = draw(
            st.one_of(
                st.none(),
                st.none(),
                st.none(),
                st.sampled_from(
                    [b'"1"', b'W/"1"', b"1", b"*", b'"2"', b'"0"', b'"99999999999"', b'"-1"', b'"1", "2"', b'"1']
                ),
                HEADER_BYTES,
            )
        )
        key = draw(
            st.one_of(
                st.none(),
                st.text("abcXYZ0123-_.!~", min_size=1, max_size=4).map(str.encode),
                HEADER_BYTES,
                st.just(b"k" * 256),
            )
        )
    return Headers(content_type, auth, junk, if_match, key)


def headers_valid(headers: Headers) -> bool:
    if not json_media_type(headers.content_type):
        return False
    if headers.if_match is not None and not (
        headers.if_match.strip(b" \t") == b"*" or IF_MATCH.fullmatch(headers.if_match.decode("latin-1"))
    ):
        return False
    return headers.key is None or bool(KEY.fullmatch(headers.key.decode("latin-1")))


# --- checks -------------------------------------------------------------------------------------


@dataclass
class Table:
    """Ann's game in progress (moves go there), her finished game and Bob's game; their logs."""

    client: httpx.Client
    ann: Player
    bob: Player
    playing: str = ""
    finished: str = ""
    bobs: str = ""
    keys: dict[tuple[str, bytes], str] = field(default_factory=dict)  # (game, Idempotency-Key) -> the move

    def __post_init__(self) -> None:
        self.playing = self.ann.new_game(deal={"seed": 11})["id"]
        self.finished = self.ann.new_game(deal={"seed": 12})["id"]
        assert self.ann.move(self.finished, {"type": "resign"}).status_code == 200
        self.bobs = self.bob.new_game(deal={"seed": 13})["id"]

    def games(self) -> list[str]:
        return [self.playing, self.finished, self.bobs]

    def logs(self) -> dict[str, list[Any]]:
        found = {}
        for game in self.games():
            response = self.client.get(f"/games/{game}/events", params={"limit": 1000})
            assert response.status_code == 200
            found[game] = response.json()["events"]
        return found

    def renew(self) -> None:
        if self.client.get(f"/games/{self.playing}").json()["status"] != "playing":
            self.playing = self.ann.new_game(deal={"seed": 11})["id"]


@pytest.fixture
def table(client: httpx.Client, ann: Player, bob: Player) -> Table:
    return Table(client, ann, bob)


def _outline(events: list[Any]) -> list[tuple[Any, ...]]:
    """Version, type and time of each event (an ended game reveals more data in its first event)."""
    return [(event["version"], event["type"], event["recordedAt"]) for event in events]


def post(table: Table, path: str, body: bytes, headers: Headers) -> httpx.Response:
    response = table.client.post(path, content=body, headers=headers.build(table.ann, table.bob))
    event(f"{response.status_code} {response.json().get('code', '') if response.status_code >= 400 else ''}")
    assert response.status_code < 500, (path, body[:200], response.status_code, response.text[:300])
    if response.status_code >= 400:
        assert_problem(response)
    return response


# --- the writes ---------------------------------------------------------------------------------


def attempt(
    table: Table, data: st.DataObject, bodies: st.SearchStrategy[bytes], path: str, *, moves: bool
) -> tuple[bytes, Headers, dict[str, list[Any]], httpx.Response]:
    """Draw a body and headers, note every game's log, then post them to ``path``: (body, headers,
    the logs before, the response)."""
    body = data.draw(bodies, "body")
    headers = data.draw(headers_strategy(moves=moves), "headers")
    before = table.logs()
    return body, headers, before, post(table, path, body, headers)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_hostile_moves_are_refused_and_change_no_game(table: Table, data: st.DataObject) -> None:
    game = data.draw(
        st.sampled_from([table.playing] * 6 + [table.finished, table.bobs, "00000000-0000-4000-8000-000000000000"]),
        "game",
    )
    body, headers, before, response = attempt(table, data, move_bodies(), f"/games/{game}/moves", moves=True)
    verdict, move = judge_move(body)
    valid = verdict == VALID and headers_valid(headers) and len(body) <= BODY_LIMIT
    key = headers.key
    reused = key is not None and (game, key) in table.keys
    owns = (headers.auth == "owner" and game in (table.playing, table.finished)) or (
        headers.auth == "other" and game == table.bobs
    )
    after = table.logs()
    if response.status_code >= 400:
        assert after == before, "a refused move changed a game"
        if valid and owns:
            allowed = {409, 412, 422} | ({400} if reused and table.keys[(game, key)] != move else set())  # type: ignore[index]
            assert response.status_code in allowed, ("a valid move was refused", body, response.text)
        return
    assert response.status_code == 200
    assert (valid and owns) or reused, ("accepted", body, headers)
    if response.headers.get("idempotent-replayed") == "true":
        assert reused
        assert table.keys[(game, key)] == move
        assert after == before, "a replayed move changed a game"
        return
    appended = response.json()["events"]
    assert _outline(after[game]) == _outline(before[game]) + _outline(appended), (
        "the log is not the old one plus the move"
    )
    assert {g: after[g] for g in after if g != game} == {g: before[g] for g in before if g != game}
    if key is not None and move is not None:
        table.keys[(game, key)] = move
    table.renew()


def _game_verdict(body: bytes, headers: Headers) -> tuple[bool, bool]:
    """(may it be accepted, must it be): a game valid as written may still be refused (MAYBE: pool
    sizes, dates); dealing takes a token."""
    verdict = judge_game(body)
    may = (
        verdict != INVALID and headers_valid(headers) and len(body) <= BODY_LIMIT and headers.auth in ("owner", "other")
    )
    return may, may and verdict == VALID


def _game_created(body: bytes, created: dict[str, Any]) -> None:
    assert created["status"] == "playing"
    assert created["version"] == 1


def _player_verdict(body: bytes, headers: Headers) -> tuple[bool, bool]:
    valid = judge_player(body) == VALID and json_media_type(headers.content_type) and len(body) <= BODY_LIMIT
    return valid, valid


def _player_created(body: bytes, created: dict[str, Any]) -> None:
    assert created["name"] == " ".join(strict_json(body)["name"].split())


# What each creating POST takes: its bodies, the oracle's verdict, what the created thing must be.
CREATIONS = {
    "/games": (game_bodies, _game_verdict, _game_created),
    "/players": (player_bodies, _player_verdict, _player_created),
}


@pytest.mark.slow
@pytest.mark.parametrize("path", list(CREATIONS))
@FUZZ
@given(data=st.data())
def test_hostile_new_games_and_players_are_refused_and_change_no_game(
    table: Table, data: st.DataObject, path: str
) -> None:
    bodies, judge, created = CREATIONS[path]
    body, headers, before, response = attempt(table, data, bodies(), path, moves=False)
    may, must = judge(body, headers)
    assert table.logs() == before, "creating a game or a player changed a game"
    if response.status_code >= 400:
        assert not must, ("a valid request was refused", body, response.text)
        return
    assert response.status_code == 201, response.text
    assert may, ("accepted", body, headers)
    created(body, response.json())


# --- the reads ----------------------------------------------------------------------------------

# URLs stay under what clients send (httpx refuses 64 KiB): long values are a few hundred characters.
SHORT_STRINGS = strings(["a", "é", "\u202e", "\U0001f0a1", "9"], st.integers(100, 400))
SEGMENTS = st.one_of(
    SHORT_STRINGS,
    st.sampled_from(["..", ".", "%00", "%ff", "%2f", "%2e%2e", "a/b", "?", "#", "%", ";x"]),
    st.integers().map(str),
)
QUERY_VALUES = st.one_of(
    st.integers(-5, 2000).map(str),
    st.sampled_from(
        [
            "", "0", "1", "100", "1000", "1001", "-1", "-0", "01", "+1", "1.0", "1e3", "0x10", "1_0", "\uff11", " 1",
            "1 ", "true", "%00", "99999999999999999999999",
        ]
    ),
    SHORT_STRINGS,
)


def _quote(text: str) -> str:
    if text in ("..", ".") or (text.startswith("%") and text.isascii() and text.isprintable() and " " not in text):
        return text  # as written: percent escapes (well-formed or not) and dot segments; a control
        # character or a space after a '%' is quoted, as no client can send it raw
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def reads(draw: st.DrawFn, table: Table) -> tuple[str, dict[str, list[str]], str]:
    """(path, query, what a 2xx needs): hostile values where the document expects ids, numbers, dates."""
    game = table.playing
    ids = st.one_of(
        st.sampled_from(
            [
                game, game.upper(), game.replace("-", ""), "urn:uuid:" + game, "{" + game + "}", game + " ", " " + game,
                game[:-1],
            ]
        ),
        SEGMENTS,
    )
    template = draw(
        st.sampled_from(
            [
                "/games/{id}", "/games/{id}/events", "/games/{id}/legal-moves", "/games/{id}/hints",
                "/games/{game}/states/{n}", "/players/{player}", "/players/{player}/stats", "/rulesets/{any}",
                "/deals/pool/{n}", "/deals/daily/{day}", "/deals/daily/{day}/leaderboard", "/games/{game}/events",
                "/games/{game}/hints",
            ]
        )
    )
    values = {
        "id": draw(ids),
        "game": game,
        "n": draw(st.one_of(QUERY_VALUES, SEGMENTS)),
        "player": draw(
            st.one_of(st.sampled_from([table.ann.id, table.ann.id.upper(), table.ann.id.replace("-", "")]), SEGMENTS)
        ),
        "any": draw(st.one_of(st.sampled_from(RULESETS), SEGMENTS)),
        "day": draw(st.one_of(st.sampled_from(["today", "2026-11-30"]), SEGMENTS)),
    }
    path = template
    for name, value in values.items():
        path = path.replace("{" + name + "}", _quote(value))
    names = {"events": ["after", "limit"], "leaderboard": ["limit"], "pool": ["ruleset"], "hints": ["solver"]}
    query: dict[str, list[str]] = {}
    for segment, params in names.items():
        if f"/{segment}" in template:
            for param in params:
                count = draw(st.sampled_from([0, 1, 1, 1, 2]))
                if count:
                    query[param] = [
                        draw(
                            QUERY_VALUES if param != "ruleset" else st.one_of(st.sampled_from(RULESETS), SHORT_STRINGS)
                        )
                        for _ in range(count)
                    ]
    return path, query, template


def read_allowed(template: str, path: str, query: dict[str, list[str]]) -> bool:
    """May this read succeed? Only with canonical ids, ASCII integers in range, each parameter once."""
    parts = dict(zip(template.split("/"), urlsplit(path).path.split("/"), strict=False))
    for name, raw in parts.items():
        if name.startswith("{") and (raw == "" or "/" in unquote(raw) or unquote(raw) in (".", "..")):
            return True  # names another route: /deals/daily/ is /deals/daily, /deals/pool/%2F is /deals/pool
        if name in ("{id}", "{player}") and not UUID.fullmatch(raw):
            return False
        if name == "{n}" and not (INTEGER.fullmatch(raw) and int(raw) >= 1):
            return False
        if name == "{day}" and not DAY.fullmatch(raw):
            return False
    for name, values in query.items():
        if len(values) > 1:
            return False
        value = values[0]
        if name in ("after", "limit") and not INTEGER.fullmatch(value):
            return False
        if name == "limit" and not 1 <= int(value) <= 1000:
            return False
        if name == "after" and not 0 <= int(value) <= 2**31 - 1:
            return False
        if name == "ruleset" and value not in RULESETS:
            return False
    return True


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_hostile_paths_and_queries_to_reads(table: Table, data: st.DataObject) -> None:
    path, query, template = data.draw(reads(table), "request")
    before = table.logs()
    query_text = "&".join(f"{quote(name)}={_quote(value)}" for name, values in query.items() for value in values)
    response = table.client.get(path + ("?" + query_text if query_text else ""))
    assert response.status_code < 500, (path, query, response.status_code, response.text[:300])
    if response.status_code >= 400:
        assert_problem(response)
    elif response.request.url.raw_path.decode("ascii").split("?")[0] == path:  # the client did not resolve "..", "."
        assert read_allowed(template, path, query), (
            "a read took a value the document rules out",
            path,
            query,
            response.status_code,
        )
    assert table.logs() == before, "a read changed a game"


# --- below HTTP ---------------------------------------------------------------------------------


def send_raw(table: Table, head: bytes, body: bytes) -> bytes:
    url = urlsplit(str(table.client.base_url))
    with socket.create_connection((url.hostname, url.port), timeout=5) as sock:
        sock.sendall(head + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "header",
    [
        b'If-Match: "1\x00"', b"Idempotency-Key: a\x01b", b"Idempotency-Key: \x1b[31m", b"X-Junk: a\rb",
        b"Authorization: Bearer a\x0bb", b"Authorization: Bearer \x7f",
    ],
)
def test_header_bytes_that_are_not_http_never_reach_a_game(table: Table, header: bytes) -> None:
    before = table.logs()
    head = (
        f"POST /games/{table.playing}/moves HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {table.ann.token}\r\n".encode() + header
    )
    answer = send_raw(table, head, b'{"type": "resign"}')
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]  # from the HTTP server: not HTTP, no application
    assert table.logs() == before
    assert table.client.get("/health").status_code == 200  # still serving


@pytest.mark.parametrize(
    "header",
    [b"Authorization: Bearer junk", b"Content-Type: text/plain", b"Idempotency-Key: k", b'If-Match: "1"'],
)
def test_a_header_this_service_reads_is_given_once(table: Table, header: bytes) -> None:
    """Two Authorization lines (or Content-Type, If-Match, Idempotency-Key): 400, whichever comes first."""
    before = table.logs()
    name = header.split(b":")[0]
    for first, second in ((header, None), (None, header)):
        lines = [
            b"Content-Type: application/json",
            f"Authorization: Bearer {table.ann.token}".encode(),
            b"Idempotency-Key: once",
            b'If-Match: "1"',
        ]
        same = next(index for index, line in enumerate(lines) if line.split(b":")[0] == name)
        lines.insert(same if first else same + 1, first or second)  # type: ignore[arg-type]
        head = f"POST /games/{table.playing}/moves HTTP/1.1\r\nHost: test\r\n".encode() + b"\r\n".join(lines)
        answer = send_raw(table, head, b'{"type": "resign"}')
        assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
        assert b"application/problem+json" in answer, answer[:600]
        assert b"more than once" in answer, answer[:600]
    assert table.logs() == before


# --- what the fuzzing found, pinned -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (deep(5000, "["), "nested too deeply"),
        (deep(2500, "{"), "nested too deeply"),
        (b'{"type": "draw", "type": "resign"}', "'type' twice"),
        (b'{"type": "move", "card": "7H", "to": "tableau-1", "to": "foundation"}', "'to' twice"),
        (b"", "needs a JSON body"),
    ],
)
def test_runaway_nesting_duplicate_names_and_no_body_are_400(table: Table, body: bytes, detail: str) -> None:
    before = table.logs()
    response = table.client.post(
        f"/games/{table.playing}/moves", content=body, headers={**table.ann.auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text
    assert detail in response.json()["detail"], response.text
    assert_problem(response)
    assert table.logs() == before


@pytest.mark.parametrize("version", [OLDEST.name, NEWEST.name])
def test_a_name_twice_in_a_new_games_deal_is_400_in_every_version(table: Table, version: str) -> None:
    """The oldest version's deal request is rewritten for the newest (tagged); a rewrite keeps one
    of two equal names, so the body is checked before it, not only after."""
    before, games = table.logs(), table.client.get(f"/players/{table.ann.id}/games").json()
    response = table.client.post(
        "/games", content=b'{"deal":{"seed":0,"seed":0}}',
        headers={**table.ann.auth, "Content-Type": "application/json", "Api-Version": version},
    )
    assert response.status_code == 400, response.text
    assert "'seed' twice" in response.json()["detail"], response.text
    assert_problem(response)
    assert table.logs() == before
    assert table.client.get(f"/players/{table.ann.id}/games").json() == games


def test_a_whole_number_written_as_a_float_is_that_integer(table: Table) -> None:
    response = table.client.post(
        "/games", content=b'{"deal": {"seed": 5.0}}', headers={**table.ann.auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 201
    assert response.json()["deal"] == {"source": "seed", "seed": 5}
    response = table.client.post(
        "/games", content=b'{"deal": {"seed": 5.5}}', headers={**table.ann.auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 400


@pytest.mark.parametrize("ruleset", ["", "Classic", "classic@1"])
def test_an_unknown_ruleset_is_400_even_when_empty(table: Table, ruleset: str) -> None:
    response = table.client.post("/games", json={"ruleset": ruleset}, headers=table.ann.auth)
    assert response.status_code == 400, response.text


@pytest.mark.parametrize("day", ["2026-W01-1", "2026-W48-1"])
def test_a_daily_date_is_written_yyyy_mm_dd(table: Table, day: str) -> None:
    response = table.client.get(f"/deals/daily/{day}")
    assert response.status_code == 400
    assert "not a date" in response.json()["detail"]


def test_a_uuid_or_an_integer_has_one_spelling(table: Table) -> None:
    game = table.playing
    for path in (
        f"/games/{game.replace('-', '')}", f"/games/urn:uuid:{game}", f"/games/%7B{game}%7D",
        f"/games/{game}/states/1_0", f"/games/{game}/states/%EF%BC%91", f"/games/{game}/states/+1", "/deals/pool/1_0",
    ):
        response = table.client.get(path)
        assert response.status_code == 404, (path, response.text)
        assert_problem(response)
    assert table.client.get(f"/games/{game.upper()}").status_code == 200  # hex digits in either case
    for query in ("after=1_0", "after=%EF%BC%91", "after=1.0", "after=+1", "limit=1e3", "after=0&after=1"):
        response = table.client.get(f"/games/{game}/events?{query}")
        assert response.status_code == 400, (query, response.text)
    assert table.client.get(f"/games/{game}/events?after=0&limit=10").status_code == 200


@pytest.mark.parametrize("query", ["after=null", "after=1.0", "after=%20", "after=-1"])
def test_a_stream_resume_point_is_a_version_even_next_to_last_event_id(table: Table, query: str) -> None:
    response = table.client.get(f"/games/{table.finished}/stream?{query}", headers={"Last-Event-ID": "0"})
    assert response.status_code == 400, response.text
