"""Undo depth is unlimited: a snapshot keeps only the last few moves (domain.undo_stack.WINDOW),
and an undo below them is served from the event log. The window is shrunk to 3 here (the test
server runs in this process), so a handful of moves reaches below it."""

from __future__ import annotations

import pytest

from domain import replay, undo_stack
from domain.codec import event_from_data, snapshot_to_state
from tests.live import stored

from .conftest import Player


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(undo_stack, "WINDOW", 3)


def test_undo_goes_back_to_the_deal_past_the_snapshots_window(
    ann: Player, small_window: None, clean_database: str
) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 31})
    dealt_table = game["table"]
    drawn = []
    for _ in range(8):
        reply = ann.move(game["id"], {"type": "draw"})
        assert reply.status_code == 200, reply.text
        drawn.append(reply.json()["events"])
    state = stored(clean_database, [game["id"]])[game["id"]].state()
    assert state.undo_depth == 8
    assert undo_stack.depth(state.undo) == 3

    for number, events in enumerate(reversed(drawn)):
        headers = {"Idempotency-Key": "deep"} if number == 6 else {}  # one through the uncached path
        reply = ann.move(game["id"], {"type": "undo"}, **headers)
        assert reply.status_code == 200, reply.text
        (undone,) = reply.json()["events"]
        assert undone["type"] == "MoveUndone"
        assert [item["type"] for item in undone["data"]["reverted"]] == [event["type"] for event in events]
    final = reply.json()["game"]
    assert final["table"] == dealt_table
    assert final["undoCount"] == 8
    assert final["version"] == 17

    refused = ann.move(game["id"], {"type": "undo"})
    assert refused.status_code == 422
    assert "no move to undo" in refused.json()["detail"]

    log = stored(clean_database, [game["id"]])[game["id"]]
    replayed = replay(event_from_data(kind, data) for _, kind, data in log.events)
    assert log.state() == replayed
    assert log.snapshot_version == 17, "an undo writes the snapshot"
    assert snapshot_to_state(log.snapshot) == replayed
    assert replayed.undo_depth == 0
    assert log.version == 17
