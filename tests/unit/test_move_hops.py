"""How far a move travels through the house: one move traced from its route to the store and back.

``POST /games/{id}/moves`` runs the real route (service.http.move_route) over the real move use
case, built by the composition root (service.bootstrap), on the in-memory store. A profiler hook
records every call from a function of one module of ``service/`` into a function of another (a
"hop"). docs/architecture.md draws the path and states its count; this test keeps that true.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import grimp

from service.bootstrap import build_services, close
from service.http.move_route import make_move
from service.settings import Settings

from .fake_store import FakeStore

SERVICE = str(Path(__file__).resolve().parents[2] / "service") + "/"
FAKE_STORE = str(Path(__file__).with_name("fake_store.py"))
MOST_HOPS = 6
"""The goal: from the route down to the store's append and back up, at most this many module
boundaries crossed (three down, three up)."""


class Store(FakeStore):
    pool = None
    reads = None


def _module(frame: FrameType | None) -> str | None:
    """The ``service/`` module a frame runs in, the in-memory store standing for the event store
    (None: elsewhere: the domain, a library, the test)."""
    if frame is None:
        return None
    path = frame.f_code.co_filename
    if path == FAKE_STORE:
        return "store/event_store.py"
    return path[len(SERVICE):] if path.startswith(SERVICE) else None


@cache
def _imports() -> grimp.ImportGraph:
    return grimp.build_graph("service")


def _dotted(module: str) -> str:
    return "service." + module.removesuffix(".py").replace("/", ".")


def _chain(frame: FrameType | None) -> list[str]:
    """The service modules on the stack from ``frame`` up, outermost first, each run of one module once."""
    chain: list[str] = []
    while frame is not None:
        module = _module(frame)
        if module is not None and (not chain or chain[-1] != module):
            chain.append(module)
        frame = frame.f_back
    return chain[::-1]


@dataclass
class Trace:
    """What a traced block did: every call from one module into another (``hops``: caller, callee,
    function), the deepest chain of modules on the stack, and the calls back up into a module
    already on the stack above (a callback climbing back up)."""

    hops: list[tuple[str, str, str]] = field(default_factory=list)
    deepest: list[str] = field(default_factory=list)
    frames: list[FrameType] = field(default_factory=list)  # held, so no id is reused while tracing

    def back_up(self) -> list[str]:
        """The calls that run against the imports: into a module that imports the caller's (a
        callback handed down and called back up), whichever task made them."""
        graph = _imports()
        return sorted({
            f"{caller} -> {callee}: {name}" for caller, callee, name in self.hops
            if callee != "store/event_store.py"
            and graph.chain_exists(importer=_dotted(callee), imported=_dotted(caller))
        })


@contextmanager
def traced() -> Iterator[Trace]:
    trace = Trace()
    started: set[int] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or id(frame) in started:  # a coroutine resumed is not a new call
            return
        started.add(id(frame))
        trace.frames.append(frame)
        callee, caller = _module(frame), _module(frame.f_back)
        if callee is None or caller is None or callee == caller:
            return
        trace.hops.append((caller, callee, frame.f_code.co_name))
        chain = _chain(frame)
        if len(chain) > len(trace.deepest):
            trace.deepest = chain

    sys.setprofile(profile)
    try:
        yield trace
    finally:
        sys.setprofile(None)


async def _one_move(settings: Settings) -> tuple[int, Trace]:
    store = Store()
    services = build_services(store, settings)  # type: ignore[arg-type]
    token = "hops-" + "t" * 40
    game_id = store.add_game(store.add_player(token), seed=7, ruleset="open-runs")

    class App:
        state: Any = type("State", (), {"services": services, "max_body_bytes": 65536})()

    body = json.dumps({"type": "draw"}).encode()
    sent: list[dict[str, Any]] = []
    path = f"/games/{game_id}/moves"
    scope = {
        "type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
        "headers": [(b"content-type", b"application/json"), (b"authorization", f"Bearer {token}".encode())],
        "app": App(), "path_params": {"game_id": game_id}, "query_string": b"",
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    try:
        with traced() as trace:
            await make_move.fn(scope, receive, send)
    finally:
        await close(services)
    return sent[0]["status"], trace


def test_a_move_goes_down_to_the_store_and_back_in_few_hops() -> None:
    status, trace = asyncio.run(_one_move(Settings(database_url="postgresql://unused/none")))
    assert status == 200
    shown = "\n".join(f"{caller} -> {callee}: {name}" for caller, callee, name in trace.hops)
    assert trace.deepest[0] == "http/move_route.py", shown
    assert "store/event_store.py" in {callee for _, callee, _ in trace.hops}, shown  # it did reach the store
    down = len(trace.deepest) - 1
    assert 2 * down <= MOST_HOPS, f"{down} boundaries down ({' -> '.join(trace.deepest)}):\n{shown}"
    assert trace.back_up() == [], "calls climbing back up:\n" + "\n".join(trace.back_up())


def test_the_tracer_counts_a_call_between_modules_and_not_one_within() -> None:
    from domain import get_ruleset
    from service.deals.sources import deal_from

    with traced() as trace:
        deal_from(get_ruleset("open-runs"), {"pool": 1})
    assert ("deals/sources.py", "deals/choice.py", "pool_number") in trace.hops
    # pool_number calls deal_pool_of in its own module: a call within a module is no hop
    assert not any(caller == "deals/choice.py" and name == "deal_pool_of" for caller, _, name in trace.hops)
    assert trace.deepest[:2] == ["deals/sources.py", "deals/choice.py"]
    assert trace.back_up() == []  # sources imports choice: a call down
