"""The failover drill: lose the primary database while clients move and watch, promote its standby,
and audit what the promoted database holds against what clients were told.

Used by tests/integration/test_failover.py (synchronous replication: nothing acknowledged may be
lost) and by ``python -m bench failover`` (asynchronous and synchronous, with the figures).

1. An embedded primary (its own cluster in ``work_dir``), migrated, and a streaming standby of it
   named ``s1`` (``embedded_replica.start_replica``); with ``synchronous`` the primary's
   ``synchronous_standby_names`` is ``s1``, so a commit is acknowledged only once the standby has
   flushed it.
2. The service in a subprocess (``tests.live.ServerProcess``) on the multi-host URL an operator
   gives: ``postgresql://postgres@<primary socket>:5432,<standby socket>:5432/canfield
   ?target_session_attrs=read-write``, with the service's default settings.
3. ``clients`` players, each with a game of its own (classic: draw three, unlimited recycles, so a
   draw or a recycle is always legal), each moving in a loop: every move has its own
   Idempotency-Key and is sent again with the same key after a 503 or a connection error until it
   is acknowledged (200). A stream reader per game (``GET /games/{id}/stream``) that, whenever the
   stream is cut, reopens it with ``Last-Event-ID`` (the id of the last game event it got); each
   reader also drops its stream once at the kill (at its next line: a keep-alive at the latest),
   as a client whose network went with the database would, so every stream is resumed at least
   once during the outage even when the server keeps it open.
4. After ``before_seconds`` the primary's postmaster is SIGKILLed and the standby promoted
   (``pg_ctl promote``); from its end, ``GET /readyz`` is asked until it answers 200 (the pool and
   the stream listener both on the promoted primary). The clients go on for ``after_seconds``
   after their first acknowledged move past the kill, then stop; the streams are given time to
   reach each game's last version.
5. The audit, on the promoted database: each acknowledged move's Idempotency-Key is stored once
   with the versions the client was told, and an event of the acknowledged type is at each of
   them; each game's versions run from 1 without a gap and every one after the game's creation
   belongs to exactly one acknowledged move; each stream got every version once, in order.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg

from service.store import embedded_db, embedded_replica
from service.store.migrations import migrate

from . import failover_accounts as accounts
from .failover_accounts import AccountFollower
from .live import ServerProcess

RULESET = "classic"
RETRY_PAUSE = 0.05  # seconds between two tries of an unacknowledged move
STREAM_READ_TIMEOUT = 5.0  # a stream silent this long is taken as cut and reopened


def failover_url(primary: embedded_db.EmbeddedDatabase, standby: embedded_db.EmbeddedDatabase,
                 database: str = embedded_db.APP_DATABASE) -> str:
    """The URL an operator gives: both hosts (here, socket directories), the writable one wanted."""
    hosts = ",".join(f"{quote(str(db.socket_dir), safe='')}:{embedded_db.PORT}" for db in (primary, standby))
    return f"postgresql://{embedded_db.SUPERUSER}@{hosts}/{database}?target_session_attrs=read-write"


def connection_strings(primary: embedded_db.EmbeddedDatabase, standby: embedded_db.EmbeddedDatabase,
                       database: str = embedded_db.APP_DATABASE) -> dict[str, str]:
    """The other forms of ``failover_url`` an operator may give, each naming both servers and
    wanting the writable one: the URL with the standby listed first; a URL whose hosts and ports
    are query parameters; ``key=value`` pairs with one port for every host; and the URL in
    SQLAlchemy's scheme ``postgresql+psycopg://`` (the service reads it, and ``postgres://``, as
    ``postgresql://``) with ``target_session_attrs=primary``."""
    user, port = embedded_db.SUPERUSER, embedded_db.PORT
    first, second = (str(db.socket_dir) for db in (primary, standby))
    one, two = (quote(directory, safe="") for directory in (first, second))  # as a URL holds them
    return {
        "url, standby first": f"postgresql://{user}@{two}:{port},{one}:{port}/{database}?target_session_attrs=read-write",
        "url, hosts as parameters": (f"postgresql:///{database}?host={one},{two}&port={port},{port}&user={user}"
                                     "&target_session_attrs=read-write"),
        "key=value pairs, one port": (f"host='{first},{second}' port={port} user={user} dbname={database} "
                                      "target_session_attrs=read-write"),
        "postgresql+psycopg:// url, primary": (f"postgresql+psycopg://{user}@{one}:{port},{two}:{port}/{database}"
                                               "?target_session_attrs=primary"),
    }


