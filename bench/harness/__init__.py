"""The benchmarks' shared machinery, so that a scenario module is about the scenario alone.

``env``: paths, the host, ``BENCH_WORKERS``, the CPU pinning and ``BENCH_QUICK``; ``service_api``:
every import of the service's code (one place to follow the service when it changes);
``client``: a minimal asyncio HTTP/1.1 keep-alive client; ``processes``: server processes
started, awaited, stopped; ``tracing``: a server under callgrind or strace; ``database``: a fresh
migrated database on the embedded PostgreSQL or ``BENCH_DATABASE_URL``; ``load``: clients playing
draw/recycle in a timed window; ``rounds``: the API bench's alternating rounds of its targets and
its ``BENCH_AB`` second service; ``checks``: old game vs new, and every acknowledged move in the
database; ``stub``: the load generator's own speed; ``api_report``: the API bench's table;
``mixed_load``: the soak's clients; ``restart``: the database restarted under load; ``audit``:
the soak's lost moves and stored-log checks; ``soak_report``: the soak's figures and report;
``server_cpu``: a server's CPU (instructions, system calls) per request; ``backend_meter`` and
``stored_games``: the store bench's PostgreSQL backend CPU and WAL, and its played games;
``stats``: percentiles, medians and CPU meters; ``results``: a report printed and the results
written as JSON; ``scale_history``, ``scale_boards``, ``bulk_load`` and ``scale_reads``: the scale
bench's history (games from the domain's events, copied set-based; races, leaderboards, stats),
its load with the indexes off and its replay check, and its reads and plans.
"""
