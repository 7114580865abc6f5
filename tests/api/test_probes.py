"""The probes: ``/livez`` while the process serves, ``/readyz`` when it can do its work (database up,
schema at the newest migration or a later release's, stream listener connected); neither counts
against a rate limit."""

from __future__ import annotations

import time

import httpx
import psycopg

from service.store.migrations import head_revision
from tests.support import assert_problem


def _ready(client: httpx.Client) -> httpx.Response:
    deadline = time.monotonic() + 10
    while True:  # the stream listener connects in the background after startup
        response = client.get("/readyz")
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def test_a_serving_process_is_live_and_ready(client: httpx.Client) -> None:
    assert client.get("/livez").json() == {"status": "ok"}
    ready = _ready(client)
    assert ready.status_code == 200, ready.text
    assert ready.json() == {"status": "ready", "database": "up", "schema": head_revision(), "streams": "connected"}
    assert "ratelimit" not in ready.headers


def test_a_schema_behind_the_code_is_not_ready(client: httpx.Client, clean_database: str) -> None:
    assert _ready(client).status_code == 200
    with psycopg.connect(clean_database, autocommit=True) as conn:
        (head,) = conn.execute("SELECT version_num FROM alembic_version").fetchone() or ("",)
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
        try:
            behind = client.get("/readyz")
        finally:
            conn.execute("UPDATE alembic_version SET version_num = %s", (head,))
    assert_problem(behind, 503, "unavailable")
    assert f"at 0001, this code needs {head_revision()}" in behind.json()["detail"]
    assert client.get("/livez").status_code == 200
    assert _ready(client).status_code == 200


def test_a_schema_a_later_release_migrated_is_ready(client: httpx.Client, clean_database: str) -> None:
    """During a rolling deploy the next release migrates first; this release's processes stay in
    the load balancer's rotation, ready, and say which schema they serve."""
    assert _ready(client).status_code == 200
    later = f"{int(head_revision()) + 1:04d}"
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = %s", (later,))
        try:
            ready = client.get("/readyz")
        finally:
            conn.execute("UPDATE alembic_version SET version_num = %s", (head_revision(),))
    assert ready.status_code == 200, ready.text
    assert ready.json()["schema"] == later