@dataclass
class Ack:
    game_id: str
    key: str
    move_type: str
    versions: list[int]
    sent_at: float  # when its first try was sent (time.monotonic())
    acked_at: float


@dataclass
class Mover:
    """One client: a player, its game, the moves it was told succeeded."""

    token: str
    game_id: str
    base_version: int  # the game's version when created: moves start after it
    stock: int
    player_id: str = ""
    ends_games: bool = False  # resigns after accounts.END_EVERY moves of a game and deals a new one
    games: dict[str, int] = field(default_factory=dict)  # every game it played: its base version
    moves_in_game: int = 0
    may_end: threading.Event | None = None  # set once its account stream is open
    acks: list[Ack] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)  # each unanswered try: "503", "connection", ...
    refused: Counter[str] = field(default_factory=Counter)  # 4xx a correct run never sees

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Watcher:
    """One stream reader: the game events it received, in order, and how often it resumed."""

    game_id: str
    versions: list[int] = field(default_factory=list)
    base_version: int | None = None  # the first view's version
    opened: int = 0
    resumed_with_last_event_id: int = 0
    dropped_at_kill: bool = False  # this reader dropped its stream when the primary was killed
    refused: Counter[str] = field(default_factory=Counter)


@dataclass
class DrillResult:
    synchronous: bool
    moves_before: int  # acknowledged before the kill
    seconds_before: float
    recovery_seconds: float | None  # from the kill to the first acknowledged move sent after it
    promote_seconds: float  # from the kill to the end of pg_ctl promote
    ready_after_promotion_seconds: float | None  # from the end of pg_ctl promote to /readyz 200
    move_after_promotion_seconds: float | None  # from the end of pg_ctl promote to that first acknowledged move
    moves_after: int
    errors: Counter[str]  # tries a client had to repeat, by reply
    refused: Counter[str]  # replies a client could not retry (only after a loss: a move on a state it never saw)
    lost: list[str]  # acknowledged moves (game:version) the promoted database does not hold as told
    duplicated: list[str]  # versions two acknowledged moves claim, or a key stored for other versions
    gaps: list[str]  # games whose stored versions skip one, or hold a version no acknowledged move made
    stream_problems: list[str]  # streams that missed, repeated or reordered a version
    stream_resumes: int  # streams reopened with Last-Event-ID, all readers together
    streams_never_resumed: int  # readers that never reopened their stream with Last-Event-ID
    server_restarted: bool
    game_ends: int = 0  # acknowledged resignations, each of which writes a gameEnded account event
    game_ends_after: int = 0  # of them, sent after the kill
    account_events_lost: list[str] = field(default_factory=list)  # told of (acknowledged or streamed), not stored
    account_events_doubled: list[str] = field(default_factory=list)
    account_stream_problems: list[str] = field(default_factory=list)  # gaps, repeats, misreads on the streams
    account_events_streamed: int = 0
    account_resumes: int = 0  # account streams reopened with Last-Event-ID, all together
    accounts_never_resumed: int = 0
    server_log: str = ""

    @property
    def moves_per_second_before(self) -> float:
        return self.moves_before / self.seconds_before if self.seconds_before else 0.0


