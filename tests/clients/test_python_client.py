"""A Python client generated from ``openapi/openapi.json`` by openapi-python-client plays real games.

The client is generated into a temporary folder (the pinned openapi-python-client of the ``test``
extra, with its default configuration) and the games are played with nothing but the generated
code, against a real server on real PostgreSQL:

* generation must not warn (a warning means a part of the document the generator could not use);
* every response must parse into the generated models completely: no object left as a plain dict
  (a union branch the generator could not pick) and no field outside the document
  (``additional_properties``), except the foundations, which are a map by suit;
* a listed legal move (and a hint, and the solver's move) is sent back as the very object the
  client parsed, so a listed move and a move request are one type.

Operations are covered by scenarios: a won deal per ruleset (by seed, every move taken from the
legal moves, with undo, If-Match and Idempotency-Key along the way), the other endings (stall,
resignation, the solver), the log (JSON pages and ndjson), past states, the stream of a finished
game, the daily deal (a game, a second one refused, the leaderboard) with the player's games
list page by page, a lesson played to its goal, a race (created, joined, started, played by both
entrants to its end), and the read-only resources. ``READS`` lists the last: a new read-only
operation is one line there.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any
from uuid import UUID

import attrs
import pytest

from domain import command_to_api, get_ruleset
from service.deals.deal_pools import decode_line, load_deal_pool
from service.http.versions import OLDEST, SERVED

PINNED = OLDEST
"""The version of openapi/openapi.json (the oldest served, which a request without Api-Version gets)."""
ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi" / "openapi.json"
PACKAGE = "canfield_client"
RULESETS = ["classic", "draw-one", "open-runs"]
LESSONS = ["base-rank", "wrapping", "reserve-refill", "draw-three-stock"]  # docs/api.md, Lessons
EVERY_EVENT = {
    "GameDealtEvent", "StockDrawnEvent", "WasteRecycledEvent", "CardsMovedEvent", "ReserveRefilledEvent",
    "MoveUndoneEvent", "SolverHintUsedEvent", "GameWonEvent", "GameStalledEvent", "GameResignedEvent",
    "LessonCompletedEvent",
}  # fmt: skip
MAPS = {"Foundations"}  # documented as maps: their keys are additional_properties by design


# ---------------------------------------------------------------- generating the client


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The generated package, imported from a temporary folder (and forgotten afterwards)."""
    yield from generate(DOCUMENT, PACKAGE, tmp_path_factory)


def generate(document: Path, package: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """Generate ``document``'s client as ``package``, import it, and forget it when done."""
    folder = tmp_path_factory.mktemp("generated")
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(folder / package)],
        capture_output=True, text=True, env=environment, timeout=300, cwd=folder, check=False,
    )  # fmt: skip
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "warning" not in said.lower(), f"openapi-python-client warned:\n{said}"
    assert "error" not in said.lower(), f"openapi-python-client warned:\n{said}"
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(package)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
            del sys.modules[name]


