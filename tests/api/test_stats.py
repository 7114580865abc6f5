"""Stats, per-deal figures and the daily leaderboard over HTTP."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import httpx
import psycopg

from domain import Command
from service.deals.deal_pools import decode_line, load_deal_pool
from service.stats.rebuild import rebuild_projections
from tests.support import today

from .conftest import Clock, Player, play_line

POOL = load_deal_pool("open-runs")
assert POOL is not None


def daily_line(client: httpx.Client, url: str, day: date | str = "today") -> list[Command]:
    """The stored winning line of a date's daily deal (asking the server for the deal first)."""
    daily = client.get(f"/deals/daily/{day}")
    assert daily.status_code == 200, daily.text
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT line FROM daily_deals WHERE day = %s", (date.fromisoformat(daily.json()["date"]),)
        ).fetchone()
    assert row is not None
    return decode_line(row[0])


def test_player_stats_per_ruleset(client: httpx.Client, ann: Player) -> None:
    fresh = client.get(f"/players/{ann.id}/stats")
    assert fresh.status_code == 200
    assert {r["ruleset"]: r for r in fresh.json()["rulesets"]}["classic"] == {
        "ruleset": "classic", "played": 0, "won": 0, "winRate": None, "currentStreak": 0, "bestStreak": 0,
        "fewestMoves": None, "fastestSeconds": None, "undos": 0,
    }
    lost = ann.new_game(ruleset="open-runs", deal={"seed": 7})
    assert ann.move(lost["id"], {"type": "draw"}).status_code == 200
    assert ann.move(lost["id"], {"type": "undo"}).status_code == 200
    assert ann.move(lost["id"], {"type": "resign"}).status_code == 200
    ann.new_game(ruleset="classic", deal={"seed": 7})  # in progress: not played yet
    line = decode_line(POOL.deal(1).line)
    for _ in range(2):
        won = ann.new_game(deal={"pool": 1})
        assert play_line(ann, won["id"], line)["game"]["status"] == "won"

    stats = client.get(f"/players/{ann.id}/stats").json()
    assert stats["player"] == ann.id
    by_ruleset = {r["ruleset"]: r for r in stats["rulesets"]}
    assert set(by_ruleset) == {"classic", "draw-one", "open-runs"}
    open_runs = by_ruleset["open-runs"]
    assert (open_runs["played"], open_runs["won"], open_runs["winRate"]) == (3, 2, 0.6667)
    assert (open_runs["currentStreak"], open_runs["bestStreak"], open_runs["undos"]) == (2, 2, 1)
    assert open_runs["fewestMoves"] == len(line)
    assert 0 < open_runs["fastestSeconds"] < 60
    assert by_ruleset["classic"]["played"] == 0

    assert client.get("/players/00000000-0000-0000-0000-000000000000/stats").json()["code"] == "not_found"
    assert client.get("/players/not-a-uuid/stats").status_code in (400, 404)


def test_stats_over_all_players_and_per_source(client: httpx.Client, ann: Player, bob: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 3})
    assert ann.move(game["id"], {"type": "resign"}).status_code == 200
    won = bob.new_game(deal={"pool": 2})
    play_line(bob, won["id"], decode_line(POOL.deal(2).line))
    daily = bob.new_game(deal={"daily": "today"})
    assert bob.move(daily["id"], {"type": "resign"}).status_code == 200

    body = client.get("/stats").json()
    rulesets = {r["ruleset"]: r for r in body["rulesets"]}
    assert rulesets["classic"] | {"fewestMoves": None} == {
        "ruleset": "classic", "players": 1, "played": 1, "won": 0, "winRate": 0.0, "fewestMoves": None,
        "fastestSeconds": None, "undos": 0, "currentStreak": 0, "bestStreak": 0,
    }
    open_runs = rulesets["open-runs"]
    assert (open_runs["players"], open_runs["played"], open_runs["won"], open_runs["winRate"]) == (1, 2, 1, 0.5)
    assert open_runs["fewestMoves"] == POOL.deal(2).length
    assert open_runs["bestStreak"] == 1
    assert open_runs["currentStreak"] == 0  # Bob resigned the daily game after his win
    sources = {s["source"]: s for s in body["sources"]}
    assert list(sources) == ["seed", "deck", "pool", "daily", "race"]
    assert (sources["seed"]["played"], sources["pool"]["won"], sources["daily"]["played"]) == (1, 1, 1)
    assert sources["deck"]["winRate"] is None


def test_pool_and_daily_deals_count_plays_and_wins(client: httpx.Client, clean_database: str, ann: Player) -> None:
    line = daily_line(client, clean_database)
    game = ann.new_game(deal={"daily": "today"})
    ann.new_game(deal={"pool": 3})
    assert {k: client.get("/deals/pool/3").json()[k] for k in ("plays", "wins")} == {"plays": 1, "wins": 0}
    assert (client.get("/deals/daily").json()["plays"], client.get("/deals/daily").json()["wins"]) == (1, 0)
    play_line(ann, game["id"], line)
    assert {k: client.get(f"/deals/daily/{today()}").json()[k] for k in ("plays", "wins")} == {"plays": 1, "wins": 1}
    assert {k: client.get("/deals/pool/3").json()[k] for k in ("plays", "wins")} == {
        "plays": 1,
        "wins": 0,
    }  # in no pool
    yesterday = (datetime.now(UTC).date() - timedelta(days=1)).isoformat()
    assert client.get(f"/deals/daily/{yesterday}").json()["plays"] == 0