class Drill:
    """The clients and stream readers of a drill, on the service at ``url``. ``transport`` makes
    each client's httpx transport (tests/integration/test_deploy.py passes a load balancer's)."""

    def __init__(self, url: str, clients: int, transport: Callable[[], httpx.BaseTransport] | None = None,
                 enders: int = 0, end_every: int = accounts.END_EVERY) -> None:
        self.url = url
        self.clients = clients
        self.ender_count = enders
        self.end_every = end_every
        self.transport = transport
        self.stop_moving = threading.Event()
        self.give_up = threading.Event()
        self.drop_streams = threading.Event()  # set at the kill: every reader drops its stream once
        self.kill_at: float | None = None
        self.movers: list[Mover] = []
        self.watchers: list[Watcher] = []
        self.enders: list[Mover] = []  # clients that also end games, each following its account stream
        self.followers: list[AccountFollower] = []
        self.threads: list[threading.Thread] = []  # the clients' and readers', once started

    @property
    def everyone(self) -> list[Mover]:
        return self.movers + self.enders

    # ------------------------------------------------------------ clients

    def client(self, timeout: float) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=httpx.Timeout(timeout, connect=2.0),
                            transport=None if self.transport is None else self.transport())

    def setup(self) -> None:
        with self.client(10.0) as http:
            for index in range(self.clients + self.ender_count):
                player = http.post("/players", json={"name": f"Mover {index}"})
                assert player.status_code == 201, player.text
                token = player.json()["token"]
                game = http.post("/games", json={"ruleset": RULESET, "deal": {"seed": 100 + index}},
                                 headers={"Authorization": f"Bearer {token}"})
                assert game.status_code == 201, game.text
                view = game.json()
                mover = Mover(token, view["id"], view["version"], view["table"]["stock"]["count"],
                              player_id=player.json()["id"], games={view["id"]: view["version"]})
                if index < self.clients:
                    self.movers.append(mover)
                    self.watchers.append(Watcher(view["id"]))
                    continue
                follower = AccountFollower(mover.player_id, token)
                mover.ends_games, mover.may_end = True, follower.opened
                self.enders.append(mover)
                self.followers.append(follower)

    def move_loop(self, mover: Mover) -> None:
        with self.client(10.0) as http:
            while not self.stop_moving.is_set():
                self._one_move(http, mover)

    def _one_move(self, http: httpx.Client, mover: Mover) -> None:
        move_type = "draw" if mover.stock else "recycle"
        if mover.ends_games and mover.moves_in_game >= self.end_every and mover.may_end is not None \
                and mover.may_end.is_set():
            move_type = "resign"
        key = str(uuid.uuid4())
        sent_at = time.monotonic()
        while True:
            try:
                reply = http.post(f"/games/{mover.game_id}/moves", json={"type": move_type},
                                  headers={**mover.auth, "Idempotency-Key": key})
            except httpx.TransportError as exc:
                mover.errors[f"connection ({type(exc).__name__})"] += 1
                time.sleep(RETRY_PAUSE)
                continue
            if reply.status_code == 200:
                body = reply.json()
                mover.acks.append(Ack(mover.game_id, key, move_type, [e["version"] for e in body["events"]],
                                      sent_at, time.monotonic()))
                mover.stock = body["game"]["table"]["stock"]["count"]
                mover.moves_in_game += 1
                if move_type == "resign":
                    accounts.deal(self, http, mover, key=str(uuid.uuid4()))
                return
            if reply.status_code in (502, 503, 504) or reply.status_code >= 500:
                mover.errors[str(reply.status_code)] += 1
                time.sleep(RETRY_PAUSE)
                continue
            # a 4xx: this move cannot be made on the game as it now is (only after a lost write)
            mover.refused[f"{reply.status_code} {reply.json().get('code', '')}"] += 1
            self._resync(http, mover)
            return

    def _resync(self, http: httpx.Client, mover: Mover) -> None:
        while not self.stop_moving.is_set():
            with contextlib.suppress(httpx.TransportError):
                view = http.get(f"/games/{mover.game_id}", headers=mover.auth)
                gone = view.status_code == 404 or (view.status_code == 200 and view.json()["status"] != "playing")
                if mover.ends_games and gone:  # its game was lost, or its resignation was: deal anew
                    accounts.deal(self, http, mover, key=str(uuid.uuid4()))
                    return
                if view.status_code == 200:
                    mover.stock = view.json()["table"]["stock"]["count"]
                    return
            time.sleep(RETRY_PAUSE)

    # ------------------------------------------------------------ streams

    def watch_loop(self, watcher: Watcher, final: dict[str, int]) -> None:
        with self.client(STREAM_READ_TIMEOUT) as http:
            while not self._watched_enough(watcher, final):
                headers = {}
                if watcher.base_version is not None:
                    headers["Last-Event-ID"] = str(_last(watcher))
                    watcher.resumed_with_last_event_id += 1
                with contextlib.suppress(httpx.TransportError, httpx.StreamError):
                    self._read_stream(http, watcher, headers, final)
                if not self._watched_enough(watcher, final):
                    time.sleep(RETRY_PAUSE)

    def _watched_enough(self, watcher: Watcher, final: dict[str, int]) -> bool:
        """The game's last version received (once the moves stopped), or no more waiting."""
        done = final.get(watcher.game_id)
        return self.give_up.is_set() or (done is not None and _last(watcher) >= done)

    def _read_stream(self, http: httpx.Client, watcher: Watcher, headers: dict[str, str],
                     final: dict[str, int]) -> None:
        with http.stream("GET", f"/games/{watcher.game_id}/stream", headers=headers) as response:
            if response.status_code != 200:
                watcher.refused[str(response.status_code)] += 1
                return
            watcher.opened += 1
            event: str | None = None
            for line in response.iter_lines():
                if self.drop_streams.is_set() and not watcher.dropped_at_kill:
                    watcher.dropped_at_kill = True  # as a proxy or a phone losing its network would
                    return
                if line.startswith("event:"):
                    event = line.partition(":")[2].strip()
                elif line.startswith("id:") and event is not None:
                    version = int(line.partition(":")[2].strip())
                    if event == "game-event":
                        watcher.versions.append(version)
                    elif event == "view" and watcher.base_version is None:
                        watcher.base_version = version
                elif line == "":
                    event = None
                    if self._watched_enough(watcher, final):
                        return


