"""The account streams of the failover drill (tests/failover_drill.py).

Some of the drill's clients, the *enders*, end their game now and then: after ``END_EVERY`` (or
the drill's ``end_every``) acknowledged moves of a game they resign it (a move like the others, with its own
Idempotency-Key, sent again with the same key until acknowledged) and deal a new one (``POST
/games``, with an Idempotency-Key too). Each resignation writes a ``gameEnded`` account event in
the move's own transaction, so account events are written before, across and after the kill.

Each ender follows its own account stream (``GET /players/me/stream``, SSE): whenever the stream
is cut it reopens it with ``Last-Event-ID`` (the id of the last event it got), and it drops it
once at the kill, as the game stream readers do. An ender resigns for the first time only once its
stream is open, so the stream sees the account's events from the first one.

The audit, on the promoted database: the account's events are numbered 1..n without a gap (n the
player's ``event_seq``); each acknowledged resignation has exactly one ``gameEnded`` event, and no
game has one that no acknowledged resignation ended; the stream got ids 1..n exactly once, in
order, each the event the database holds under that id (after a loss a number can be reused).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx
import psycopg

if TYPE_CHECKING:
    from .failover_drill import Drill, Mover

END_EVERY = 12  # acknowledged moves of a game after which an ender resigns it
RETRY_PAUSE = 0.05
STREAM_READ_TIMEOUT = 5.0  # a stream silent this long is taken as cut and reopened
GAME_ENDED = "gameEnded"


@dataclass
class AccountFollower:
    """One ender's account stream: the events it received, in order, and how often it resumed."""

    player_id: str
    token: str
    events: list[tuple[int, str, str | None]] = field(default_factory=list)  # (id, type, data.game)
    opened: threading.Event = field(default_factory=threading.Event)
    opens: int = 0
    resumed_with_last_event_id: int = 0
    dropped_at_kill: bool = False
    errors: Counter[str] = field(default_factory=Counter)  # 503s and cut connections, retried
    refused: Counter[str] = field(default_factory=Counter)  # a 4xx (after a loss: unknown_event_id)

    @property
    def last_id(self) -> int:
        return self.events[-1][0] if self.events else 0


@dataclass
class AccountAudit:
    game_ends: int  # acknowledged resignations
    lost: list[str]  # gameEnded events a client was told of (acknowledged or streamed) not in the database
    doubled: list[str]  # games with more than one gameEnded, or one no acknowledged resignation made
    problems: list[str]  # stored numbers with a gap; streams that missed, repeated or misread an event


def follow_loop(drill: Drill, follower: AccountFollower, final: dict[str, int]) -> None:
    with drill.client(STREAM_READ_TIMEOUT) as http:
        while not _followed_enough(drill, follower, final) and not follower.refused:
            headers = {"Authorization": f"Bearer {follower.token}"}
            if follower.opens:  # from the last event received (0: before the account's first)
                headers["Last-Event-ID"] = str(follower.last_id)
                follower.resumed_with_last_event_id += 1
            try:
                _read_stream(drill, http, follower, headers, final)
            except (httpx.TransportError, httpx.StreamError) as exc:
                follower.errors[f"connection ({type(exc).__name__})"] += 1
            if not _followed_enough(drill, follower, final):
                time.sleep(RETRY_PAUSE)


def _followed_enough(drill: Drill, follower: AccountFollower, final: dict[str, int]) -> bool:
    done = final.get(follower.player_id)
    return drill.give_up.is_set() or (done is not None and follower.last_id >= done)


def _read_stream(drill: Drill, http: httpx.Client, follower: AccountFollower, headers: dict[str, str],
                 final: dict[str, int]) -> None:
    with http.stream("GET", "/players/me/stream", headers=headers) as response:
        if response.status_code != 200:
            response.read()
            if response.status_code >= 500:
                follower.errors[str(response.status_code)] += 1
            else:
                follower.refused[f"{response.status_code} {response.json().get('code', '')}"] += 1
            return
        follower.opens += 1
        follower.opened.set()
        message: dict[str, str] = {}
        for line in response.iter_lines():
            if drill.drop_streams.is_set() and not follower.dropped_at_kill:
                follower.dropped_at_kill = True  # as a client losing its network would
                return
            if line:
                name, _, value = line.partition(":")
                message[name] = value.strip()
                continue
            if "id" in message and "data" in message:
                body = json.loads(message["data"])
                follower.events.append((int(message["id"]), message.get("event", ""), body["data"].get("game")))
            message = {}
            if _followed_enough(drill, follower, final):
                return


