"""Every read, and a move, as history grows: ``python -m bench scale``.

One embedded PostgreSQL, grown in steps to ``SCALE_GAMES`` games (default ``0,1000000``; add
``SCALE_10M=1`` for a step at 10,000,000; ``BENCH_QUICK=1``: ``0,5000``). At each step a real
server process (as in production) answers ``SCALE_REQUESTS`` requests of each read, one at a time
on a keep-alive connection (default 400), and ``SCALE_REQUESTS`` moves of a game dealt through the
API; it prints their p50 and p99, each read's ratio to its median at the first step, and the plan
(EXPLAIN of the statements the service's own code sends, recorded in-process) of every read that
grows, with what in it reads history whole (a Seq Scan or a Sort over a big table), if anything.

History is made fast and set-based, from the domain's own events: ``SCALE_TEMPLATES`` games
(default 2,000) are played by the rules with a seeded random player (1 to 60 moves, undos now and
then; most resigned, some left in progress), and ``INSERT ... SELECT`` copies their games, event
rows and snapshots under new ids and players, so every stored game replays. At a size of N games:
N / 10 players (at least 200), a fifth of the games one bot's (at least 150), a leaderboard entry
for today per player (about a third ranked), N / 4 finished races of 2 or 3 entrants dealt stored
games, N / 500 open races (at least 40) in the lobby; the stats projections recomputed from the
games (the streaks are placeholders: 1 if any win). The history games start before the step's
fixtures, so the newest pages hold history too. The events table's size per event row (heap,
indexes and TOAST: ``pg_total_relation_size``) is printed at every step.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .harness.env import PROJECT_ROOT, quick

SIZES = [int(size) for size in os.environ.get("SCALE_GAMES", quick("0,1000000", "0,5000")).split(",")]
if os.environ.get("SCALE_10M", "") not in ("", "0"):
    SIZES.append(10_000_000)
REQUESTS = int(os.environ.get("SCALE_REQUESTS", quick("400", "40")))
TEMPLATES = int(os.environ.get("SCALE_TEMPLATES", quick("2000", "100")))
CHUNK = 50_000  # history games a statement
RULESETS = ("classic", "draw-one", "open-runs")
BOT = "md5('bot')::uuid"
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.service_api import embedded_db, migrate

    templates = _templates()
    print(f"scale: {len(templates)} template games played by the rules, {sum(len(t['events']) for t in templates)}"
          f" events; sizes {', '.join(f'{s:,}' for s in SIZES)}; {REQUESTS} requests a read; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="canfield-scale-bench-") as work:
        database = embedded_db.start(Path(work) / "embedded", database="canfield_scale")
        try:
            migrate(database.url)
            _load_templates(database.url, templates)
            baseline: dict[str, float] = {}
            have = dict.fromkeys(_targets(0), 0)
            for size in SIZES:
                started = time.monotonic()
                counts = _grow(database.url, have, size)
                print(f"\n== {size:,} games: filled in {time.monotonic() - started:.0f} s: " + ", ".join(
                    f"{name} {count:,}" for name, count in counts.items()))
                _report(asyncio.run(_measure(database.url, Path(work))), baseline)
                _plans(database.url)
        finally:
            database.stop()


# ---------------------------------------------------------------- history from the domain's own events


def _templates() -> list[dict[str, Any]]:
    """Games played by the rules: each its game row's figures, its events and its final snapshot."""
    import domain
    from domain import Resign, Undo, apply, event_data, event_type
    from domain.codec import state_to_snapshot

    rng = random.Random(30)
    found = []
    for number in range(TEMPLATES):
        ruleset = domain.get_ruleset(RULESETS[number % 3])
        source = {"source": "seed", "seed": number + 1}
        dealt = domain.deal(ruleset, domain.shuffled_deck(number + 1), source)
        state = domain.initial_state(dealt)
        events = [(1, event_type(dealt), event_data(dealt))]
        for _ in range(rng.randint(1, 60)):
            if not state.playing:
                break
            legal = domain.legal_moves(state)
            moves = [m for m in legal if not isinstance(m, (Resign, Undo))]
            if not moves:
                break
            undo = any(isinstance(m, Undo) for m in legal) and rng.random() < 0.05
            command = Undo() if undo else rng.choice(moves)
            before = state.version
            state, new = apply(state, command)
            events += [(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(new)]
        if state.playing and rng.random() < 0.8:
            before = state.version
            state, new = apply(state, Resign())
            events += [(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(new)]
        found.append({"ruleset": (ruleset.id, ruleset.version), "deal": source, "state": state,
                      "snapshot": state_to_snapshot(state), "events": events})
    return found


def _load_templates(url: str, templates: list[dict[str, Any]]) -> None:
    import psycopg
    from psycopg.types.json import Json, Jsonb

    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TABLE bench_template_games (t int PRIMARY KEY, ruleset_id text, ruleset_version int, deal jsonb,"
            " status text, version int, move_count int, undo_count int, assisted bool, snapshot json)"
        )
        conn.execute("CREATE TABLE bench_template_events (t int, version int, type text, data jsonb)")
        with conn.cursor() as cursor:
            for number, game in enumerate(templates):
                state = game["state"]
                cursor.execute(
                    "INSERT INTO bench_template_games VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (number, *game["ruleset"], Jsonb(game["deal"]), state.status.value, state.version,
                     state.move_count, state.undo_count, state.assisted, Json(game["snapshot"])),
                )
            with cursor.copy("COPY bench_template_events (t, version, type, data) FROM STDIN") as copy:
                for number, game in enumerate(templates):
                    for version, kind, data in game["events"]:
                        copy.write_row((number, version, kind, Jsonb(data)))


# ---------------------------------------------------------------- growing the database, set-based


def _targets(size: int) -> dict[str, int]:
    return {"players": max(200, size // 10), "games": max(400, size), "finished races": max(40, size // 4),
            "open races": max(40, size // 500)}


def _grow(url: str, have: dict[str, int], size: int) -> dict[str, int]:
    """Add history from what ``have`` counts up to ``size`` games, then vacuum and analyse."""
    import psycopg

    target = _targets(size)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name, created_at) VALUES (md5('bot')::uuid, 'bot', %s)"
                     " ON CONFLICT DO NOTHING", (EPOCH,))
        conn.execute("INSERT INTO players (id, name, created_at) SELECT md5('player:' || q)::uuid, 'player ' || q, %s"
                     " FROM generate_series(%s::int, %s::int) q", (EPOCH, have["players"], target["players"] - 1))
        for first in range(have["games"], target["games"], CHUNK):
            _games(conn, first, min(first + CHUNK, target["games"]), target["players"])
        _races(conn, have, target)
        _leaderboard(conn, have["players"], target["players"])
        _stats(conn)
        conn.execute("VACUUM ANALYZE")
        have.update(target)
        events, size_bytes = conn.execute("SELECT count(*), pg_total_relation_size('events') FROM events").fetchone()
    return {**target, "events": events, "bytes an event row (heap, indexes, TOAST)": size_bytes // max(events, 1)}


_GAME_OF = """
FROM generate_series(%(first)s::int, %(last)s::int) i
JOIN bench_template_games t ON t.t = i %% %(templates)s::int
CROSS JOIN LATERAL (SELECT md5('game:' || i)::uuid AS id,
    CASE WHEN i %% 5 = 0 THEN md5('bot')::uuid ELSE md5('player:' || ((i - i / 5 - 1) %% %(players)s::int))::uuid END
        AS player_id,
    %(epoch)s::timestamptz + i * interval '20 seconds' AS started_at) g
"""


def _games(conn: Any, first: int, end: int, players: int) -> None:
    """Games ``first`` .. ``end - 1``: each a template's game row, events and snapshot under a new id."""
    params = {"first": first, "last": end - 1, "templates": TEMPLATES, "players": players, "epoch": EPOCH}
    with conn.transaction():
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, started_at,"
            " finished_at, updated_at, move_count, undo_count, assisted)"
            " SELECT g.id, g.player_id, t.ruleset_id, t.ruleset_version, t.deal, t.status, t.version, g.started_at,"
            " CASE WHEN t.status <> 'playing' THEN g.started_at + t.version * interval '3 seconds' END,"
            " g.started_at + t.version * interval '3 seconds', t.move_count, t.undo_count, t.assisted" + _GAME_OF,
            params,
        )
        conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot) SELECT g.id, t.version, t.snapshot"
                     + _GAME_OF, params)
        conn.execute(
            "INSERT INTO events (game_id, version, type, data, recorded_at)"
            " SELECT g.id, e.version, e.type, e.data, g.started_at + e.version * interval '3 seconds'" + _GAME_OF
            + " JOIN bench_template_events e ON e.t = t.t",
            params,
        )