def _last(watcher: Watcher) -> int:
    if watcher.versions:
        return watcher.versions[-1]
    return watcher.base_version or 0


def _wait_streaming(primary_url: str, synchronous: bool, timeout: float = 30.0) -> None:
    """Until the primary sees the standby streaming (and, when asked, as its synchronous one)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(primary_url, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT state, sync_state FROM pg_stat_replication WHERE application_name = 's1'"
                               ).fetchone()
            if row is not None and row[0] == "streaming" and (row[1] == "sync" or not synchronous):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby is not streaming (pg_stat_replication: {row})")
            time.sleep(0.05)


@contextlib.contextmanager
def primary_and_standby(work_dir: Path, *, synchronous: bool
                        ) -> Iterator[tuple[embedded_db.EmbeddedDatabase, embedded_db.EmbeddedDatabase]]:
    """An embedded primary in ``work_dir / "primary"``, migrated, and its standby ``s1`` in
    ``work_dir / "standby"`` (the primary's synchronous standby with ``synchronous``), streaming;
    both stopped at the end."""
    primary = embedded_db.start(work_dir / "primary")
    standby: embedded_db.EmbeddedDatabase | None = None
    try:
        migrate(primary.url)
        standby = embedded_replica.start_replica(primary.admin_url, work_dir / "standby", name="s1")
        if synchronous:
            embedded_replica.require_synchronous(primary.admin_url, "s1")
        _wait_streaming(primary.admin_url, synchronous)
        yield primary, standby
    finally:
        if standby is not None:
            standby.stop()
        primary.stop()


def wait_ready(url: str, since: float, limit: float) -> float | None:
    """Seconds from ``since`` (``time.monotonic()``) until ``GET /readyz`` of the service at ``url``
    answered 200, asked every ``RETRY_PAUSE`` s (each answer comes within the probe's own second);
    None if it did not within ``limit`` s of ``since``."""
    with httpx.Client(base_url=url, timeout=httpx.Timeout(5.0, connect=2.0)) as http:
        while time.monotonic() < since + limit:
            with contextlib.suppress(httpx.TransportError):
                if http.get("/readyz").status_code == 200:
                    return time.monotonic() - since
            time.sleep(RETRY_PAUSE)
    return None


def run_drill(work_dir: Path, *, synchronous: bool, clients: int = 4, before_seconds: float = 3.0,
              after_seconds: float = 2.0, recovery_limit: float = 60.0, env: dict[str, str] | None = None,
              cut_standby_seconds: float = 0.0, enders: int = 0, end_every: int = accounts.END_EVERY,
              log: Any = None) -> DrillResult:
    """The drill in ``work_dir`` (two clusters, the server's log), start to audit; see the module.

    ``cut_standby_seconds``: that long before the kill the standby stops streaming (its
    ``primary_conninfo`` emptied): with asynchronous replication the primary goes on acknowledging
    commits the standby never receives, the window in which a failover loses them, made long
    enough to see; with synchronous replication every commit waits instead. ``enders``: clients
    more that resign their game after ``end_every`` moves of it, deal a new one and follow their
    account streams (tests/failover_accounts.py)."""
    with primary_and_standby(work_dir, synchronous=synchronous) as (primary, standby):
        server = ServerProcess(failover_url(primary, standby), work_dir / "server.log", env=env)
        drill = Drill(server.url, clients, enders=enders, end_every=end_every)
        try:
            server.wait_until_up()
            return _drill(drill, server, primary, standby, before_seconds=before_seconds,
                          after_seconds=after_seconds, recovery_limit=recovery_limit,
                          cut_standby_seconds=cut_standby_seconds, synchronous=synchronous,
                          log=log or (lambda *_: None))
        finally:
            drill.stop_moving.set()
            drill.give_up.set()
            server.stop()
            for thread in drill.threads:
                thread.join(timeout=STREAM_READ_TIMEOUT + 2)


def _drill(drill: Drill, server: ServerProcess, primary: embedded_db.EmbeddedDatabase,
           standby: embedded_db.EmbeddedDatabase, *, before_seconds: float, after_seconds: float,
           recovery_limit: float, cut_standby_seconds: float, synchronous: bool, log: Any) -> DrillResult:
    """Clients and readers on the running ``server``; the kill, the promotion; the audit."""
    final: dict[str, int] = {}  # each watched game's last version, once the moves stopped
    final_accounts: dict[str, int] = {}  # each ender's newest account event number, likewise
    pid = server.process.pid
    drill.setup()
    moving = [threading.Thread(target=drill.move_loop, args=(m,), daemon=True) for m in drill.everyone]
    reading = [threading.Thread(target=drill.watch_loop, args=(w, final), daemon=True) for w in drill.watchers]
    reading += [threading.Thread(target=accounts.follow_loop, args=(drill, f, final_accounts), daemon=True)
                for f in drill.followers]
    drill.threads = moving + reading
    for thread in drill.threads:
        thread.start()
    started = time.monotonic()
    time.sleep(before_seconds)
    moves_before = sum(len(m.acks) for m in drill.everyone)
    seconds_before = time.monotonic() - started
    log(f"  {moves_before} moves acknowledged in {seconds_before:.1f} s; killing the primary")
    if cut_standby_seconds:
        _stop_streaming(standby.admin_url)
        log(f"  (the standby stopped streaming {cut_standby_seconds:g} s before the kill)")
        time.sleep(cut_standby_seconds)
    drill.kill_at = kill_at = time.monotonic()
    drill.drop_streams.set()
    primary.kill()
    standby.promote()
    promoted_at = time.monotonic()
    ready = wait_ready(server.url, promoted_at, recovery_limit)
    recovered_at = _first_ack_after(drill, kill_at, kill_at + recovery_limit)
    recovery = None if recovered_at is None else recovered_at - kill_at
    move_after_promotion = None if recovered_at is None else max(0.0, recovered_at - promoted_at)
    log(f"  promoted in {promoted_at - kill_at:.2f} s; after it /readyz 200 in "
        + ("never" if ready is None else f"{ready:.2f} s") + ", first acknowledged move in "
        + ("never" if move_after_promotion is None else f"{move_after_promotion:.2f} s")
        + "; recovery " + ("never" if recovery is None else f"{recovery:.2f} s") + " after the kill")
    if recovered_at is not None:
        time.sleep(after_seconds)
    drill.stop_moving.set()
    for thread in moving:
        thread.join(timeout=30)
    final.update(final_versions(standby.url, [m.game_id for m in drill.movers]))
    final_accounts.update(accounts.final_account_events(standby.url, [m.player_id for m in drill.enders]))
    for thread in reading:
        thread.join(timeout=15)
    drill.give_up.set()
    for thread in reading:
        thread.join(timeout=STREAM_READ_TIMEOUT + 2)
    restarted = server.process.poll() is not None or server.process.pid != pid
    return _audit(drill, standby.url, final, synchronous=synchronous, moves_before=moves_before,
                  seconds_before=seconds_before, recovery_seconds=recovery, promote_seconds=promoted_at - kill_at,
                  ready_after_promotion_seconds=ready, move_after_promotion_seconds=move_after_promotion,
                  server_restarted=restarted, server_log=server.log_text())


def _audit(drill: Drill, url: str, final: dict[str, int], **measured: Any) -> DrillResult:
    """What the promoted database at ``url`` holds against what the clients were told."""
    kill_at = drill.kill_at or 0.0
    lost, duplicated, gaps = audit_acknowledged(url, drill.everyone)
    told = accounts.audit_accounts(url, drill.enders, drill.followers)
    return DrillResult(
        **measured,
        moves_after=sum(1 for m in drill.everyone for a in m.acks if a.sent_at > kill_at),
        errors=sum((m.errors for m in drill.everyone), Counter()),
        refused=sum((m.refused for m in drill.everyone), Counter()),
        lost=lost,
        duplicated=duplicated,
        gaps=gaps,
        stream_problems=[p for w in drill.watchers for p in stream_problems(w, final)],
        stream_resumes=sum(w.resumed_with_last_event_id for w in drill.watchers),
        streams_never_resumed=sum(1 for w in drill.watchers if not w.resumed_with_last_event_id),
        game_ends=told.game_ends,
        game_ends_after=sum(1 for m in drill.enders for a in m.acks if a.move_type == "resign" and a.sent_at > kill_at),
        account_events_lost=told.lost,
        account_events_doubled=told.doubled,
        account_stream_problems=told.problems,
        account_events_streamed=sum(len(f.events) for f in drill.followers),
        account_resumes=sum(f.resumed_with_last_event_id for f in drill.followers),
        accounts_never_resumed=sum(1 for f in drill.followers if not f.resumed_with_last_event_id),
    )


def _stop_streaming(standby_url: str) -> None:
    with psycopg.connect(standby_url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET primary_conninfo = ''")
        conn.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 10
        while conn.execute("SELECT count(*) FROM pg_stat_wal_receiver").fetchone() != (0,):
            if time.monotonic() > deadline:
                raise RuntimeError("the standby's WAL receiver did not stop")
            time.sleep(0.02)


def _first_ack_after(drill: Drill, kill_at: float, deadline: float) -> float | None:
    """When the first move sent after the kill was acknowledged (``time.monotonic()``), waiting
    until ``deadline`` for one."""
    while True:
        times = [a.acked_at for m in drill.everyone for a in m.acks if a.sent_at > kill_at]
        if times:
            return min(times)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def final_versions(url: str, games: list[str]) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT id::text, version FROM games WHERE id = ANY(%s::uuid[])", [games]).fetchall()
    return dict(rows)


def audit_acknowledged(url: str, movers: list[Mover]) -> tuple[list[str], list[str], list[str]]:
    """(lost, duplicated, gaps) by the promoted database's events and idempotency keys, game by game."""
    found: tuple[list[str], list[str], list[str]] = ([], [], [])
    with psycopg.connect(url, autocommit=True) as conn:
        for mover in movers:
            for game_id, base_version in (mover.games or {mover.game_id: mover.base_version}).items():
                _audit_game(conn, game_id, base_version, [a for a in mover.acks if a.game_id == game_id], found)
    return found


def _audit_game(conn: psycopg.Connection[Any], game_id: str, base_version: int, acks: list[Ack],
                found: tuple[list[str], list[str], list[str]]) -> None:
    lost, duplicated, gaps = found
    events = dict(conn.execute("SELECT version, type FROM events WHERE game_id = %s", [game_id]).fetchall())
    keys = dict(conn.execute("SELECT key, response FROM idempotency_keys WHERE game_id = %s", [game_id]).fetchall())
    stored = sorted(events)
    if stored != list(range(1, len(stored) + 1)):
        gaps.append(f"{game_id}: versions {stored[:3]}..{stored[-3:]} are not 1..{len(stored)}")
    claimed: Counter[int] = Counter()
    for ack in acks:
        claimed.update(ack.versions)
        response = keys.get(ack.key)
        if response is None:
            lost.extend(f"{game_id}:{v}" for v in ack.versions)
            continue
        if [e["version"] for e in response["events"]] != ack.versions:
            duplicated.append(f"{game_id}: key {ack.key} stored for other versions")
        if any(v not in events for v in ack.versions):
            lost.extend(f"{game_id}:{v}" for v in ack.versions if v not in events)
    duplicated += [f"{game_id}:{v}" for v, n in claimed.items() if n > 1]
    unclaimed = [v for v in stored if v > base_version and v not in claimed]
    if unclaimed and not lost:
        gaps.append(f"{game_id}: versions {unclaimed[:5]} no acknowledged move made")


def stream_problems(watcher: Watcher, final: dict[str, int]) -> list[str]:
    expected_last = final.get(watcher.game_id)
    if watcher.base_version is None or expected_last is None:
        return [f"{watcher.game_id}: the stream never opened"]
    expected = list(range(watcher.base_version + 1, expected_last + 1))
    if watcher.versions != expected:
        missing = sorted(set(expected) - set(watcher.versions))
        repeated = [v for v, n in Counter(watcher.versions).items() if n > 1]
        return [(f"{watcher.game_id}: got {len(watcher.versions)} versions of {len(expected)}, "
                f"missing {missing[:5]}, repeated {repeated[:5]}")]
    return []
