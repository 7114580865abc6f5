"""No primary: how fast a request and ``/readyz`` are refused while the database is stopped, and how
fast the service works again once it is back (docs/operations.md, "No primary").

``python -m bench primary-down``. An embedded PostgreSQL of its own in a temp dir, migrated;
one server process as in production (``python -m uvicorn service.http.asgi:app``) with the default
settings (``DB_POOL_TIMEOUT_MS`` 5000, ``DB_DOWN_WAIT_MS`` 1000). One player makes a move; the
database is stopped (``pg_ctl stop -m fast``); ``ROUNDS`` (6) moves and a ``/readyz`` are timed
(each must be a 503); the database is started again and the time to the first 200 move and to the
first ``/readyz`` 200 (polled every 10 ms) is measured from ``start`` returning. Printed, and written
to ``bench/results/primary_down.json``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import httpx

from service.store import embedded_db
from service.store.migrations import migrate
from tests.live import ServerProcess

ROUNDS = 6
RESULTS = Path(__file__).resolve().parent / "results" / "primary_down.json"


def main() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="canfield-primary-down-"))
    db = embedded_db.start(data_dir)
    migrate(db.url)
    server = ServerProcess(db.url, data_dir / "server.log")
    databases = [db]  # the one running last is stopped at the end
    try:
        server.wait_until_up()
        figures = _measure(server.url, data_dir, databases)
    finally:
        server.kill()
        databases[-1].stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{'while the database is stopped':<40} figure")
    print(f"{'a move 503':<40} {figures['move_503_min_s']:.3f}-{figures['move_503_max_s']:.3f} s")
    print(f"{'/readyz 503':<40} {figures['readyz_503_s']:.3f} s")
    print(f"{'started again to the first 200 move':<40} {figures['back_to_first_move_s']:.3f} s")
    print(f"{'started again to /readyz 200':<40} {figures['back_to_ready_s']:.3f} s")


def _measure(url: str, data_dir: Path, databases: list[embedded_db.EmbeddedDatabase]) -> dict[str, float]:
    with httpx.Client(base_url=url, timeout=30) as http:
        token = http.post("/players", json={"name": "bench"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = http.post("/games", json={"ruleset": "classic", "deal": {"seed": 7}}, headers=auth).json()["id"]

        def move(key: str) -> tuple[int, float]:
            started = time.monotonic()
            response = http.post(f"/games/{game}/moves", json={"type": "draw"},
                                 headers={**auth, "Idempotency-Key": key})
            return response.status_code, time.monotonic() - started

        if move("before")[0] != 200:
            raise SystemExit("the first move failed")
        databases[-1].stop()
        refused = [move(f"down-{number}") for number in range(ROUNDS)]
        if any(status != 503 for status, _ in refused):
            raise SystemExit(f"a move while the database was stopped was not a 503: {refused}")
        started = time.monotonic()
        if http.get("/readyz").status_code != 503:
            raise SystemExit("/readyz was not a 503 while the database was stopped")
        readyz = time.monotonic() - started
        databases.append(embedded_db.start(data_dir))
        back = time.monotonic()
        while move("after")[0] != 200:
            time.sleep(0.01)
        first_move = time.monotonic() - back
        while http.get("/readyz").status_code != 200:
            time.sleep(0.01)
        ready = time.monotonic() - back
    seconds = [duration for _, duration in refused]
    return {"move_503_min_s": min(seconds), "move_503_max_s": max(seconds), "readyz_503_s": readyz,
            "back_to_first_move_s": first_move, "back_to_ready_s": ready}


if __name__ == "__main__":
    main()