def _races(conn: Any, have: dict[str, int], target: dict[str, int]) -> None:
    """Finished races dealt stored (non-bot) games, 2 or 3 entrants each; open races of one entrant."""
    deck = conn.execute("SELECT data->'deck' FROM bench_template_events WHERE t = 0 AND version = 1").fetchone()[0]
    params = {"first": have["finished races"], "last": target["finished races"] - 1, "deck": _json(deck),
              "epoch": EPOCH}
    with conn.transaction():
        conn.execute(
            "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version,"
            " created_at, started_at, finished_at)"
            " SELECT md5('race:' || r)::uuid, g.player_id, g.ruleset_id, g.ruleset_version, g.deal, %(deck)s, 3,"
            " 'finished', 5, g.started_at, g.started_at, g.updated_at"
            " FROM generate_series(%(first)s::int, %(last)s::int) r"
            " JOIN games g ON g.id = md5('game:' || (3 * r + 3 * r / 4 + 1))::uuid",
            params,
        )
        conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at, game_id, standing, place)"
            " SELECT md5('race:' || r)::uuid, g.player_id, s, g.started_at, g.id,"
            " jsonb_build_object('status', g.status, 'cardsOnFoundations', 4, 'moveCount', g.move_count,"
            " 'finishedAt', g.finished_at, 'assisted', g.assisted,"
            " 'verified', true), s"
            " FROM generate_series(%(first)s::int, %(last)s::int) r CROSS JOIN LATERAL generate_series(1, 2 + r %% 2) s"
            " JOIN games g ON g.id = md5('game:' || (3 * r + s - 1 + (3 * r + s - 1) / 4 + 1))::uuid",
            params,
        )
        conn.execute(
            "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version,"
            " created_at) SELECT md5('open:' || r)::uuid, md5('player:' || r %% 200)::uuid, 'classic', 1,"
            " '{\"source\": \"seed\", \"seed\": 1}', %(deck)s, 4, 'open', 1, now() - r * interval '1 minute'"
            " FROM generate_series(%(open_first)s::int, %(open_last)s::int) r",
            params | {"open_first": have["open races"], "open_last": target["open races"] - 1},
        )
        conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) SELECT md5('open:' || r)::uuid,"
            " md5('player:' || r %% 200)::uuid, 1, now() - r * interval '1 minute'"
            " FROM generate_series(%(open_first)s::int, %(open_last)s::int) r",
            params | {"open_first": have["open races"], "open_last": target["open races"] - 1},
        )