def final_account_events(url: str, player_ids: list[str]) -> dict[str, int]:
    """Each account's newest event number in the database at ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT id::text, event_seq FROM players WHERE id = ANY(%s::uuid[])",
                            [player_ids]).fetchall()
    return dict(rows)


def audit_accounts(url: str, enders: list[Mover], followers: list[AccountFollower]) -> AccountAudit:
    audit = AccountAudit(0, [], [], [])
    with psycopg.connect(url, autocommit=True) as conn:
        for ender, follower in zip(enders, followers, strict=True):
            stored = {seq: (kind, game) for seq, kind, game in conn.execute(
                "SELECT seq, type, data->>'game' FROM account_events WHERE player_id = %s ORDER BY seq",
                [ender.player_id]).fetchall()}
            last = conn.execute("SELECT event_seq FROM players WHERE id = %s", [ender.player_id]).fetchone()
            _audit_one(ender, follower, stored, 0 if last is None else last[0], audit)
    return audit


def _audit_one(ender: Mover, follower: AccountFollower, stored: dict[int, tuple[str, str | None]], last: int,
               audit: AccountAudit) -> None:
    who = ender.player_id
    if sorted(stored) != list(range(1, last + 1)):
        audit.problems.append(f"{who}: stored event numbers {sorted(stored)[:5]}... are not 1..{last}")
    ended = [ack.game_id for ack in ender.acks if ack.move_type == "resign"]
    audit.game_ends += len(ended)
    in_database = Counter(game for kind, game in stored.values() if kind == GAME_ENDED)
    told = set(ended) | {game for _, kind, game in follower.events if kind == GAME_ENDED and game is not None}
    audit.lost += [f"{who}: gameEnded of {game}" for game in sorted(told) if not in_database[game]]
    audit.doubled += [f"{who}: {n} gameEnded of {game}" for game, n in in_database.items() if n > 1]
    audit.doubled += [f"{who}: gameEnded of {game}, never acknowledged as ended"
                      for game in in_database if game not in ended]
    ids = [event_id for event_id, _, _ in follower.events]
    if ids != list(range(1, last + 1)):
        repeated = [i for i, n in Counter(ids).items() if n > 1]
        audit.problems.append(f"{who}: stream got ids {ids[:3]}..{ids[-3:]} ({len(ids)}), not 1..{last}; "
                              f"repeated {repeated[:5]}, refused {dict(follower.refused)}")
    misread = [i for i, kind, game in follower.events if stored.get(i) != (kind, game)]
    if misread:
        audit.problems.append(f"{who}: stream events {misread[:5]} are not the stored ones")


def deal(drill: Drill, http: httpx.Client, mover: Mover, key: str) -> None:
    """After a resignation: a new game for ``mover``, its creation sent again with the same
    Idempotency-Key until it is answered."""
    body = {"ruleset": "classic", "deal": {"seed": 7000 + len(mover.games)}}
    while not drill.stop_moving.is_set():
        with contextlib.suppress(httpx.TransportError):
            reply = http.post("/games", json=body, headers={**mover.auth, "Idempotency-Key": key})
            if reply.status_code in (200, 201):
                view = reply.json()
                mover.game_id, mover.base_version = view["id"], view["version"]
                mover.stock, mover.moves_in_game = view["table"]["stock"]["count"], 0
                mover.games[mover.game_id] = mover.base_version
                return
            mover.errors[f"deal {reply.status_code} {_code(reply)}".strip()] += 1
        time.sleep(RETRY_PAUSE)


def _code(reply: httpx.Response) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        return str(reply.json().get("code", ""))
    return ""
