"""Run every benchmark: ``python -m bench [name ...]``.

``BENCH_QUICK=1`` shrinks every scenario's defaults to a run of seconds: api 1 s rounds after
0.5 s of warm-up, one round, 1 and 16 clients, old games of 100 and 1,000 events, 50 latency
moves; soak 5 s; cpu one round of 20 moves; movepath one round of 30 moves; store 4 games of 30
moves among 100 others, one round; profile 3 s; scale 0 and 5,000 games, 40 requests a read;
solver seeds 2-3 with a 1 s budget (a part run: the stored summaries of seeds 1..N are left
alone); analysis one game per size at 0.5 s a position, a 3 s load window; analysis-fair one
victim after 2 s of flood; failover 2 clients and 1 ender, one repetition a mode, 1.5 s before
the kill. A variable given explicitly still wins. It checks that a scenario runs and what it
reports; its figures are not ones to quote.
"""

from __future__ import annotations

import sys

from . import (
    analysis_bench,
    analysis_fair_bench,
    api_bench,
    cpu_bench,
    domain_bench,
    failover_bench,
    following_bench,
    movepath_bench,
    primary_down_bench,
    profile_bench,
    rating_scale_bench,
    ratings_bench,
    replica_bench,
    scale_bench,
    soak_bench,
    solver_bench,
    states_bench,
    store_bench,
    tournament_bench,
    watch_bench,
)

BENCHES = {"domain": domain_bench.main, "api": api_bench.main, "soak": soak_bench.main, "solver": solver_bench.main,
           "scale": scale_bench.main}  # every read and a move as history grows (docs/scaling.md)
# py-spy on a loaded server; server CPU per move; a move's Python work without server or database;
# PostgreSQL's CPU and WAL per move for the batch statement alone; a streaming replica's lag under load
ON_REQUEST = {"profile": profile_bench.main, "cpu": cpu_bench.main, "movepath": movepath_bench.main,
              "store": store_bench.main, "replica": replica_bench.main, "analysis": analysis_bench.main,
              "analysis-fair": analysis_fair_bench.main,  # a victim's analysis while two accounts flood the queue
              "states": states_bench.main,  # GET /games/{id}/states/{v} of a long game, from checkpoints
              "failover": failover_bench.main,  # the primary killed, the standby promoted: recovery, losses
              "primary-down": primary_down_bench.main,  # the database stopped: how soon a move and /readyz say 503
              "ratings": ratings_bench.main,  # rating models on simulated races (docs/ratings.md)
              "watch": watch_bench.main,  # many games on many GET/POST /watch connections (docs/performance.md)
              "rating-scale": rating_scale_bench.main,  # a rating update and the rating list at 100,000 players
              "following": following_bench.main,  # account streams, webhooks (docs/streams-and-webhooks.md)
              "tournament": tournament_bench.main}  # a tournament's standings read at 1,000 entrants


def main(argv: list[str]) -> None:
    names = argv or list(BENCHES)
    for name in names:
        if name not in BENCHES and name not in ON_REQUEST:
            raise SystemExit(f"unknown bench {name!r}: choose from {', '.join([*BENCHES, *ON_REQUEST])}")
    for name in names:
        print(f"== {name}")
        {**BENCHES, **ON_REQUEST}[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