def _json(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value)


def _leaderboard(conn: Any, first: int, end: int) -> None:
    """Today's board: an entry per new player, one of their games; about a third ranked."""
    conn.execute(
        "INSERT INTO daily_leaderboard (game_id, day, player_id, moves, seconds, finished_at, status, assisted,"
        " unranked) SELECT g.id, current_date, p.id, 40 + q::bigint * 7919 %% 200,"
        " 60 + q::bigint * 104729 %% 3000 + 0.25,"
        " date_trunc('day', now()) + q * interval '100 ms', CASE WHEN q %% 3 = 0 THEN 'won' ELSE 'resigned' END,"
        " false, CASE WHEN q %% 3 = 0 THEN NULL ELSE 'not-won' END"
        " FROM generate_series(%s::int, %s::int) q JOIN players p ON p.id = md5('player:' || q)::uuid"
        " CROSS JOIN LATERAL (SELECT id FROM games WHERE player_id = p.id LIMIT 1) g",
        (first, end - 1),
    )


def _stats(conn: Any) -> None:
    """The stats projections from the games (what a rebuild counts; the streaks are placeholders)."""
    with conn.transaction():
        conn.execute("TRUNCATE player_stats, source_stats")
        finished = "FROM games WHERE finished_at IS NOT NULL"
        figures = ("count(*), count(*) FILTER (WHERE status = 'won'), min(move_count) FILTER (WHERE status = 'won'),"
                   " min(extract(epoch FROM finished_at - started_at)) FILTER (WHERE status = 'won'), sum(undo_count)")
        conn.execute(
            "INSERT INTO player_stats (player_id, ruleset_id, played, won, fewest_moves, fastest_seconds, undos,"
            f" current_streak, best_streak) SELECT player_id, ruleset_id, {figures}, 0,"
            f" (count(*) FILTER (WHERE status = 'won') > 0)::int {finished} GROUP BY player_id, ruleset_id"
        )
        conn.execute(
            "INSERT INTO source_stats (source, ruleset_id, played, won, fewest_moves, fastest_seconds, undos)"
            f" SELECT deal->>'source', ruleset_id, {figures} {finished} GROUP BY 1, 2"
        )