def test_the_daily_leaderboard_ranks_verified_unassisted_wins(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    client = clocked
    line = daily_line(client, clean_database)
    day = Clock.START.date().isoformat()
    ann, bob, cid, dan, eve = (Player(client, name) for name in ("Ann", "Bob", "Cid", "Dan", "Eve"))

    fast = ann.new_game(deal={"daily": "today"})
    clock.advance(seconds=90)
    play_line(ann, fast["id"], line)
    longer = bob.new_game(deal={"daily": day})
    for _ in range(2):  # a draw taken back, twice: 4 moves more than Ann
        assert bob.move(longer["id"], {"type": "draw"}).status_code == 200
        assert bob.move(longer["id"], {"type": "undo"}).status_code == 200
    play_line(bob, longer["id"], line)
    slow = cid.new_game(deal={"daily": "today"})
    play_line(cid, slow["id"], line[:-1])
    clock.advance(seconds=120)  # as few moves as Ann, more time
    play_line(cid, slow["id"], line[-1:])

    asking = dan.new_game(deal={"daily": "today"})  # no solver oracle on the day's deal: nothing to rank
    hinted = client.get(f"/games/{asking['id']}/hints?solver=true", headers=dan.auth)
    assert (hinted.status_code, hinted.json()["code"]) == (409, "shared_deal")
    assert client.get(f"/games/{asking['id']}", headers=dan.auth).json()["assisted"] is False

    edited = eve.new_game(deal={"daily": "today"})
    play_line(eve, edited["id"], line[:-1])
    with psycopg.connect(clean_database, autocommit=True) as conn:  # one event of the log edited by hand
        changed = conn.execute(
            "UPDATE events SET data = jsonb_set(data, '{cards}', (SELECT jsonb_agg(c ORDER BY n DESC) "
            "FROM jsonb_array_elements(data->'cards') WITH ORDINALITY AS x(c, n))) "
            "WHERE game_id = %s AND version = (SELECT min(version) FROM events WHERE game_id = %s "
            "AND type = 'StockDrawn' AND jsonb_array_length(data->'cards') > 1)",
            (edited["id"], edited["id"]),
        ).rowcount
    assert changed == 1
    clock.advance(seconds=1)
    final = play_line(eve, edited["id"], line[-1:])
    assert final["game"]["status"] == "won"  # the game as played is won ...

    board = client.get(f"/deals/daily/{day}/leaderboard")
    assert board.status_code == 200, board.text
    body = board.json()
    assert (body["date"], body["ruleset"], body["rulesetVersion"], body["closed"]) == (day, "open-runs", 1, False)
    assert "pool" not in body
    entries = body["entries"]
    # ... but only wins whose stored log replays through the rules are ranked: not Eve's.
    assert [(e["name"], e["rank"], e["unranked"]) for e in entries] == [
        ("Ann", 1, None), ("Cid", 2, None), ("Bob", 3, None), ("Eve", None, "unverified"),
    ]
    assert [e["moves"] for e in entries[:3]] == [len(line), len(line), len(line) + 4]
    assert [e["seconds"] for e in entries[:3]] == [90.0, 120.0, 0.0]
    assert entries[0]["game"] == fast["id"]
    assert entries[0]["player"] == ann.id
    assert [e["status"] for e in entries] == ["won"] * 4
    assert [e["assisted"] for e in entries] == [False] * 4
    assert [e["name"] for e in client.get("/deals/daily/today/leaderboard?limit=2").json()["entries"]] == ["Ann", "Cid"]
    assert client.get("/deals/daily/today/leaderboard?limit=0").status_code == 400
    assert client.get("/deals/daily/today/leaderboard?limit=1001").status_code == 400
    tomorrow = (Clock.START.date() + timedelta(days=1)).isoformat()
    assert client.get(f"/deals/daily/{tomorrow}/leaderboard").json()["code"] == "invalid_request"
    old = client.get("/deals/daily/2020-01-01/leaderboard").json()
    assert (old["entries"], old["ruleset"], old["rulesetVersion"], old["closed"]) == ([], None, None, True)

    # A forged win: Fay resigns, then her GameResigned becomes a GameWon and her row is ranked by
    # hand. The rebuild replays every log through the rules and ranks the same three.
    fay = Player(client, "Fay")
    forged = fay.new_game(deal={"daily": "today"})
    play_line(fay, forged["id"], line[:-1])
    clock.advance(seconds=1)
    assert fay.move(forged["id"], {"type": "resign"}).status_code == 200
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute("UPDATE events SET type = 'GameWon' WHERE game_id = %s AND type = 'GameResigned'", (forged["id"],))
        conn.execute("UPDATE games SET status = 'won' WHERE id = %s", (forged["id"],))
        conn.execute(
            "UPDATE daily_leaderboard SET moves = 1, seconds = 0.1, status = 'won', unranked = NULL WHERE game_id = %s",
            (forged["id"],),
        )
    assert client.get("/deals/daily/today/leaderboard").json()["entries"][0]["name"] == "Fay"  # the hand-made row
    counts = rebuild_projections(clean_database)
    assert (counts["leaderboard"], counts["ranked"], counts["refused"]) == (5, 3, 2)  # Eve's and Fay's logs fail
    rebuilt = client.get("/deals/daily/today/leaderboard").json()["entries"]
    assert rebuilt[:4] == entries
    assert (rebuilt[4]["name"], rebuilt[4]["rank"], rebuilt[4]["unranked"]) == ("Fay", None, "unverified")
