"""The benchmarks' shared machinery, so that a scenario module is about the scenario alone.

``env``: paths, the host, ``BENCH_WORKERS`` and the CPU pinning; ``service_api``: every import of
the service's code (one place to follow the service when it changes); ``client``: a minimal
asyncio HTTP/1.1 keep-alive client; ``processes``: server processes started, awaited, stopped;
``database``: a fresh migrated database on the embedded PostgreSQL or ``BENCH_DATABASE_URL``;
``load``: clients playing draw/recycle and the timed load window; ``stats``: percentiles,
medians and CPU meters.
"""