# ---------------------------------------------------------------- measuring through a real server


def _reads(ids: dict[str, str]) -> dict[str, str]:
    bot, game, race, after = ids["bot"], ids["game"], ids["race"], ids["after"]
    return {
        "daily leaderboard, first page": "/deals/daily/today/leaderboard?limit=100",
        "daily leaderboard, a page a third of the way down": f"/deals/daily/today/leaderboard?limit=100&after={after}",
        "a player's games (the bot's), first page": f"/players/{bot}/games?limit=100",
        "a player's games in progress": f"/players/{bot}/games?status=playing&limit=100",
        "a player's games export (20 games with their events)": f"/players/{bot}/games/export?max=20",
        "open-races lobby": "/races/open?limit=20",
        "race standings (a finished race)": f"/races/{race}",
        "a player's stats (the bot's)": f"/players/{bot}/stats",
        "stats over all players": "/stats",
        "game view": f"/games/{game}",
        "events page": f"/games/{game}/events?limit=100",
    }


async def _measure(url: str, work: Path) -> dict[str, list[float]]:
    from .harness.client import Connection, build_request, call
    from .harness.processes import start_server, stop_server, wait_healthy

    server = start_server("scale", "service.http.asgi:app", url, work, pin=False)
    try:
        wait_healthy(server, 60)
        await _daily_ready(server.port)
        ids = _ids(url)
        conn = Connection(server.port)
        timings: dict[str, list[float]] = {}
        for name, path in _reads(ids).items():
            raw = build_request("GET", path, server.port)
            for _ in range(REQUESTS // 10):  # warm-up
                await conn.request(raw)
            timings[name] = [await _timed(conn, raw, name) for _ in range(REQUESTS)]
        _, player = await call(server.port, "POST", "/players", {"name": "mover"})
        timings["a move (draw or recycle)"] = await _moves(conn, server.port, player["token"])
        conn.close()
        return timings
    finally:
        stop_server(server)


async def _daily_ready(port: int) -> None:
    """Wait until the server has prepared today's deal: its solver runs in a worker at start, and
    the reads are measured on a server that is done with it."""
    from .harness.client import call

    deadline = time.monotonic() + 300
    while (await call(port, "GET", "/deals/daily"))[0] != 200:
        if time.monotonic() > deadline:
            raise SystemExit("today's deal was not ready in 300 s")
        await asyncio.sleep(1)
    await asyncio.sleep(2)


async def _timed(conn: Any, raw: bytes, name: str) -> float:
    started = time.perf_counter()
    status, body = await conn.request(raw)
    elapsed = (time.perf_counter() - started) * 1000
    if status != 200:
        raise SystemExit(f"{name}: status {status}: {body[:300]!r}")
    return elapsed


async def _moves(conn: Any, port: int, token: str) -> list[float]:
    from .harness.client import build_request, call

    timings: list[float] = []
    while len(timings) < REQUESTS:
        _, game = await call(port, "POST", "/games", {"ruleset": "classic", "deal": {"seed": len(timings) + 1}}, token)
        for kind in ("draw", "recycle") * 40:
            raw = build_request("POST", f"/games/{game['id']}/moves", port, {"type": kind}, token)
            started = time.perf_counter()
            status, _ = await conn.request(raw)
            if status == 200:
                timings.append((time.perf_counter() - started) * 1000)
            if status == 409 or len(timings) >= REQUESTS:
                break
    return timings


def _ids(url: str) -> dict[str, str]:
    """The bot, a finished game with events, a finished race, and a leaderboard cursor a third down."""
    import psycopg

    from service.stats.queries import BoardKey

    with psycopg.connect(url) as conn:
        game = conn.execute("SELECT id FROM games WHERE finished_at IS NOT NULL AND version > 30 LIMIT 1").fetchone()
        race = conn.execute("SELECT id FROM races WHERE status = 'finished' LIMIT 1").fetchone()
        ranked = conn.execute("SELECT count(*) FROM daily_leaderboard WHERE day = current_date AND unranked IS NULL"
                              ).fetchone()[0]
        key = conn.execute(
            "SELECT moves, seconds, finished_at, game_id FROM daily_leaderboard WHERE day = current_date"
            " AND unranked IS NULL ORDER BY moves, seconds, finished_at, game_id OFFSET %s LIMIT 1", (ranked // 3,)
        ).fetchone()
        today = conn.execute("SELECT current_date").fetchone()[0]
    assert game is not None
    assert race is not None
    assert key is not None
    return {"bot": _md5_uuid("bot"), "game": str(game[0]), "race": str(race[0]),
            "after": BoardKey(today, *key).cursor()}


def _md5_uuid(text: str) -> str:
    import hashlib

    return str(uuid.UUID(hashlib.md5(text.encode()).hexdigest()))


def _report(timings: dict[str, list[float]], baseline: dict[str, float]) -> None:
    print(f"  {'read':58s} {'p50 ms':>8s} {'p99 ms':>8s} {'x first':>8s}")
    for name, values in timings.items():
        values.sort()
        p50 = statistics.median(values)
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        first = baseline.setdefault(name, p50)
        print(f"  {name:58s} {p50:8.2f} {p99:8.2f} {p50 / first:8.2f}")


def _plans(url: str) -> None:
    """EXPLAIN of the statements each growing read runs, as the service's code sends them."""
    from tests.query_plans import plan, problems, summary

    for name, statements in asyncio.run(_statements(url)).items():
        for query, params in statements:
            found = plan(url, query, params)
            verdict = "; ".join(problems(found)) or "index"
            print(f"  plan: {name}: {verdict}: {summary(found)}")


async def _statements(url: str) -> dict[str, list[tuple[str, Any]]]:
    """Each growing read's statements, recorded while the service's code runs it in-process."""
    from service.games.games import Games
    from service.settings import Settings
    from service.stats.queries import Stats, board_key
    from service.store.connections import open_pool
    from service.store.event_store import EventStore
    from tests.query_plans import RecordingPool, growing_reads

    pool = open_pool(url, 1, 2, 60_000)
    await pool.open()
    recording = RecordingPool(pool)
    games = Games(EventStore(recording), Settings(database_url=url))  # type: ignore[arg-type]
    ids = _ids(url)
    bot, today = uuid.UUID(ids["bot"]), datetime.now(UTC).date()
    calls = growing_reads(games, Stats(recording), bot, today, board_key(ids["after"], today))  # type: ignore[arg-type]
    found = {}
    try:
        for name, run in calls.items():
            recording.seen.clear()
            await run()
            found[name] = list(recording.seen)
    finally:
        await games.batcher.close()
        await games.daily.close()
        await pool.close()
    return found

