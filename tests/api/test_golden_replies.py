"""The golden replies: every endpoint's replies, as the first API version gave them, still given.

``tests/api/golden_walk.walk`` takes the same walk through every endpoint on every run; its
exchanges were recorded once (``tests/api/golden/<version>.json``) and each run compares what
the server says now with them. A recorded member must still be there with the same value (an
object may gain members: additive fields are allowed in a version, and listed in its changelog);
a list keeps its length; a status, and each recorded header, stay the same. An exchange marked
``shape`` compares JSON types, not values.

``GOLDEN_RECORD=<version> pytest tests/api/test_golden_replies.py`` writes that version's file: only
once, when the version ships, never to make a changed reply of a released version pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.http.versions import OLDEST

from .conftest import Clock
from .golden_walk import walk

GOLDEN = Path(__file__).parent / "golden"
RECORDED_VERSIONS = ["2026-12-04", "2026-12-05"]
"""The versions with a recorded walk: each version's file is recorded once, when it ships."""


def differences(recorded: Any, now: Any, where: str = "$") -> list[str]:
    """Where ``now`` breaks ``recorded``: a member gone or changed, a list of another length."""
    if isinstance(recorded, dict):
        if not isinstance(now, dict):
            return [f"{where}: an object became {type(now).__name__}"]
        found = []
        for key, value in recorded.items():
            if key not in now:
                found.append(f"{where}.{key}: gone")
            else:
                found += differences(value, now[key], f"{where}.{key}")
        return found
    if isinstance(recorded, list):
        if not isinstance(now, list) or len(now) != len(recorded):
            return [f"{where}: {len(recorded)} items became {now!r:.200}"]
        pairs = enumerate(zip(recorded, now, strict=True))
        return [d for index, (r, n) in pairs for d in differences(r, n, f"{where}[{index}]")]
    return [] if recorded == now else [f"{where}: {recorded!r:.200} became {now!r:.200}"]


@pytest.mark.parametrize("version", RECORDED_VERSIONS)
def test_every_recorded_reply_is_still_given(clocked: httpx.Client, clock: Clock, version: str) -> None:
    """The first version's walk sends no ``Api-Version`` (the default, as its clients did); a later
    version's names it on every request."""
    recorded_file = GOLDEN / f"{version}.json"
    seen = [exchange.as_json() for exchange in walk(clocked, clock, None if version == OLDEST.name else version)]
    if os.environ.get("GOLDEN_RECORD") == version:
        recorded_file.write_text(json.dumps(seen, indent=1, ensure_ascii=False) + "\n")
    recorded = json.loads(recorded_file.read_text())
    assert [e["request"] for e in seen] == [e["request"] for e in recorded], "the walk makes other requests now"
    broken = [f"{r['name']} ({r['request']}): {d}" for r, s in zip(recorded, seen, strict=True)
              for d in differences({k: r[k] for k in ("status", "headers", "body")},
                                   {k: s[k] for k in ("status", "headers", "body")})]
    assert not broken, "\n".join(broken)


def test_the_comparison_finds_a_changed_reply() -> None:
    recorded = {"status": 200, "body": {"game": {"status": "playing", "moveCount": 2}, "events": [1, 2]}}
    assert differences(recorded, {"status": 200, "body": {"game": {"status": "playing", "moveCount": 2, "new": 1},
                                                          "events": [1, 2]}}) == []
    assert differences(recorded, {"status": 200, "body": {"game": {"gameStatus": "playing", "moveCount": 2},
                                                          "events": [1, 2]}}) == ["$.body.game.status: gone"]
    assert differences(recorded, {"status": 201, "body": {"game": {"status": "playing", "moveCount": 2},
                                                          "events": [1]}}) == ["$.status: 200 became 201",
                                                                               "$.body.events: 2 items became [1]"]
