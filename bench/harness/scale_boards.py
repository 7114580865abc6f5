"""The scale bench's races, daily leaderboards and stats, made set-based from the stored games."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def races(conn: Any, have: dict[str, int], target: dict[str, int]) -> None:
    """Finished races dealt stored (non-bot) games, 2 or 3 entrants each; open races of one entrant."""
    from psycopg.types.json import Jsonb

    deck = conn.execute("SELECT data->'deck' FROM bench_template_events WHERE t = 0 AND version = 1").fetchone()[0]
    params = {"first": have["finished races"], "last": target["finished races"] - 1, "deck": Jsonb(deck),
              "open_first": have["open races"], "open_last": target["open races"] - 1}
    with conn.transaction():
        conn.execute(  # non-bot game k is game k + k / 4 + 1 (scale_history._GAME_OF)
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
            " 'finishedAt', g.finished_at, 'assisted', g.assisted, 'verified', true), s"
            " FROM generate_series(%(first)s::int, %(last)s::int) r CROSS JOIN LATERAL generate_series(1, 2 + r %% 2) s"
            " JOIN games g ON g.id = md5('game:' || (3 * r + s - 1 + (3 * r + s - 1) / 4 + 1))::uuid",
            params,
        )
        conn.execute(
            "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version,"
            " created_at) SELECT md5('open:' || r)::uuid, md5('player:' || r %% 200)::uuid, 'classic', 1,"
            " '{\"source\": \"seed\", \"seed\": 1}', %(deck)s, 4, 'open', 1, now() - r * interval '1 minute'"
            " FROM generate_series(%(open_first)s::int, %(open_last)s::int) r",
            params,
        )
        conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) SELECT md5('open:' || r)::uuid,"
            " md5('player:' || r %% 200)::uuid, 1, now() - r * interval '1 minute'"
            " FROM generate_series(%(open_first)s::int, %(open_last)s::int) r",
            params,
        )


# The step's new (non-bot) games: a new player's first is their entry on today's board; every other
# player's first game of a day is their entry on that day's board (past days: the days after the
# step's first, so no player has two entries a day across steps). About a third are ranked.
_BOARDS = """
INSERT INTO daily_leaderboard (game_id, day, player_id, moves, seconds, finished_at, status, assisted, unranked)
SELECT id, CASE WHEN today THEN current_date ELSE started_at::date END, player_id, 40 + n * 7919 %% 200,
       60 + n * 104729 %% 3000 + 0.25,
       CASE WHEN today THEN date_trunc('day', now()) + n %% 500000 * interval '150 ms'
            ELSE started_at + interval '10 minutes' END,
       CASE WHEN n %% 3 = 0 THEN 'won' ELSE 'resigned' END, false, CASE WHEN n %% 3 = 0 THEN NULL ELSE 'not-won' END
FROM (SELECT s.*, row_number() OVER (ORDER BY started_at)::bigint AS n
      FROM (SELECT g.id, g.player_id, g.started_at,
                   newcomer.id IS NOT NULL AND row_number() OVER (PARTITION BY g.player_id ORDER BY g.started_at) = 1
                       AS today,
                   row_number() OVER (PARTITION BY g.player_id, g.started_at::date ORDER BY g.started_at) AS of_day
            FROM games g
            LEFT JOIN (SELECT md5('player:' || q)::uuid AS id FROM generate_series(%(players)s::int, %(last)s::int) q)
                newcomer ON newcomer.id = g.player_id
            WHERE g.started_at >= %(from)s AND g.started_at < %(to)s AND g.player_id <> md5('bot')::uuid) s
      WHERE today OR (of_day = 1 AND started_at::date > %(from)s::date)) entries
"""


def leaderboards(conn: Any, have: dict[str, int], target: dict[str, int], epoch: datetime, spacing: str) -> None:
    """Today's board, an entry per player, and the past days' boards of the games of their days."""
    start, end = conn.execute("SELECT %s::timestamptz + %s * %s::interval, %s::timestamptz + %s * %s::interval",
                              (epoch, have["games"], spacing, epoch, target["games"], spacing)).fetchone()
    with conn.transaction():
        conn.execute("SET LOCAL work_mem = '256MB'")
        conn.execute(_BOARDS, {"players": have["players"], "last": target["players"] - 1, "from": start, "to": end})


def stats(conn: Any) -> None:
    """The stats projections from the games (what a rebuild counts; the streaks are placeholders)."""
    with conn.transaction():
        conn.execute("SET LOCAL work_mem = '256MB'")
        conn.execute("TRUNCATE player_stats, ruleset_stats, source_stats")
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
