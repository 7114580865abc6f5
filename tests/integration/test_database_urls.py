"""DATABASE_URL and DATABASE_READ_URL in every form libpq reads, through `canfield` as a real process:
a URL naming several hosts (the failover form: the first host refuses, the second is the test
database), key=value pairs; and a malformed one is one line on stderr and exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from tests.live import die_with_pytest, free_port

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CANFIELD = [sys.executable, "-m", "service.cli"]
REFUSING = ("127.0.0.1", "1")  # nothing listens on port 1: the connection is refused at once


def _env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "DATABASE_READ_URL", "HOST", "PORT", "WORKERS", "CANFIELD_DATA_DIR")}
    env.update(overrides)
    return env


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CANFIELD, *args], check=False, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def failover_url(url: str) -> str:
    """The test database as a URL of two hosts, the first of which refuses every connection."""
    params = conninfo_to_dict(url)
    host, port = str(params.get("host") or "localhost"), str(params.get("port") or "5432")
    user = quote(str(params.get("user") or ""), safe="")
    credentials = user + (":" + quote(str(params["password"]), safe="") if params.get("password") else "")
    hosts = f"{REFUSING[0]}:{REFUSING[1]},{quote(host, safe='')}:{port}"
    return f"postgresql://{credentials}@{hosts}/{quote(str(params['dbname']), safe='')}?target_session_attrs=read-write"


def failover_pairs(url: str) -> str:
    """The same as key=value pairs."""
    params = conninfo_to_dict(url)
    params["host"] = f"{REFUSING[0]},{params.get('host') or 'localhost'}"
    params["port"] = f"{REFUSING[1]},{params.get('port') or '5432'}"
    return " ".join(f"{key}='{value}'" for key, value in params.items())


def _schema_version(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize("form", [failover_url, failover_pairs], ids=["url-with-two-hosts", "key-value-pairs"])
def test_migrate_takes_a_url_of_several_hosts(clean_database: str, form: object) -> None:
    from service.store.migrations import head_revision

    url = form(clean_database)  # type: ignore[operator]
    assert REFUSING[0] in url
    done = _run("migrate", env=_env(DATABASE_URL=url))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "migrations applied to" in done.stderr
    assert _schema_version(url) == head_revision()


def test_serve_takes_a_url_of_several_hosts_for_both_databases(tmp_path: Path, clean_database: str) -> None:
    url = failover_url(clean_database)
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*CANFIELD, "serve"], cwd=PROJECT_ROOT, stdout=out, stderr=subprocess.STDOUT,
            env=_env(DATABASE_URL=url, DATABASE_READ_URL=url, PORT=str(port)),
            preexec_fn=die_with_pytest if sys.platform == "linux" else None,  # noqa: PLW1509
        )
    try:
        deadline = time.monotonic() + 60
        ready = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert ready is not None, f"canfield serve did not answer:\n{log.read_text(errors='replace')}"
        assert ready.status_code == 200, ready.text
        assert ready.json()["database"] == "up"
        made = httpx.post(f"http://127.0.0.1:{port}/players", json={"name": "Ann"}, timeout=5)
        assert made.status_code == 201, made.text
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert "Traceback" not in log.read_text(errors="replace")


MALFORMED = [
    ("DATABASE_URL", "postgresql://ann:s3cret@[::1/canfield", "is not a connection string PostgreSQL reads"),
    ("DATABASE_URL", "mysql://ann@db/canfield", "is not a connection string PostgreSQL reads"),
    ("DATABASE_URL", "postgresql://ann:s3cret@db/canfield?no_such_option=1", "invalid URI query parameter"),
    ("DATABASE_URL", "host=db dbname", "is not a connection string PostgreSQL reads"),
    ("DATABASE_URL", "postgresql://ann:s3cret@h1:5432,h2:fifty/canfield", "names the port 'fifty'"),
    ("DATABASE_READ_URL", "postgresql://ann:s3cret@[::1/canfield", "DATABASE_READ_URL is not a connection string"),
]


@pytest.mark.parametrize(("variable", "value", "words"), MALFORMED)
@pytest.mark.parametrize("command", ["migrate", "serve"])
def test_a_malformed_url_is_one_line_and_exit_status_2(
    tmp_path: Path, database_url: str, command: str, variable: str, value: str, words: str
) -> None:
    env = _env(**{variable: value}, PORT=str(free_port()), CANFIELD_DATA_DIR=str(tmp_path))
    if variable != "DATABASE_URL":
        env["DATABASE_URL"] = database_url
    done = _run(command, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"canfield {command}: {variable} ")
    assert words in lines[0]
    assert "s3cret" not in done.stderr
    assert done.stdout == ""
