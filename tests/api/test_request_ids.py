"""Request ids (service.http.request_ids): every answer carries ``X-Request-Id`` (the client's, the
trace id of its ``traceparent``, or a new one), every problem names it as its ``instance``, and
one access-log line per request carries it, with the route template, the status and the player,
never a token."""

from __future__ import annotations

import json
import logging
import re

import httpx
import pytest

from service.http.request_ids import JsonFormatter, request_id_of

from .conftest import Player

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def test_the_id_is_the_clients_or_the_traces_or_new() -> None:
    assert request_id_of([(b"x-request-id", b"abc-123")]) == "abc-123"
    assert request_id_of([(b"traceparent", f"00-{TRACE}-00f067aa0ba902b7-01".encode())]) == TRACE
    assert request_id_of([(b"x-request-id", b"two words"), (b"traceparent", b"junk")]) != "two words"
    assert re.fullmatch(r"[0-9a-f]{32}", request_id_of([(b"x-request-id", b"x" * 129)]))
    assert request_id_of([(b"traceparent", b"00-" + b"0" * 32 + b"-00f067aa0ba902b7-01")]) != "0" * 32


def test_every_answer_and_problem_names_its_request(client: httpx.Client, ann: Player) -> None:
    given = client.get("/rulesets", headers={"X-Request-Id": "client-chose-this"})
    assert given.headers["x-request-id"] == "client-chose-this"
    made = client.get("/rulesets").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    traced = {"traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"}
    missing = client.get("/games/00000000-0000-4000-8000-000000000000", headers=traced)
    assert missing.status_code == 404
    assert missing.headers["x-request-id"] == TRACE
    assert missing.json()["instance"] == f"urn:canfield:request:{TRACE}"
    refused = ann.move("00000000-0000-4000-8000-000000000000", {"type": "jump"})
    assert refused.json()["instance"] == f"urn:canfield:request:{refused.headers['x-request-id']}"


def test_one_access_line_per_request_without_the_token(
    client: httpx.Client, ann: Player, caplog: pytest.LogCaptureFixture
) -> None:
    game = ann.new_game(deal={"seed": 3})
    with caplog.at_level(logging.INFO, logger="canfield.access"):
        moved = ann.move(game["id"], {"type": "draw"}, **{"X-Request-Id": "move-1"})
    assert moved.status_code == 200
    [line] = [record for record in caplog.records if getattr(record, "fields", {}).get("request_id") == "move-1"]
    fields = line.fields  # type: ignore[attr-defined]
    assert (fields["method"], fields["route"], fields["status"]) == ("POST", "/games/{game_id}/moves", 200)
    assert fields["player"] == ann.id
    assert fields["duration_ms"] > 0
    formatted = JsonFormatter().format(line)
    assert json.loads(formatted)["request_id"] == "move-1"
    assert ann.token not in formatted
    assert game["id"] not in formatted, "the route template, not the path"
