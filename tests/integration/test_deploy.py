"""Deploying without downtime (marked ``deploy``: ``pytest -m deploy``): the previous release keeps
working on the schema this release migrates to, and a rolling deploy loses nothing.

The previous release (tests/previous_release.py) is the code before the newest migration, from
this checkout's git history, in a virtualenv of its own lock file (built once into the cache,
then reused).

1. Its smoke tests (the tests marked ``smoke``; for a release from before the marker, the fixed
   list ``FALLBACK_SMOKE_TESTS``) run in its own pytest session, with its own code and tests,
   against a database the CURRENT code migrated to head (tests/deploy_plugin/canfield_head_schema.py
   replaces its migration step).
2. A rolling deploy: a process of the previous release serves clients that move with
   Idempotency-Keys and follow their games' streams (tests/failover_drill.py's clients, through a
   round-robin load balancer in the client); the current code migrates the database under that
   traffic; a process of the current code joins; both serve the same games at once (and what
   one stores or hands out, the other reads: a registration and a move replayed by their
   Idempotency-Key, a lobby cursor continued); the old one is stopped (SIGTERM, as a deploy does)
   while the moves go on. Every acknowledged move is in
   the event log exactly once, every stream saw every version once, and nothing a client could
   not retry was refused.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import httpx
import psycopg
import pytest

from service.store.migrations import head_revision, migrate
from tests.failover_drill import STREAM_READ_TIMEOUT, Drill, audit_acknowledged, final_versions, stream_problems
from tests.live import PROJECT_ROOT, ServerProcess
from tests.previous_release import (
    FALLBACK_SMOKE_TESTS,
    SMOKE_MARKER,
    NoPreviousRelease,
    Release,
    previous_release,
)

from .test_snapshot_migration import scratch_url  # noqa: F401  (a fixture: an empty database of its own)

PLUGIN_DIR = Path(__file__).resolve().parents[1] / "deploy_plugin"
MIN_SMOKE_TESTS = 8

pytestmark = [pytest.mark.deploy, pytest.mark.slow]


@pytest.fixture(scope="module")
def release() -> Release:
    try:
        return previous_release()
    except NoPreviousRelease as error:
        pytest.skip(f"NO PREVIOUS RELEASE TO DEPLOY OVER: {error}")


# ---------------------------------------------------------------- 1. the previous release's smoke tests


def test_the_previous_releases_smoke_tests_pass_on_the_schema_this_release_migrates_to(
    release: Release, postgres_server_url: str, tmp_path: Path
) -> None:
    record = tmp_path / "migrated"
    junit = tmp_path / "smoke.xml"
    selection = ["-m", SMOKE_MARKER, "tests/api"] if release.has_smoke_marker() else list(FALLBACK_SMOKE_TESTS)
    env = {
        **release.env(),
        "PYTHONPATH": os.pathsep.join([str(release.tree), str(PLUGIN_DIR)]),
        "TEST_DATABASE_URL": postgres_server_url,  # the session's server: the old session makes its database there
        "CANFIELD_HEAD_PYTHON": sys.executable,
        "CANFIELD_HEAD_ROOT": str(PROJECT_ROOT),
        "CANFIELD_HEAD_RECORD": str(record),
    }
    run = subprocess.run(
        [str(release.python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "canfield_head_schema", "-q",
         f"--junitxml={junit}", f"--basetemp={tmp_path / 'old'}", *selection],
        check=False, cwd=release.tree, env=env, capture_output=True, text=True, timeout=600,
    )
    output = f"release {release.commit[:10]} (migration {release.head})\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None, output
    counts = {name: int(suite.get(name, "0")) for name in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == counts["skipped"] == 0, (counts, output)
    assert counts["tests"] >= MIN_SMOKE_TESTS, (counts, output)
    # its database was migrated by this code, to this code's head, and by nothing else
    assert record.read_text().split() == [head_revision()], output


# ---------------------------------------------------------------- 2. a rolling deploy


class Rotation:
    """The backends a load balancer sends requests to, in turn; acknowledged moves counted per
    backend and per phase of the deploy."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.backends: dict[str, str] = {}  # label -> base URL
        self.turn = 0
        self.phase = ""
        self.acked: Counter[tuple[str, str]] = Counter()  # (backend, phase) -> moves answered 200

    def add(self, label: str, url: str) -> None:
        with self.lock:
            self.backends[label] = url

    def remove(self, label: str) -> None:
        """Out of rotation (never the last backend: a load balancer keeps trying that one)."""
        with self.lock:
            if len(self.backends) > 1:
                self.backends.pop(label, None)

    def next(self) -> tuple[str, str]:
        with self.lock:
            labels = sorted(self.backends)
            self.turn += 1
            label = labels[self.turn % len(labels)]
            return label, self.backends[label]