@dataclass
class Api:
    """The generated code, and what the scenarios saw through it."""

    package: ModuleType
    url: str
    version: str = PINNED.name  # the version the document was made for, which the client sends
    seen: set[str] = field(default_factory=set)  # model classes parsed

    def operation(self, tag: str, name: str) -> Any:
        return importlib.import_module(f"{self.package.__name__}.api.{tag}.{name}")

    @property
    def models(self) -> Any:
        return importlib.import_module(f"{self.package.__name__}.models")

    def tag(self, version: int) -> str:
        """A game's ETag at ``version`` in this client's API version (a later version's carries its name)."""
        return f'"{version}"' if self.version == OLDEST.name else f'"{version};{self.version}"'

    # The API version is set once, on the client object, as Stripe's libraries do: every request sends it.
    def anonymous(self, version: str | None = None) -> Any:
        return self.package.Client(base_url=self.url, raise_on_unexpected_status=True,
                                   headers={"Api-Version": version or self.version})

    def authenticated(self, token: str) -> Any:
        return self.package.AuthenticatedClient(base_url=self.url, token=token, raise_on_unexpected_status=True,
                                                headers={"Api-Version": self.version})

    def call(
        self, tag: str, name: str, *args: Any, expect: type | None = None, http_status: int = 200, **kwargs: Any
    ) -> Any:
        """One operation through its generated ``sync_detailed``: the status, a complete parse."""
        response = self.operation(tag, name).sync_detailed(*args, **kwargs)
        assert response.status_code == http_status, (name, response.status_code, response.content[:300])
        assert response.headers["api-version"] == self.version, name
        parsed = response.parsed
        if expect is not None:
            assert isinstance(parsed, expect), (name, type(parsed), response.content[:300])
        self.check(parsed, name)
        return response

    def check(self, value: Any, where: str) -> None:
        """Parsed all the way down: models only (no stray dict), no undeclared field."""
        kind = type(value)
        if attrs.has(kind):
            self.seen.add(kind.__name__)
            extra = getattr(value, "additional_properties", {})
            if kind.__name__ in MAPS:
                assert extra, (where, extra)
                assert all(isinstance(item, list) for item in extra.values()), (where, extra)
            else:
                assert not extra, f"{where}: fields the document does not declare: {sorted(extra)}"
            for attribute in attrs.fields(kind):
                if attribute.name != "additional_properties":
                    self.check(getattr(value, attribute.name), f"{where}.{attribute.name}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.check(item, f"{where}[{index}]")
        else:
            assert value is None or isinstance(value, (str, int, float, bool, Enum, date, datetime, UUID)) or (
                type(value).__name__ == "Unset"
            ), f"{where}: left unparsed by the generated client: {value!r}"


@pytest.fixture
def api(generated: ModuleType, server_url: str, client: Any) -> Api:  # ``client``: an emptied database
    return Api(generated, server_url)


# ---------------------------------------------------------------- playing


@dataclass
class Player:
    api: Api
    id: UUID
    http: Any  # the generated AuthenticatedClient

    @classmethod
    def register(cls, api: Api, name: str) -> Player:
        body = api.models.NewPlayer(name=name)
        created = api.call("players", "create_player", client=api.anonymous(), body=body, http_status=201,
                           expect=api.models.PlayerCreated)  # fmt: skip
        assert created.headers["location"] == f"/players/{created.parsed.id}"
        return cls(api, created.parsed.id, api.authenticated(created.parsed.token))

    def deal(self, ruleset: str, seed: int) -> Any:
        models = self.api.models
        body = models.NewGame(ruleset=models.RulesetId(ruleset), deal=models.SeedDealRequest(seed=seed))
        created = self.api.call(
            "games", "create_game", client=self.http, body=body, http_status=201, expect=models.GameView
        )
        game = created.parsed
        assert created.headers["location"] == f"/games/{game.id}"
        assert created.headers["etag"] == self.api.tag(game.version)
        assert isinstance(game.deal, models.SeedSource)
        assert game.deal.seed == seed
        return game

    def legal_moves(self, game: Any) -> list[Any]:
        found = self.api.call("games", "list_legal_moves", game.id, client=self.http, expect=self.api.models.LegalMoves)
        assert found.headers["etag"] == self.api.tag(found.parsed.version)
        return list(found.parsed.moves)

    def move(self, game: Any, move: Any, **headers: Any) -> Any:
        """Send ``move`` (a model the client parsed or built); the reply's events are typed."""
        done = self.api.call("games", "make_move", game.id, client=self.http, body=move,
                             expect=self.api.models.MoveResult, **headers)  # fmt: skip
        result = done.parsed
        assert done.headers["etag"] == self.api.tag(result.game.version)
        assert [event.version for event in result.events] == list(range(result.game.version - len(result.events) + 1,
                                                                        result.game.version + 1))  # fmt: skip
        return done


def walk(page: Callable[[dict[str, Any]], Any], names: tuple[str, str, str]) -> list[Any]:
    """Every item of a paged list, page by page: ``page(arguments)`` is one parsed page, ``names``
    its cursor's query argument, where a page says the next one, and where it holds its items."""
    asked, following, held = names
    items: list[Any] = []
    arguments: dict[str, Any] = {}
    while True:
        found = page(arguments)
        items.extend(getattr(found, held))
        if getattr(found, following) is None:
            return items
        arguments = {asked: getattr(found, following)}


def MOVES(models: Any) -> tuple[type, ...]:  # noqa: N802  (the generated move classes, a tuple for isinstance)
    return (models.Draw, models.Recycle, models.Undo, models.Resign, models.MoveCard)


def wire(move: Any) -> dict[str, Any]:
    """The JSON a generated move model sends."""
    return dict(move.to_dict())


def listed(moves: list[Any], wanted: dict[str, str]) -> Any:
    """The listed move that is ``wanted`` (its JSON), as the client parsed it."""
    for move in moves:
        if wire(move) == wanted:
            return move
    raise AssertionError(f"{wanted} is not among the legal moves {[wire(m) for m in moves]}")


def shortest_pool_deal(ruleset: str) -> tuple[int, list[dict[str, str]]]:
    """A seed whose solver-verified winning line is short, and that line as JSON moves."""
    pool = load_deal_pool(ruleset)
    assert pool is not None, f"the repository ships a {ruleset} pool"
    best = min((pool.deal(number) for number in range(1, pool.size + 1)), key=lambda deal: deal.length)
    return best.seed, [command_to_api(command) for command in decode_line(best.line)]


def test_generation_is_clean_and_every_move_and_event_has_its_class(generated: ModuleType) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    for name in ["Draw", "Recycle", "Undo", "Resign", "MoveCard", "SeedSource", "DeckSource", "PoolSource",
                 "DailySource", "LessonSource", "RaceSource", "SeedDealRequest", "PoolDealRequest",
                 "DailyDealRequest", "DeckDealRequest", "LessonDealRequest", "LessonId", "RaceSeedDeal",
                 "RaceDeckDeal", "RacePoolDeal", *EVERY_EVENT]:  # fmt: skip
        assert hasattr(models, name), name
    assert models.Draw().to_dict() == {"type": "draw"}  # the tag needs no argument
    assert models.MoveCard(card="7H", to=models.MoveCardTo("tableau-3")).to_dict() == {
        "type": "move",
        "card": "7H",
        "to": "tableau-3",
    }


def test_a_generated_client_wins_a_deal_in_every_ruleset(api: Api) -> None:
    """Deal by seed, play a verified winning line taking each move from the legal moves as parsed,
    with an undo and a replay of it, If-Match and Idempotency-Key along the way; the log, past
    states, hints and stats through the same client."""
    models = api.models
    for ruleset in RULESETS:
        seed, line = shortest_pool_deal(ruleset)
        player = Player.register(api, f"Winner {ruleset}")
        game = player.deal(ruleset, seed)
        assert game.ruleset.id == models.RulesetId(ruleset)
        assert game.ruleset.version == get_ruleset(ruleset).version
        etag = f'"{game.version}"'
        for number, wanted in enumerate(line):
            move = listed(player.legal_moves(game), wanted)
            if (
                number % 9 == 4 and number < len(line) - 1
            ):  # undo it, play it again: a MoveUndone names what it took back
                player.move(game, move)
                undo = player.move(game, models.Undo())
                undone, etag = undo.parsed.events, undo.headers["etag"]
                assert isinstance(undone[0], models.MoveUndoneEvent)
                assert undone[0].data.reverted
                move = listed(player.legal_moves(game), wanted)  # the same move is legal again
            if number % 10 == 3:  # conditional on the ETag of the last reply: a stale one is a 412 problem
                api.call("games", "make_move", game.id, client=player.http, body=move, if_match='"1"', http_status=412,
                         expect=models.Problem)  # fmt: skip
                done = player.move(game, move, if_match=etag)
            elif number % 10 == 6:  # a retry with the same key returns the first reply, appending nothing
                key = f"{ruleset}-{number}"
                done = player.move(game, move, idempotency_key=key)
                again = player.move(game, move, idempotency_key=key)
                assert again.headers["idempotent-replayed"] == "true"
                assert again.content == done.content
                assert "idempotent-replayed" not in done.headers
            else:
                done = player.move(game, move)
            game, etag = done.parsed.game, done.headers["etag"]
            if number % 40 == 0:
                hints = api.call("games", "get_hints", game.id, client=player.http, expect=models.Hints).parsed
                assert hints.hints
                assert all(isinstance(hint.move, MOVES(models)) for hint in hints.hints)
        assert game.status == models.GameViewStatus.WON
        assert isinstance(done.parsed.events[-1], models.GameWonEvent)
        after = api.call("games", "get_game", game.id, client=api.anonymous(), expect=models.GameView)
        assert after.parsed.version == game.version
        assert after.headers["etag"] == etag
        assert sorted(after.parsed.table.foundations.additional_keys) == ["C", "D", "H", "S"]
        assert sum(len(after.parsed.table.foundations[suit]) for suit in "SHDC") == 52
        unchanged = api.call("games", "get_game", game.id, client=api.anonymous(), if_none_match=etag, http_status=304)
        assert unchanged.headers["etag"] == etag
        for version in (1, game.version // 2, game.version):
            past = api.call("games", "get_game_state", game.id, version, client=api.anonymous(), expect=models.GameView)
            assert past.parsed.version == version
        read_the_log(api, game)
        stats = api.call(
            "players", "get_player_stats", player.id, client=api.anonymous(), expect=models.PlayerStats
        ).parsed
        mine = next(item for item in stats.rulesets if item.ruleset == models.RulesetId(ruleset))
        assert mine.played == 1
        assert mine.won == 1
    assert {"GameDealtEvent", "StockDrawnEvent", "CardsMovedEvent", "ReserveRefilledEvent", "WasteRecycledEvent",
            "MoveUndoneEvent", "GameWonEvent"} <= api.seen  # fmt: skip
    assert {"StockDrawnReverted", "CardsMovedReverted"} <= api.seen


def read_the_log(api: Api, game: Any) -> None:
    """JSON pages (following ``nextAfter``) and the ndjson export give the same typed events."""
    models = api.models
    pages: list[Any] = []
    after = 0
    while True:
        page = api.call("games", "list_events", game.id, client=api.anonymous(), after=after, limit=50,
                        expect=models.EventPage).parsed  # fmt: skip
        pages.extend(page.events)
        if page.next_after is None:
            break
        after = page.next_after
    assert [event.version for event in pages] == list(range(1, game.version + 1))
    assert isinstance(pages[0], models.GameDealtEvent)
    assert isinstance(pages[0].data.deck, list)
    export = api.call("games", "export_events", game.id, client=api.anonymous(), limit=1000)
    assert export.headers["content-type"] == "application/x-ndjson"
    lines = export.parsed
    assert isinstance(lines, str)
    assert lines.endswith("\n")
    exported = models.EventPage.from_dict(
        {"events": [json.loads(line) for line in lines.splitlines()], "nextAfter": None}
    )
    api.check(exported, "export_events")
    assert [event.to_dict() for event in exported.events] == [event.to_dict() for event in pages]
    whole = api.call("games", "export_events", game.id, client=api.anonymous()).parsed  # no limit: every event
    assert whole == lines


def test_a_generated_client_sees_every_other_ending_and_the_solver(api: Api) -> None:
    """draw-one stalls on a recycle without progress; a resignation; the solver's move sent back;
    the stream of a finished game read to its end."""
    models = api.models
    player = Player.register(api, "Ender")
    game = player.deal("draw-one", 4)
    hints = api.call("games", "get_hints", game.id, client=player.http, solver=True, expect=models.Hints).parsed
    assert isinstance(hints.solver, models.SolverHint)
    if hints.solver.move is not None:  # the solver's move is a move request as it is
        assert isinstance(hints.solver.move, MOVES(models))
        player.move(game, hints.solver.move)
    game = api.call("games", "get_game", game.id, client=api.anonymous(), expect=models.GameView).parsed
    assert game.assisted
    while game.status == models.GameViewStatus.PLAYING:
        moves = player.legal_moves(game)
        simple = [move for move in moves if isinstance(move, (models.Draw, models.Recycle))]
        game = player.move(game, simple[0]).parsed.game
    assert game.status == models.GameViewStatus.STALLED
    resigned = player.deal("classic", 5)
    events = player.move(resigned, models.Resign()).parsed.events
    assert isinstance(events[-1], models.GameResignedEvent)
    over = api.call(
        "games",
        "make_move",
        resigned.id,
        client=player.http,
        body=models.Draw(),
        http_status=409,
        expect=models.Problem,
    )
    assert over.parsed.code == "game_over"
    stream = api.call("games", "stream_game", resigned.id, client=api.anonymous()).parsed
    assert isinstance(stream, str)
    assert "event: view" in stream
    assert "event: end" in stream
    read_the_log(api, game)
    assert {"SolverHintUsedEvent", "GameStalledEvent", "GameResignedEvent"} <= api.seen | {
        type(event).__name__ for event in events
    }


# ---------------------------------------------------------------- read-only resources

# (tag, operation, arguments given the ids at hand, the model the reply must parse into)
READS: list[tuple[str, str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    ("rulesets", "list_rulesets", lambda ids: {}, "RulesetList"),
    ("rulesets", "get_ruleset", lambda ids: {"ruleset_id": "classic"}, "RulesetView"),
    ("rulesets", "get_ruleset_version", lambda ids: {"ruleset_id": "draw-one", "version": 1}, "RulesetView"),
    ("deals", "describe_pools", lambda ids: {}, "Pools"),
    ("deals", "get_pool_deal", lambda ids: {"number": 3}, "PoolDealView"),
    ("players", "get_player", lambda ids: {"player_id": ids["player"]}, "Player"),
    ("players", "get_player_stats", lambda ids: {"player_id": ids["player"]}, "PlayerStats"),
    ("players", "list_player_games", lambda ids: {"player_id": ids["player"]}, "GameList"),
    ("stats", "get_stats", lambda ids: {}, "GlobalStats"),
    ("lessons", "list_lessons", lambda ids: {}, "LessonList"),
    ("lessons", "get_lesson", lambda ids: {"lesson_id": "reserve-refill"}, "LessonInfo"),
    ("races", "list_open_races", lambda ids: {}, "OpenRaces"),
    ("service", "get_health", lambda ids: {}, "Health"),
]


def test_a_generated_client_reads_every_public_resource(api: Api) -> None:
    player = Player.register(api, "Reader")
    pooled = api.call("games", "create_game", client=player.http,
                      body=api.models.NewGame(deal=api.models.PoolDealRequest(pool=3)),
                      http_status=201, expect=api.models.GameView).parsed  # fmt: skip
    assert isinstance(pooled.deal, api.models.PoolSource)
    assert pooled.deal.pool == 3
    ids = {"player": player.id, "game": pooled.id}
    for tag, name, arguments, model in READS:
        api.call(tag, name, client=api.anonymous(), expect=getattr(api.models, model), **arguments(ids))
    problem = api.call(
        "games", "get_game", UUID(int=7), client=api.anonymous(), http_status=404, expect=api.models.Problem
    )
    assert problem.parsed.code == "not_found"


def test_a_generated_client_plays_the_daily_deal_and_finds_its_games(api: Api) -> None:
    """The daily deal (never named by seed or pool), a game of it and a second one refused (one game
    per player while the date is on, the problem naming the first), the leaderboard, and the
    player's games list page by page."""
    models = api.models
    player = Player.register(api, "Daily")
    daily = api.call("deals", "get_todays_deal", client=api.anonymous(), expect=models.DailyDeal).parsed
    assert daily.ruleset == models.RulesetId.OPEN_RUNS
    assert daily.verified
    body = models.NewGame(deal=models.DailyDealRequest(daily="today"))
    first = api.call(
        "games", "create_game", client=player.http, body=body, http_status=201, expect=models.GameView
    ).parsed
    assert isinstance(first.deal, models.DailySource)
    assert first.deal.daily == daily.date
    assert first.deal.practice is False
    again = api.call(
        "games", "create_game", client=player.http, body=body, http_status=409, expect=models.Problem
    ).parsed
    assert (again.code, again.game) == ("daily_already_played", str(first.id))
    other = api.call(
        "games", "create_game", client=player.http, body=models.NewGame(deal=models.SeedDealRequest(seed=5)),
        http_status=201, expect=models.GameView,
    ).parsed
    games = [first, other]
    moved = player.move(first, player.legal_moves(first)[0]).parsed.game
    player.move(moved, models.Resign())
    board = api.call(
        "deals", "get_daily_leaderboard", "today", client=api.anonymous(), expect=models.Leaderboard
    ).parsed
    assert [entry.game for entry in board.entries] == [first.id]  # one entry per player: the first game
    seen = walk(lambda arguments: api.call("players", "list_player_games", player.id, client=player.http, limit=1,
                                           expect=models.GameList, **arguments).parsed,
                ("before", "next_before", "games"))  # fmt: skip
    assert [summary.id for summary in seen] == [games[1].id, games[0].id]  # newest first
    playing = api.call("players", "list_player_games", player.id, client=player.http, expect=models.GameList,
                       status=models.ListPlayerGamesStatus("playing")).parsed  # fmt: skip
    assert [summary.id for summary in playing.games] == [games[1].id]
    assert isinstance(playing.games[0].deal, models.SeedSource)
    assert playing.games[0].deal.seed == 5


def test_a_generated_client_plays_a_lesson_to_its_goal(api: Api) -> None:
    """The lessons, a lesson deal (classic by default), and docs/api.md's line for ``wrapping`` (KD on
    AC, then AH to the foundation) taken from the legal moves: the second move reaches the goal."""
    models = api.models
    lessons = api.call("lessons", "list_lessons", client=api.anonymous(), expect=models.LessonList).parsed
    assert [lesson.id for lesson in lessons.lessons] == [models.LessonId(name) for name in LESSONS]
    wrapping = api.call("lessons", "get_lesson", "wrapping", client=api.anonymous(), expect=models.LessonInfo).parsed
    assert wrapping.id == models.LessonId.WRAPPING
    assert wrapping.ruleset == models.RulesetId.CLASSIC
    player = Player.register(api, "Pupil")
    body = models.NewGame(deal=models.LessonDealRequest(lesson=models.LessonId.WRAPPING))
    game = api.call(
        "games", "create_game", client=player.http, body=body, http_status=201, expect=models.GameView
    ).parsed
    assert isinstance(game.deal, models.LessonSource)
    assert game.deal.lesson == models.LessonId.WRAPPING
    assert game.ruleset.id == models.RulesetId.CLASSIC
    assert isinstance(game.lesson, models.LessonProgress)
    assert game.lesson.goal == wrapping.goal
    assert not game.lesson.done
    line = [{"type": "move", "card": "KD", "to": "tableau-1"}, {"type": "move", "card": "AH", "to": "foundation"}]
    for number, wanted in enumerate(line):
        result = player.move(game, listed(player.legal_moves(game), wanted)).parsed
        game = result.game
        reached = [event for event in result.events if isinstance(event, models.LessonCompletedEvent)]
        assert game.lesson.done is (number == len(line) - 1)
        assert len(reached) == int(game.lesson.done)
    assert reached[0].data.lesson == models.LessonId.WRAPPING
    assert game.status == models.GameViewStatus.PLAYING
    log = api.call("games", "list_events", game.id, client=api.anonymous(), expect=models.EventPage).parsed
    assert sum(isinstance(event, models.LessonCompletedEvent) for event in log.events) == 1
    plain = player.deal("classic", 3)
    assert isinstance(plain.lesson, api.package.types.Unset)  # other games have no lesson


def test_a_generated_client_races(api: Api) -> None:
    """A race on a classic pool deal: created (Location), joined by a second player, started by its
    creator; while it runs its deal shows only the source and one entrant's game is closed to the
    other; the creator wins by the pool's line, the other resigns; then places, proofs and the deal."""
    models = api.models
    ann, bob = Player.register(api, "Ann"), Player.register(api, "Bob")
    body = models.NewRace(max_entrants=2, ruleset=models.RulesetId.CLASSIC, deal=models.PoolDealRequest(pool=25),
                          time_limit_seconds=3600)  # fmt: skip
    created = api.call("races", "create_race", client=ann.http, body=body, idempotency_key="race-1", http_status=201,
                       expect=models.RaceView)  # fmt: skip
    race = created.parsed
    assert created.headers["location"] == f"/races/{race.id}"
    # a retry with the key (a reply lost on the way) is the first reply again: still one race
    retried = api.call("races", "create_race", client=ann.http, body=body, idempotency_key="race-1", http_status=201,
                       expect=models.RaceView)  # fmt: skip
    assert retried.headers["idempotent-replayed"] == "true"
    assert retried.content == created.content
    assert race.status == models.RaceViewStatus.OPEN
    assert isinstance(race.deal, models.RacePoolDeal)
    assert isinstance(race.deal.pool, api.package.types.Unset)
    lobby = api.call("races", "list_open_races", client=api.anonymous(), expect=models.OpenRaces).parsed
    assert [open_race.id for open_race in lobby.races] == [race.id]
    reused = api.call("races", "create_race", client=ann.http, body=models.NewRace(max_entrants=3),
                      idempotency_key="race-1", http_status=400, expect=models.Problem)  # fmt: skip
    assert reused.parsed.code == "idempotency_key_reused"
    joined = api.call("races", "join_race", race.id, client=bob.http, idempotency_key="join", http_status=201,
                      expect=models.RaceView)  # fmt: skip
    assert joined.headers["location"] == f"/races/{race.id}"
    assert [e.name for e in joined.parsed.entrants] == ["Ann", "Bob"]
    again = api.call("races", "join_race", race.id, client=bob.http, http_status=409, expect=models.Problem).parsed
    assert again.code == "already_entered"
    started = api.call("races", "start_race", race.id, client=ann.http, expect=models.RaceView).parsed
    assert started.status == models.RaceViewStatus.RUNNING
    assert isinstance(started.deal.pool, api.package.types.Unset)
    games = {entrant.name: entrant.game for entrant in started.entrants}
    views = {name: api.call("games", "get_game", games[name], client=player.http, expect=models.GameView).parsed
             for name, player in (("Ann", ann), ("Bob", bob))}  # fmt: skip
    for view in views.values():
        assert isinstance(view.deal, models.RaceSource)
        assert view.deal.race == race.id
    closed = api.call("games", "get_game", games["Bob"], client=ann.http, http_status=403, expect=models.Problem).parsed
    assert closed.code == "forbidden"
    moves = {"draw": models.Draw, "recycle": models.Recycle}
    game = views["Ann"]
    for wanted in winning_line():
        move = (
            moves[wanted["type"]]()
            if wanted["type"] in moves
            else models.MoveCard(card=wanted["card"], to=models.MoveCardTo(wanted["to"]))
        )
        game = ann.move(game, move).parsed.game
    assert game.status == models.GameViewStatus.WON
    live = api.call("races", "get_race", race.id, client=api.anonymous(), expect=models.RaceView).parsed
    assert live.status == models.RaceViewStatus.RUNNING
    assert [e.place for e in live.entrants][:1] == [1]
    bob.move(views["Bob"], models.Resign())
    final = api.call("races", "get_race", race.id, client=api.anonymous(), expect=models.RaceView).parsed
    assert final.status == models.RaceViewStatus.FINISHED
    assert [(e.name, e.place, e.verified) for e in final.entrants] == [("Ann", 1, True), ("Bob", 2, True)]
    assert isinstance(final.deal, models.RacePoolDeal)
    assert final.deal.pool == 25
    stream = api.call("races", "stream_race", race.id, client=api.anonymous()).parsed
    assert isinstance(stream, str)
    assert "event: end" in stream
    stats = api.call("players", "get_player_stats", ann.id, client=api.anonymous(), expect=models.PlayerStats).parsed
    assert (stats.races.played, stats.races.won) == (1, 1)


def test_a_generated_client_reads_a_secret_race_deal_and_every_stream_message(api: Api) -> None:
    """A race made without a deal shows only ``{"source": "secret"}``, which the client parses as
    ``RaceSecretDeal`` in the race view and in the lobby; and every message of a finished game's
    stream, an analysis's progress included, parses as the generated ``StreamMessage`` (its data as
    the model its event names)."""
    models = api.models
    ann = Player.register(api, "Ann")
    body = models.NewRace(max_entrants=2, ruleset=models.RulesetId.CLASSIC)
    race = api.call("races", "create_race", client=ann.http, body=body, http_status=201, expect=models.RaceView).parsed
    assert isinstance(race.deal, models.RaceSecretDeal)
    assert race.deal.to_dict() == {"source": "secret"}
    lobby = api.call("races", "list_open_races", client=api.anonymous(), expect=models.OpenRaces).parsed
    assert [type(open_race.deal) for open_race in lobby.races] == [models.RaceSecretDeal]
    game = ann.deal("classic", 5)
    ann.move(game, models.Resign())
    api.call("analysis", "request_analysis", game.id, client=ann.http, http_status=202, expect=models.AnalysisView)
    deadline = time.monotonic() + 60
    while api.call("analysis", "get_analysis", game.id, client=api.anonymous(),
                   expect=models.AnalysisView).parsed.status not in (models.AnalysisViewStatus.DONE,
                                                                     models.AnalysisViewStatus.FAILED):  # fmt: skip
        assert time.monotonic() < deadline, "the analysis did not finish"
        time.sleep(0.1)
    stream = api.call("games", "stream_game", game.id, client=api.anonymous()).parsed
    messages = [dict(line.split(": ", 1) for line in block.splitlines()) for block in stream.split("\n\n") if block]
    parsed = [models.StreamMessage.from_dict(message) for message in messages]
    assert [message.event for message in parsed] == [
        models.StreamMessageEvent.VIEW, models.StreamMessageEvent.ANALYSIS, models.StreamMessageEvent.END
    ]
    for message in parsed:
        api.check(message, "StreamMessage")
    view, progress, end = (json.loads(message.data) for message in parsed)
    api.check(models.GameView.from_dict(view), "view")
    api.check(models.GameView.from_dict(end), "end")
    assert progress["status"] == "done"
    api.check(models.AnalysisProgress.from_dict(progress["progress"]), "analysis")


def winning_line() -> list[dict[str, str]]:
    """The stored winning line of classic pool deal 25, as JSON moves."""
    pool = load_deal_pool("classic")
    assert pool is not None
    return [command_to_api(command) for command in decode_line(pool.deal(25).line)]


def test_a_generated_client_exports_a_players_games_and_deletes_the_account(api: Api) -> None:
    """The public games export (ndjson, a 'next' line when max cuts it), then the account erased."""
    player = Player.register(api, "Leaving")
    games = [player.deal("classic", seed) for seed in (1, 2)]
    export = api.call("players", "export_player_games", player.id, client=api.anonymous(), max_=1)
    assert export.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in export.parsed.splitlines()]
    assert [line["type"] for line in lines] == ["game", "next"]
    assert api.models.GameView.from_dict(lines[0]["game"]).id == games[0].id
    rest = api.call("players", "export_player_games", player.id, client=api.anonymous(), after=lines[1]["after"])
    assert [json.loads(line)["game"]["id"] for line in rest.parsed.splitlines()] == [str(games[1].id)]
    mine = api.call("players", "export_me", client=player.http)
    assert [json.loads(line)["type"] for line in mine.parsed.splitlines()][:2] == ["player", "token"]
    api.call("players", "delete_me", client=player.http, http_status=204)
    problem = api.call("players", "get_me", client=player.http, http_status=401, expect=api.models.Problem)
    assert problem.parsed.code == "unauthorized"


def test_a_generated_client_manages_its_tokens(api: Api) -> None:
    """Who am I, a second token with fewer scopes and an expiry, the list without secrets, a
    revocation that the next request feels, and revoking every token at once."""
    models = api.models
    ann = Player.register(api, "Ann")
    me = api.call("players", "get_me", client=ann.http, expect=models.Me).parsed
    assert (me.id, me.name, me.token.name) == (ann.id, "Ann", "first token")
    body = models.NewTokenRequest(name="bot", scopes=[models.NewTokenRequestScopesItem("play")], expires_in_days=30)
    made = api.call("players", "create_token", client=ann.http, body=body, http_status=201,
                    expect=models.TokenCreated).parsed  # fmt: skip
    assert made.token
    assert made.expires_at is not None
    bot = api.authenticated(made.token)
    listed = api.call("players", "list_tokens", client=ann.http, expect=models.TokenList).parsed
    assert [token.name for token in listed.tokens] == ["first token", "bot"]
    refused = api.call("players", "list_tokens", client=bot, http_status=403, expect=models.Problem).parsed
    assert refused.code == "forbidden"
    api.call("players", "revoke_token", made.id, client=ann.http, http_status=204)
    gone = api.call("players", "get_me", client=bot, http_status=401, expect=models.Problem).parsed
    assert gone.code == "unauthorized"
    api.call("players", "revoke_all_tokens", client=ann.http, http_status=204)
    api.call("players", "get_me", client=ann.http, http_status=401, expect=models.Problem)


def test_a_generated_client_sets_its_api_version_once_for_every_request(api: Api) -> None:
    """The version set on the client object goes with every request: one the server does not serve
    is refused on any operation, in the server's words."""
    unknown = api.anonymous(version="1999-01-01")
    for tag, name in (("rulesets", "list_rulesets"), ("deals", "get_todays_deal"), ("service", "list_versions")):
        response = api.operation(tag, name).sync_detailed(client=unknown)
        assert response.status_code == 400, (name, response.content[:200])
        assert json.loads(response.content)["code"] == "unsupported_version"
    versions = api.call("service", "list_versions", client=api.anonymous(), expect=api.models.ApiVersionList).parsed
    assert (versions.default, versions.newest) == (PINNED.name, SERVED.newest.name)
