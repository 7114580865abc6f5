"""The live streams send exactly what the OpenAPI document says (``StreamMessage``,
``RaceStreamMessage``): every message a game's and a race's stream really send, a shutdown's
included, is checked against its schema, its ``data`` against the schema its ``event`` names, with
no field the document does not declare; and every ``event`` value the document lists is sent."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx

from service.streams.hub import SHUTDOWN

from .conftest import Player, play
from .race_support import create_race, game_of, start

DOCUMENT = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
# The component each event's data is, by stream (the other events' data: an anyOf branch of their own).
DATA = {
    "StreamMessage": {"view": "GameView", "end": "GameView", "game-event": "EventView"},
    "RaceStreamMessage": {"race": "RaceView", "end": "RaceView"},
}
LOST_DEAL = 4  # open-runs seed 4: proven lost from the deal, a short analysis


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _type_of(value: Any) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number"} | ({"integer"} if value.is_integer() else set())
    return {{str: "string", list: "array", dict: "object"}[type(value)]}


def problems(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """What in ``value`` the schema (the parts of JSON Schema the document uses) rules out. Stricter
    than JSON Schema in one way, as a generated client is: an object schema with properties allows
    only those, unless it says what the others are (``additionalProperties``: a map)."""
    schema = resolve(schema)
    for union in ("oneOf", "anyOf"):
        if union in schema:
            fits = [branch for branch in schema[union] if not problems(value, branch, where)]
            if (len(fits) != 1) if union == "oneOf" else not fits:
                return [f"{where}: {len(fits)} branches of {union} fit {value!r:.200}"]
    found: list[str] = []
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "type" in schema:
        allowed = {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
        if not allowed & _type_of(value):
            return [*found, f"{where}: {value!r:.100} is not of type {sorted(allowed)}"]
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{where}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{where}: {value} > {schema['maximum']}")
    if isinstance(value, list):
        for limit, fails in (("minItems", len(value) < schema.get("minItems", 0)),
                             ("maxItems", len(value) > schema.get("maxItems", len(value)))):  # fmt: skip
            if fails:
                found.append(f"{where}: {len(value)} items breaks {limit}")
        for index, item in enumerate(value):
            found += problems(item, schema.get("items", {}), f"{where}[{index}]")
    if isinstance(value, dict) and ("properties" in schema or "additionalProperties" in schema):
        declared = schema.get("properties", {})
        found += [f"{where}: no {name!r}" for name in schema.get("required", []) if name not in value]
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            if "propertyNames" in schema:
                found += problems(name, schema["propertyNames"], f"{where} key {name!r}")
            if name in declared:
                found += problems(item, declared[name], f"{where}.{name}")
            elif isinstance(extra, dict):
                found += problems(item, extra, f"{where}.{name}")
            else:
                found.append(f"{where}: {name!r} is not in the document")
    return found


def messages(body: str) -> list[dict[str, str]]:
    """The SSE messages of a stream's text (comments, such as keep-alives, left out)."""
    found = []
    for block in body.split("\n\n"):
        fields = [line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")]
        if fields:
            found.append(dict(fields))
    return found


def check(message: dict[str, str], name: str) -> None:
    """A message against the component ``name``, and its data against what its event carries."""
    schema = SCHEMAS[name]
    assert not problems(message, schema), problems(message, schema)
    data = json.loads(message["data"])
    branches = schema["properties"]["data"]["contentSchema"]["anyOf"]
    assert any(not problems(data, branch) for branch in branches), (message["event"], data)
    component = DATA[name].get(message["event"])
    if component is not None:
        said = problems(data, {"$ref": f"#/components/schemas/{component}"})
        assert not said, (message["event"], said)


def stream(client: httpx.Client, path: str, **params: str) -> list[dict[str, str]]:
    response = client.get(path, params=params, timeout=60)
    assert response.status_code == 200, response.text
    return messages(response.text)


def analysed_game(client: httpx.Client, ann: Player) -> str:
    """An ended game with moves in its log, its analysis done."""
    game_id: str = ann.new_game(ruleset="open-runs", deal={"seed": LOST_DEAL})["id"]
    play(ann, game_id, [{"type": "draw"}, {"type": "draw"}, {"type": "undo"}, {"type": "resign"}])
    assert client.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    deadline = time.monotonic() + 60
    while client.get(f"/games/{game_id}/analysis").json()["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, "the analysis did not finish"
        time.sleep(0.1)
    return game_id


def test_a_games_stream_sends_what_stream_message_says(client: httpx.Client, ann: Player) -> None:
    game_id = analysed_game(client, ann)
    opened = stream(client, f"/games/{game_id}/stream")  # the view, the analysis, the end
    resumed = stream(client, f"/games/{game_id}/stream", after="0")  # every event, the analysis, the end
    shutdown = messages(SHUTDOWN.decode())
    assert [m["event"] for m in opened] == ["view", "analysis", "end"]
    assert [m["event"] for m in resumed] == [*["game-event"] * 5, "analysis", "end"]
    progress = json.loads(opened[1]["data"])
    assert progress["status"] == "done"
    assert progress["progress"]["done"] == progress["progress"]["total"] > 0
    sent = [*opened, *resumed, *shutdown]
    for message in sent:
        check(message, "StreamMessage")
    assert {m["event"] for m in sent} == set(SCHEMAS["StreamMessage"]["properties"]["event"]["enum"])


def test_a_races_stream_sends_what_race_stream_message_says(client: httpx.Client, ann: Player) -> None:
    race = create_race(ann, ruleset="classic", deal={"pool": 3}, maxEntrants=2)
    running = start(ann, race["id"]).json()
    play(ann, game_of(running, ann), [{"type": "resign"}])  # its only game ends: the race finishes
    sent = [*stream(client, f"/races/{race['id']}/stream"), *messages(SHUTDOWN.decode())]
    assert [m["event"] for m in sent] == ["race", "end", "shutdown"]
    for message in sent:
        check(message, "RaceStreamMessage")
    assert {m["event"] for m in sent} == set(SCHEMAS["RaceStreamMessage"]["properties"]["event"]["enum"])


def test_the_check_refuses_what_the_document_does_not_say() -> None:
    progress = {"event": "analysis", "id": "5", "data": json.dumps({"status": "done", "progress": {"done": 1}})}
    assert problems(json.loads(progress["data"]), {"$ref": "#/components/schemas/AnalysisView"})
    assert problems({"event": "progress", "data": "{}"}, SCHEMAS["StreamMessage"])
    assert problems({"event": "end", "data": "{}", "size": "1"}, SCHEMAS["StreamMessage"])
    assert problems({"status": "done", "progress": {"done": 1, "total": 1}, "more": 1},
                    SCHEMAS["StreamMessage"]["properties"]["data"]["contentSchema"]["anyOf"][2])  # fmt: skip
