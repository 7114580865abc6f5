"""The soak's clients: two per game, a mix of reads, legal moves then card moves, undos, draws
and recycles, with If-Match and Idempotency-Key, tallying every answer (``bench/soak_bench.py``
says which are errors). ``Run.restart_mode``: every move keyed, 503s retried with the same key."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .client import Connection
from .client import build_request as request_bytes

RULESETS = ("open-runs", "classic")  # draw-one stalls too often under random play to be a load


@dataclass
class Slot:
    """A game two clients share; replaced by a new one when it ends."""

    game_id: str
    token: str
    version: int
    stock: int


@dataclass
class Tally:
    statuses: Counter[str] = field(default_factory=Counter)  # "move 200", "read 200", ...
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    unavailable: int = 0  # 503s (restart phase only)
    latencies: list[int] = field(default_factory=list)  # ns, moves
    replays_checked: int = 0

    def error(self, text: str) -> None:
        self.error_count += 1
        if len(self.errors) < 20:
            self.errors.append(text[:300])


@dataclass
class Run:
    port: int
    rng: random.Random
    slots: list[Slot]
    games: list[str] = field(default_factory=list)  # every game dealt, for the audit
    acked: dict[str, dict[int, str]] = field(default_factory=lambda: defaultdict(dict))  # game -> version -> type
    acked_at: list[float] = field(default_factory=list)
    soak: Tally = field(default_factory=Tally)
    restart: Tally = field(default_factory=Tally)
    restart_mode: bool = False
    stop: bool = False
    key_serial: int = 0


async def call(conn: Connection, raw: bytes) -> tuple[int, bytes]:
    return await conn.request(raw)


async def new_slot(conn: Connection, run: Run, token: str | None = None) -> Slot:
    port = run.port
    if token is None:
        status, body = await call(conn, request_bytes("POST", "/players", port, {"name": "soak"}))
        if status != 201:
            raise RuntimeError(f"POST /players answered {status}: {body[:300]!r}")
        token = msgspec.json.decode(body)["token"]
    ruleset = RULESETS[run.rng.randrange(len(RULESETS))]
    deal = {"seed": run.rng.randrange(2**40)}
    raw = request_bytes("POST", "/games", port, {"ruleset": ruleset, "deal": deal}, token)
    for _ in range(600):
        status, body = await call(conn, raw)
        if status not in (0, 503) or not run.restart_mode:
            break
        await asyncio.sleep(0.05)  # the database is restarting
    if status != 201:
        raise RuntimeError(f"POST /games answered {status}: {body[:300]!r}")
    view = msgspec.json.decode(body)
    run.games.append(view["id"])
    return Slot(view["id"], token, view["version"], view["table"]["stock"]["count"])


async def deal_slots(run: Run, count: int) -> None:
    """``count`` games for the clients to share, dealt before they start."""
    setup = Connection(run.port)
    for _ in range(count):
        run.slots.append(await new_slot(setup, run))
    setup.close()


def _remember(slot: Slot, view: dict[str, Any]) -> None:
    if view["id"] == slot.game_id and view["version"] >= slot.version:
        slot.version, slot.stock = view["version"], view["table"]["stock"]["count"]


async def refresh(conn: Connection, run: Run, slot: Slot, tally: Tally) -> None:
    status, body = await call(conn, request_bytes("GET", f"/games/{slot.game_id}", run.port))
    tally.statuses[f"read {status}"] += 1
    if status == 200:
        _remember(slot, msgspec.json.decode(body))
    elif status != 503 or not run.restart_mode:
        tally.error(f"GET /games/{slot.game_id}: {status} {body[:200]!r}")


async def client(index: int, run: Run) -> None:
    conn = Connection(run.port)
    rng = random.Random(index)
    try:
        while not run.stop:
            slot_index = index % len(run.slots)
            await step(conn, run, slot_index, rng)
    finally:
        conn.close()


async def _choose_move(conn: Connection, run: Run, slot: Slot, tally: Tally, rng: random.Random,
                       choice: float) -> dict[str, Any] | None:
    """A card move from the legal moves (15%), an undo (10%), else a draw or a recycle; None when
    the legal moves could not be read."""
    if choice < 0.25:
        status, body = await call(conn, request_bytes("GET", f"/games/{slot.game_id}/legal-moves", run.port))
        tally.statuses[f"read {status}"] += 1
        if status != 200:
            if status != 503 or not run.restart_mode:
                tally.error(f"legal-moves: {status} {body[:200]!r}")
            return None
        cards = [m for m in msgspec.json.decode(body)["moves"] if m["type"] == "move"]
        return rng.choice(cards) if cards else ({"type": "draw"} if slot.stock else {"type": "recycle"})
    if choice < 0.35 and slot.version > 1:
        return {"type": "undo"}
    return {"type": "draw"} if slot.stock else {"type": "recycle"}


async def step(conn: Connection, run: Run, slot_index: int, rng: random.Random) -> None:
    slot = run.slots[slot_index]
    tally = run.restart if run.restart_mode else run.soak
    port, path = run.port, f"/games/{slot.game_id}/moves"
    choice = rng.random()
    if choice < 0.10:
        await refresh(conn, run, slot, tally)
        return
    move = await _choose_move(conn, run, slot, tally, rng, choice)
    if move is None:
        return

    headers: dict[str, str] = {}
    mode = rng.random()
    if run.restart_mode or mode < 1 / 3:
        run.key_serial += 1
        headers["Idempotency-Key"] = f"soak-{run.key_serial}"
    elif mode < 2 / 3:
        headers["If-Match"] = f'"{slot.version}"'
    raw = request_bytes("POST", path, port, move, slot.token, headers)

    while True:
        sent = time.perf_counter_ns()
        status, body = await call(conn, raw)
        tally.latencies.append(time.perf_counter_ns() - sent)
        tally.statuses[f"move {status}"] += 1
        if run.restart_mode and status in (503, 0):  # retried with the same key: applied once
            tally.unavailable += status == 503
            if status == 0:
                tally.error("a broken connection while the database restarted")
            await asyncio.sleep(0.05)
            continue
        break

    if status == 200:
        reply = msgspec.json.decode(body)
        run.acked_at.append(time.monotonic())
        for event in reply["events"]:
            run.acked[slot.game_id][event["version"]] = event["type"]
        _remember(slot, reply["game"])
        if "Idempotency-Key" in headers and not run.restart_mode and rng.random() < 0.1:
            again_status, again = await call(conn, raw)
            tally.replays_checked += 1
            if again_status != 200 or again != body:
                tally.error(f"a retry with the same Idempotency-Key got {again_status}, not the first reply")
        if reply["game"]["status"] != "playing" and run.slots[slot_index] is slot:
            run.slots[slot_index] = await new_slot(conn, run, slot.token)
    elif status == 409:
        if run.slots[slot_index] is slot:
            run.slots[slot_index] = await new_slot(conn, run, slot.token)
    elif (status == 412 and "If-Match" in headers) or status == 422:
        await refresh(conn, run, slot, tally)
    else:
        tally.error(f"{move} {headers}: {status} {body[:200]!r}")
