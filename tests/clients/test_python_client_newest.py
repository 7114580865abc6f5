"""A Python client generated from the newest version's document (``openapi/2026-12-05.json``) by
openapi-python-client plays a game and a race, unedited, with ``Api-Version`` set once on its
client object.

The full scenario list runs on the oldest version (test_python_client.py): its document is the
newest one sent back through every version change, so it is where a document and the replies it
describes can part, and clients of it exist already. Here the scenarios walk what the newest
version changed, through the same helpers (a complete parse of every reply, no undeclared field):
tagged deal requests, ``cursor``/``next`` pages of the log and of a player's games, player
references ``{"id", "name", "bot"}`` in a game, its player's stats, a race, the lobby and the daily
leaderboard, an entrant's ``status``, a leaderboard entry's ``moveCount``, a daily's ``ruleset``
``{"id", "version"}`` and ``date``, and a race cancelled before its start as ``cancelled``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from domain import get_ruleset
from service.http.versions import NEWEST
from tests.clients.test_python_client import Api, Player, generate, listed, shortest_pool_deal, walk

DOCUMENT = Path(__file__).resolve().parents[2] / "openapi" / f"{NEWEST.name}.json"
PACKAGE = "canfield_client_newest"
NEXT = ("cursor", "next_", "items")  # every paged list of this version: its cursor, next page and items


@pytest.fixture(scope="module")
def generated_newest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from generate(DOCUMENT, PACKAGE, tmp_path_factory)


@pytest.fixture
def api(generated_newest: ModuleType, server_url: str, client: Any) -> Api:  # ``client``: an emptied database
    return Api(generated_newest, server_url, version=NEWEST.name)


def test_the_newest_client_wins_a_tagged_seed_deal_and_pages_its_log(api: Api) -> None:
    """A tagged seed request, a verified line taken from the legal moves (If-Match with this
    version's tag), the log and the player's games page by page, and the player named alike in the
    game, its stats and the list of versions."""
    models = api.models
    seed, line = shortest_pool_deal("classic")
    player = Player.register(api, "Newest")
    game = player.deal("classic", seed)
    assert models.SeedDealRequest(seed=seed).to_dict() == {"source": "seed", "seed": seed}
    assert isinstance(game.player, models.PlayerRef)
    assert (game.player.id, game.player.name, game.player.bot) == (player.id, "Newest", False)
    for number, wanted in enumerate(line):
        move = listed(player.legal_moves(game), wanted)
        etag = api.tag(game.version) if number % 7 == 3 else None
        done = player.move(game, move, **({} if etag is None else {"if_match": etag}))
        game = done.parsed.game
    assert game.status == models.GameViewStatus.WON
    stale = api.call("games", "make_move", game.id, client=player.http, body=models.Draw(), if_match=api.tag(1),
                     http_status=412, expect=models.Problem)  # fmt: skip
    assert stale.parsed.code == "version_conflict"
    links: list[str | None] = []

    def events_page(arguments: dict[str, Any]) -> Any:
        page = api.call("games", "list_events", game.id, client=api.anonymous(), limit=40, expect=models.EventPage,
                        **arguments)  # fmt: skip
        links.append(page.headers.get("link"))
        return page.parsed

    events = walk(events_page, NEXT)
    assert [event.version for event in events] == list(range(1, game.version + 1))
    assert isinstance(events[-1], models.GameWonEvent)
    assert len(links) == -(-game.version // 40)
    assert all('rel="next"' in (link or "") for link in links[:-1])
    assert links[-1] is None  # the last page names no next one
    second = player.deal("draw-one", 5)
    seen = walk(lambda arguments: api.call("players", "list_player_games", player.id, client=player.http, limit=1,
                                           expect=models.GameList, **arguments).parsed, NEXT)  # fmt: skip
    assert [summary.id for summary in seen] == [second.id, game.id]  # newest first
    stats = api.call("players", "get_player_stats", player.id, client=api.anonymous(), expect=models.PlayerStats)
    assert (stats.parsed.player.id, stats.parsed.player.name) == (player.id, "Newest")
    versions = api.call("service", "list_versions", client=api.anonymous(), expect=models.ApiVersionList).parsed
    assert versions.newest == NEWEST.name


def test_the_newest_client_races_reads_the_lobby_and_the_daily_board(api: Api) -> None:
    """A race by a secret (tagged) deal: the lobby's creator and the entrants are player references,
    an entrant's game status is ``status``; then the daily deal by its tagged request, its
    ``ruleset`` and ``date``, and a board entry's player and ``moveCount``; a race whose only entrant
    deletes their account before its start is ``cancelled``."""
    models = api.models
    ann, bob = Player.register(api, "Ann"), Player.register(api, "Bob")
    body = models.NewRace(max_entrants=2, ruleset=models.RulesetId.CLASSIC, deal=models.SecretDealRequest())
    race = api.call("races", "create_race", client=ann.http, body=body, http_status=201, expect=models.RaceView).parsed
    assert isinstance(race.deal, models.RaceSecretDeal)
    assert (race.creator.id, race.creator.name, race.creator.bot) == (ann.id, "Ann", False)
    lobby = api.call("races", "list_open_races", client=api.anonymous(), limit=10, expect=models.OpenRaces).parsed
    assert [(open_race.id, open_race.creator.name) for open_race in lobby.items] == [(race.id, "Ann")]
    assert lobby.next_ is None
    api.call("races", "join_race", race.id, client=bob.http, http_status=201, expect=models.RaceView)
    started = api.call("races", "start_race", race.id, client=ann.http, expect=models.RaceView).parsed
    assert started.status == models.RaceViewStatus.RUNNING
    assert [(e.player.name, e.status) for e in started.entrants] == [
        ("Ann", models.RaceEntrantStatusType0.PLAYING), ("Bob", models.RaceEntrantStatusType0.PLAYING)]
    for player, entrant in zip((ann, bob), started.entrants, strict=True):
        game = api.call("games", "get_game", entrant.game, client=player.http, expect=models.GameView).parsed
        assert game.player.id == player.id
        player.move(game, models.Resign())
    final = api.call("races", "get_race", race.id, client=api.anonymous(), expect=models.RaceView).parsed
    assert final.status == models.RaceViewStatus.FINISHED
    assert {e.status for e in final.entrants} == {models.RaceEntrantStatusType0.RESIGNED}

    daily = api.call("deals", "get_todays_deal", client=api.anonymous(), expect=models.DailyDeal).parsed
    assert (daily.ruleset.id, daily.ruleset.version) == (models.RulesetId.OPEN_RUNS, get_ruleset("open-runs").version)
    game = api.call("games", "create_game", client=ann.http, http_status=201, expect=models.GameView,
                    body=models.NewGame(deal=models.DailyDealRequest(date="today"))).parsed  # fmt: skip
    assert isinstance(game.deal, models.DailySource)
    assert (game.deal.date, game.deal.practice) == (daily.date, False)
    moved = ann.move(game, ann.legal_moves(game)[0]).parsed.game
    ann.move(moved, models.Resign())
    board = api.call("deals", "get_daily_leaderboard", "today", client=api.anonymous(),
                     expect=models.Leaderboard).parsed  # fmt: skip
    assert [(entry.player.name, entry.move_count) for entry in board.items] == [("Ann", moved.move_count)]
    assert board.ruleset == daily.ruleset

    alone = Player.register(api, "Alone")
    lone = api.call("races", "create_race", client=alone.http, body=models.NewRace(max_entrants=2), http_status=201,
                    expect=models.RaceView).parsed  # fmt: skip
    api.call("players", "delete_me", client=alone.http, http_status=204)
    cancelled = api.call("races", "get_race", lone.id, client=api.anonymous(), expect=models.RaceView).parsed
    assert cancelled.status == models.RaceViewStatus.CANCELLED
    assert cancelled.cancelled_reason