class Balancer(httpx.BaseTransport):
    """A round-robin load balancer inside a client: each request goes to the next backend; one that
    refuses a connection is taken out of rotation and the client's retry goes to another."""

    def __init__(self, rotation: Rotation) -> None:
        self.rotation = rotation
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        label, base = self.rotation.next()
        target = httpx.URL(base)
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["Host"] = f"{target.host}:{target.port}"
        try:
            response = self.inner.handle_request(request)
        except httpx.ConnectError:
            self.rotation.remove(label)
            raise
        if request.method == "POST" and request.url.path.endswith("/moves") and response.status_code == 200:
            with self.rotation.lock:
                self.rotation.acked[(label, self.rotation.phase)] += 1
        return response

    def close(self) -> None:
        self.inner.close()


def migrate_with(release: Release, url: str) -> None:
    code = "import sys; from service.store.migrations import migrate; migrate(sys.argv[1])"
    done = subprocess.run([str(release.python), "-c", code, url], check=False, cwd=release.tree, env=release.env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def schema_of(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row is not None
    return str(row[0])


def crossings(first: str, second: str) -> list[str]:
    """What a process at ``first`` stores or hands out, read back through ``second``: a stored
    registration and a stored move replayed by the other (the same reply, nothing applied twice),
    and a lobby cursor continued there. The problems found."""
    problems: list[str] = []
    with httpx.Client(base_url=first, timeout=10) as one, httpx.Client(base_url=second, timeout=10) as other:
        key = {"Idempotency-Key": str(uuid.uuid4())}
        made = one.post("/players", json={"name": "Crossing"}, headers=key)
        again = other.post("/players", json={"name": "Crossing"}, headers=key)
        if made.status_code != 201 or again.status_code != 201 or again.json() != made.json():
            problems.append(f"registration replayed as {again.status_code} {again.text[:200]}")
            return problems
        auth = {"Authorization": f"Bearer {made.json()['token']}"}
        game = one.post("/games", json={"ruleset": "classic", "deal": {"seed": 7}}, headers=auth).json()["id"]
        key = {**auth, "Idempotency-Key": str(uuid.uuid4())}
        moved = one.post(f"/games/{game}/moves", json={"type": "draw"}, headers=key)
        replayed = other.post(f"/games/{game}/moves", json={"type": "draw"}, headers=key)
        if moved.status_code != 200 or replayed.status_code != 200 or replayed.json() != moved.json():
            problems.append(f"move replayed as {replayed.status_code} {replayed.text[:200]}")
        if other.get(f"/games/{game}").json()["version"] != moved.json()["game"]["version"]:
            problems.append("a replayed move was applied again")
        opened = [one.post("/races", json={"ruleset": "classic", "maxEntrants": 2, "deal": {"seed": seed}},
                           headers=auth).json()["id"] for seed in (1, 2)]
        page = one.get("/races/open", params={"limit": 1}).json()
        rest = other.get("/races/open", params={"limit": 1, "before": page["nextBefore"]})
        if rest.status_code != 200 or [r["id"] for r in page["races"] + rest.json()["races"]] != opened[::-1]:
            problems.append(f"the lobby cursor continued as {rest.status_code} {rest.text[:200]}")
    return problems


def test_a_rolling_deploy_over_the_previous_release_loses_no_acknowledged_move(
    release: Release, scratch_url: str, tmp_path: Path  # noqa: F811
) -> None:
    env = {"STREAM_KEEPALIVE_SECONDS": "1"}
    url = scratch_url
    migrate_with(release, url)
    assert schema_of(url) == release.head
    old = ServerProcess(url, tmp_path / "old.log", env=env, release=release)
    new: ServerProcess | None = None
    rotation = Rotation()
    drill = Drill("http://balancer.invalid", 4, transport=lambda: Balancer(rotation))
    final: dict[str, int] = {}
    threads: list[threading.Thread] = []
    try:
        old.wait_until_up()
        rotation.add("old", old.url)
        rotation.phase = "old release"
        drill.setup()
        threads = [threading.Thread(target=drill.move_loop, args=(m,), daemon=True) for m in drill.movers]
        threads += [threading.Thread(target=drill.watch_loop, args=(w, final), daemon=True)
                    for w in drill.watchers]
        for thread in threads:
            thread.start()
        time.sleep(1.0)

        rotation.phase = "migrated"
        migrate(url)  # the current code's migrations, under the old release's traffic
        assert schema_of(url) == head_revision()
        new = ServerProcess(url, tmp_path / "new.log", env=env)
        new.wait_until_up()
        assert httpx.get(new.url + "/readyz", timeout=5).status_code == 200
        rotation.add("new", new.url)
        rotation.phase = "both"
        started = time.monotonic()
        crossed = crossings(old.url, new.url) + crossings(new.url, old.url)
        assert crossed == [], crossed
        time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))

        rotation.phase = "old stopping"
        old.stop()  # SIGTERM: it drains while requests still come to it
        # it stopped by itself (uvicorn raises the SIGTERM again once drained), not SIGKILLed after 15 s
        assert old.process.returncode in (0, -signal.SIGTERM), old.log_text()
        rotation.remove("old")
        rotation.phase = "new release"
        time.sleep(1.0)
    finally:
        drill.stop_moving.set()
        for thread in threads[: len(drill.movers)]:
            thread.join(timeout=30)
        if threads:
            final.update(final_versions(url, [m.game_id for m in drill.movers]))
        for thread in threads[len(drill.movers):]:
            thread.join(timeout=15)
        drill.give_up.set()
        for thread in threads:
            thread.join(timeout=STREAM_READ_TIMEOUT + 2)
        old.stop()
        if new is not None:
            new.stop()
    lost, duplicated, gaps = audit_acknowledged(url, drill.movers)

    acked = rotation.acked
    errors = sum((m.errors for m in drill.movers), Counter())
    refused = sum((m.refused for m in drill.movers), Counter())
    streams = [p for w in drill.watchers for p in stream_problems(w, final)]
    context = (f"release {release.commit[:10]} (migration {release.head}); acknowledged {dict(acked)}; "
               f"retried {dict(errors)}; refused {dict(refused)}\n--- old:\n{old.log_text()}\n--- new:\n"
               f"{'' if new is None else new.log_text()}")
    assert lost == [], context
    assert duplicated == [], context
    assert gaps == [], context
    assert refused == Counter(), context  # nothing a client could not retry with its key
    assert streams == [], context
    # the old release served on the new schema, beside the new one; the new one after it left
    assert acked["old", "migrated"] + acked["old", "both"] > 0, context
    assert acked["new", "both"] > 0, context
    assert acked["new", "new release"] > 0, context
    # every stream opened on the old process, was ended by its stop and resumed on the new one
    assert all(w.resumed_with_last_event_id for w in drill.watchers), context
