"""The scale bench's reads through a real server, and the plans of the statements behind them."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PAGE = 100


def reads(ids: dict[str, str]) -> dict[str, str]:
    bot, game, race, after = ids["bot"], ids["game"], ids["race"], ids["after"]
    board = f"/deals/daily/today/leaderboard?limit={PAGE}"
    return {
        "daily leaderboard, first page": board,
        "daily leaderboard, a page a third of the way down": f"{board}&after={after}",
        "a player's games (the bot's), first page": f"/players/{bot}/games?limit={PAGE}",
        "a player's games in progress": f"/players/{bot}/games?status=playing&limit={PAGE}",
        "a player's games export (20 games with their events)": f"/players/{bot}/games/export?max=20",
        "open-races lobby": "/races/open?limit=20",
        "race standings (a finished race)": f"/races/{race}",
        "a player's stats (the bot's)": f"/players/{bot}/stats",
        "stats over all players": "/stats",
        "game view": f"/games/{game}",
        "events page": f"/games/{game}/events?limit=100",
    }


async def measure(urls: list[str], work: Path, requests: int, rounds: int = 4) -> list[dict[str, list[float]]]:
    """Each read ``requests`` times on each database's own server (after a tenth as many to warm
    up), then as many moves: in ``rounds`` alternating turns, so that every database meets the
    machine's load of the same minutes. One dict of timings per database, in ``urls``' order."""
    from .client import Connection, call
    from .processes import start_server, stop_server, wait_healthy

    # No abandon job: the history's games in progress have been idle since 2025, and would be ended.
    servers = [start_server(f"scale-{n}", "service.http.asgi:app", url, work, {"ABANDON_AFTER_DAYS": "0"}, pin=False)
               for n, url in enumerate(urls)]
    try:
        for server, url in zip(servers, urls, strict=True):
            wait_healthy(server, 60)
            await _daily_ready(server.port, url)
        conns = [Connection(server.port) for server in servers]
        timings: list[dict[str, list[float]]] = [{} for _ in urls]
        paths = []
        for server, url in zip(servers, urls, strict=True):
            found = ids(url)
            paths.append(reads(found | {"after": await _cursor_after(server.port, found["after"])}))
        await timed_reads(conns, [server.port for server in servers], paths, requests, rounds, timings)
        tokens = [(await call(server.port, "POST", "/players", {"name": "mover"}))[1]["token"] for server in servers]
        for _ in range(rounds):
            for conn, server, token, timed in zip(conns, servers, tokens, timings, strict=True):
                moved = timed.setdefault("a move (draw or recycle)", [])
                moved.extend(await _moves(conn, server.port, token, requests // rounds, len(moved)))
        for conn in conns:
            conn.close()
        return timings
    finally:
        for server in servers:
            stop_server(server)


async def timed_reads(
    conns: list[Any], ports: list[int], paths: list[dict[str, str]], requests: int, rounds: int,
    timings: list[dict[str, list[float]]],
) -> None:
    """Each read of ``paths`` (one dict of name -> path per server) ``requests`` times on each
    server's connection, after a tenth as many to warm up, in ``rounds`` alternating turns; the
    milliseconds of each go to ``timings`` (one dict per server)."""
    from .client import build_request

    for name in paths[0]:
        raws = [build_request("GET", path[name], port) for path, port in zip(paths, ports, strict=True)]
        for conn, raw in zip(conns, raws, strict=True):
            for _ in range(requests // 10):  # warm-up
                await conn.request(raw)
        for _ in range(rounds):
            for conn, raw, timed in zip(conns, raws, timings, strict=True):
                if (await conn.request(raw))[0] == 0:  # idle past the keep-alive during the other's turn
                    await conn.request(raw)
                turn = [await _timed(conn, raw, name) for _ in range(requests // rounds)]
                timed.setdefault(name, []).extend(turn)


async def _daily_ready(port: int, url: str) -> None:
    """Wait until the server has prepared today's and tomorrow's deals: its solver runs in a
    worker at start (the first server of a database solves both), and the reads are measured on a
    server that is done with it."""
    import psycopg

    from .client import call

    deadline = time.monotonic() + 300
    while (await call(port, "GET", "/deals/daily"))[0] != 200 or _deals_stored(psycopg, url) < 2:
        if time.monotonic() > deadline:
            raise SystemExit("today's and tomorrow's deals were not ready in 300 s")
        await asyncio.sleep(1)
    await asyncio.sleep(2)


def _deals_stored(psycopg: Any, url: str) -> int:
    with psycopg.connect(url) as conn:
        today = "(now() AT TIME ZONE 'UTC')::date"
        return int(conn.execute(f"SELECT count(*) FROM daily_deals WHERE day IN ({today}, {today} + 1)").fetchone()[0])


async def _cursor_after(port: int, key: Any) -> str:
    """The ``nextAfter`` that a client walking today's board from its first page holds after the
    entry of ``key`` (a ``BoardKey`` with its rank): one the server made, with the rank it carries."""
    from service.http.pages import LIMIT_MAX as LEADERBOARD_MAX

    from .client import call

    seen, after = 0, ""
    while seen < key.rank:
        path = f"/deals/daily/today/leaderboard?limit={min(LEADERBOARD_MAX, key.rank - seen)}{after}"
        status, body = await call(port, "GET", path)
        if status != 200 or not body["entries"] or body["nextAfter"] is None:
            raise SystemExit(f"walking today's leaderboard: status {status}: {str(body)[:300]}")
        seen += len(body["entries"])
        after = f"&after={body['nextAfter']}"
    last = body["entries"][-1]
    if (last["game"], last["rank"]) != (str(key.game), key.rank):
        raise SystemExit(f"today's leaderboard: entry {key.rank} is {last}, not game {key.game}")
    cursor: str = body["nextAfter"]
    return cursor


async def _timed(conn: Any, raw: bytes, name: str) -> float:
    started = time.perf_counter()
    status, body = await conn.request(raw)
    elapsed = (time.perf_counter() - started) * 1000
    if status != 200:
        raise SystemExit(f"{name}: status {status}: {body[:300]!r}")
    return elapsed


async def _moves(conn: Any, port: int, token: str, count: int, seed: int) -> list[float]:
    """``count`` draws or recycles, on games dealt from seeds ``seed + 1`` on."""
    from .client import build_request, call

    timings: list[float] = []
    while len(timings) < count:
        deal = {"seed": seed + len(timings) + 1}
        _, game = await call(port, "POST", "/games", {"ruleset": "classic", "deal": deal}, token)
        for kind in ("draw", "recycle") * 40:
            raw = build_request("POST", f"/games/{game['id']}/moves", port, {"type": kind}, token)
            started = time.perf_counter()
            status, _ = await conn.request(raw)
            if status == 200:
                timings.append((time.perf_counter() - started) * 1000)
            if status == 409 or len(timings) >= count:
                break
    return timings


def ids(url: str) -> dict[str, Any]:
    """The same things at every size: the bot, a finished game of over 30 events (a template's
    first copy), a finished race of three, and the key (``BoardKey``, with its rank) of the entry a
    third of the way down today's ranked entries. Fails unless every page read is full (so a ratio
    compares histories, not pages)."""
    import psycopg

    from service.stats.queries import BoardKey

    with psycopg.connect(url) as conn:
        game = conn.execute("SELECT md5('game:' || min(t))::uuid FROM bench_template_games"
                            " WHERE status <> 'playing' AND version > 30").fetchone()
        ranked, playing, games = conn.execute(
            "SELECT (SELECT count(*) FROM daily_leaderboard WHERE day = current_date AND unranked IS NULL),"
            " count(*) FILTER (WHERE finished_at IS NULL), count(*) FROM games WHERE player_id = md5('bot')::uuid"
        ).fetchone()
        if min(ranked - ranked // 3, playing, games) <= PAGE:
            raise SystemExit(f"a page is not full: {ranked} ranked entries, the bot's {playing} games in progress")
        key = conn.execute(
            "SELECT moves, seconds, finished_at, game_id FROM daily_leaderboard WHERE day = current_date"
            " AND unranked IS NULL ORDER BY moves, seconds, finished_at, game_id OFFSET %s LIMIT 1", (ranked // 3,)
        ).fetchone()
        wins = conn.execute("SELECT coalesce((SELECT wins FROM daily_stats WHERE day = current_date), 0)").fetchone()
        today = conn.execute("SELECT current_date").fetchone()[0]
    assert game is not None
    assert key is not None
    assert wins is not None
    return {"bot": _md5_uuid("bot"), "game": str(game[0]), "race": _md5_uuid("race:1"),
            "after": BoardKey(today, *key, ranked // 3 + 1, wins[0])}


def _md5_uuid(text: str) -> str:
    return str(uuid.UUID(hashlib.md5(text.encode()).hexdigest()))


def plans(url: str) -> None:
    """EXPLAIN of the statements each growing read runs, as the service's code sends them."""
    from tests.query_plans import counts, plan, problems, summary

    for name, statements in asyncio.run(_statements(url)).items():
        for query, params in statements:
            found = plan(url, query, params)
            verdict = "; ".join(problems(found)) or "index"
            counted = "; ".join(counts(found))
            print(f"  plan: {name}: {verdict}{f' (counts: {counted})' if counted else ''}: {summary(found)}")


async def _statements(url: str) -> dict[str, list[tuple[str, Any]]]:
    """Each growing read's statements, recorded while the service's code runs it in-process."""
    from service.stats.queries import Stats
    from tests.query_plans import RecordingPool, growing_reads

    from .service_api import PoolOptions, Settings, build_services, close, open_pool
    from .service_api import event_store as stores

    pool = open_pool(url, PoolOptions(1, 2, 60_000))
    await pool.open()
    recording = RecordingPool(pool)
    services = build_services(stores.EventStore(recording), Settings(database_url=url))  # type: ignore[arg-type]
    found = ids(url)
    bot, today = uuid.UUID(found["bot"]), datetime.now(UTC).date()
    calls = growing_reads(services, Stats(recording), bot, today, found["after"])  # type: ignore[arg-type]
    statements = {}
    try:
        for name, run in calls.items():
            recording.seen.clear()
            await run()
            statements[name] = list(recording.seen)
    finally:
        await close(services)
        await pool.close()
    return statements
